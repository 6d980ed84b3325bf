//! What the types reject: each file under tests/compile_fail must fail to compile, with the
//! error its `.stderr` file shows. Diesel's diagnostics list the impls of every backend compiled
//! in, so the snapshots are those of `--all-features`, the build CI tests.
#[cfg(all(feature = "postgres", feature = "mysql", feature = "sqlite"))]
#[test]
fn wrong_use_fails_to_compile() {
    trybuild::TestCases::new().compile_fail("tests/compile_fail/*.rs");
}
