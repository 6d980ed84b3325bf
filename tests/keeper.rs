//! The keeper, on every configured backend.
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

        include!("scenarios/keeper.rs");
        include!("scenarios/keeper_release.rs");
        include!("scenarios/keeper_holds.rs");
        include!("scenarios/keeper_batches.rs");
        include!("scenarios/keeper_stats.rs");
        include!("scenarios/draining.rs");
        include!("scenarios/dropping.rs");
    }
    postgres: {
        include!("scenarios/keeper_postgres.rs");
        include!("scenarios/keeper_locked.rs");
    }
    mysql: {
        include!("scenarios/keeper_mysql.rs");
        include!("scenarios/keeper_locked.rs");
    }
}

// The scenario files this binary includes, declared for rustfmt alone and never compiled: rustfmt
// does not follow `include!`, so `cargo fmt` formats and checks them through this declaration.
#[cfg(any())]
mod scenarios {
    mod draining;
    mod dropping;
    mod keeper;
    mod keeper_batches;
    mod keeper_holds;
    mod keeper_locked;
    mod keeper_mysql;
    mod keeper_postgres;
    mod keeper_release;
    mod keeper_stats;
}
