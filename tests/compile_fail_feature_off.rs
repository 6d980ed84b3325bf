//! What a build without a backend's feature rejects: each file under tests/compile_fail_feature_off
//! uses SQLite (Diesel's, which the dev-dependencies turn on) in a build whose diesel-lease
//! `sqlite` feature is off, as CI's PostgreSQL-alone run is, and must fail to compile with the
//! error its `.stderr` file shows.
#[cfg(all(feature = "postgres", not(feature = "sqlite"), not(feature = "mysql")))]
#[test]
fn a_backend_whose_feature_is_off_is_refused_in_words() {
    trybuild::TestCases::new().compile_fail("tests/compile_fail_feature_off/*.rs");
}
