//! The generic lease layer, on every configured backend.
mod common;

#[test]
fn every_backend_that_ci_requires_is_compiled_in() {
    let compiled = [
        cfg!(feature = "postgres"),
        cfg!(feature = "mysql"),
        cfg!(feature = "sqlite"),
    ];
    if std::env::var_os(common::REQUIRE_ALL_BACKENDS).is_some() {
        assert!(
            compiled.iter().all(|&on| on),
            "{} requires every backend: run with --all-features",
            common::REQUIRE_ALL_BACKENDS
        );
    }
}

#[cfg(feature = "postgres")]
mod postgres {
    use crate::common::postgres as backend;
    include!("scenarios/lease.rs");
    include!("scenarios/lease_postgres.rs");
}

#[cfg(feature = "mysql")]
mod mysql {
    use crate::common::mysql as backend;
    include!("scenarios/lease.rs");
    include!("scenarios/lease_mysql.rs");
    include!("scenarios/lease_mysql_failed_reads.rs");
}

#[cfg(feature = "sqlite")]
mod sqlite {
    use crate::common::sqlite as backend;
    include!("scenarios/lease.rs");
}

// The scenario files this binary includes, declared for rustfmt alone and never compiled: rustfmt
// does not follow `include!`, so `cargo fmt` formats and checks them through this declaration.
#[cfg(any())]
mod scenarios {
    mod lease;
    mod lease_mysql;
    mod lease_mysql_failed_reads;
    mod lease_postgres;
}
