//! What the types accept where a user could doubt it: each file under tests/compile_pass
//! compiles (and its empty `main` runs).
#[cfg(all(feature = "postgres", feature = "sqlite"))]
#[test]
fn right_use_compiles() {
    trybuild::TestCases::new().pass("tests/compile_pass/*.rs");
}
