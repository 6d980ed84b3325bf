//! A lease table's health (`LeaseDsl::health`), on every configured backend: the readings each
//! backend has, a transaction left open warned of and the warning gone once it ends, and on
//! PostgreSQL the HOT updates of the table the lease columns' migration writes.
#[macro_use]
mod common;

on_every_backend! {
    all: {
        #[allow(dead_code)]
        mod support {
            use super::backend;
            include!("scenarios/support.rs");
        }
        use support::*;

        include!("scenarios/health.rs");
    }
    postgres: {
        include!("scenarios/health_open_transaction.rs");
        include!("scenarios/health_postgres.rs");
    }
    mysql: {
        include!("scenarios/health_open_transaction.rs");
        include!("scenarios/health_mysql.rs");
    }
    sqlite: {
        include!("scenarios/health_sqlite.rs");
    }
}

// The scenario files this binary includes, declared for rustfmt alone and never compiled: rustfmt
// does not follow `include!`, so `cargo fmt` formats and checks them through this declaration.
#[cfg(any())]
mod scenarios {
    mod health;
    mod health_mysql;
    mod health_open_transaction;
    mod health_postgres;
    mod health_sqlite;
}
