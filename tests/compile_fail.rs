//! What the types reject: each file under tests/compile_fail must fail to compile, with the
//! error its `.stderr` file shows. Diesel's diagnostics list the impls of every backend compiled
//! in, so the snapshots are those of `--all-features`, the build CI tests.
#[cfg(all(feature = "postgres", feature = "mysql", feature = "sqlite"))]
#[test]
fn wrong_use_fails_to_compile() {
    trybuild::TestCases::new().compile_fail("tests/compile_fail/*.rs");
}

/// What the types accept where a user could doubt it: each file under tests/compile_pass
/// compiles (and its empty `main` runs).
#[cfg(all(feature = "postgres", feature = "mysql", feature = "sqlite"))]
#[test]
fn right_use_compiles() {
    trybuild::TestCases::new().pass("tests/compile_pass/*.rs");
}

// The schemas the compile-fail cases `include!`, declared for rustfmt alone and never compiled:
// rustfmt does not follow `include!`, so `cargo fmt` formats and checks them through this
// declaration. The cases themselves are left as written: their `.stderr` snapshots quote them.
#[cfg(any())]
mod compile_fail {
    mod schema {
        mod any_connection;
        mod jobs_and_other;
        mod unmapped;
    }
}
