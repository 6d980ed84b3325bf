//! Waits for a lease, a row's and a batch's, on every configured backend.
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

        include!("scenarios/wait.rs");
        include!("scenarios/wait_race.rs");
        include!("scenarios/wait_pool.rs");
    }
}

// The scenario files this binary includes, declared for rustfmt alone and never compiled: rustfmt
// does not follow `include!`, so `cargo fmt` formats and checks them through this declaration.
#[cfg(any())]
mod scenarios {
    mod wait;
    mod wait_pool;
    mod wait_race;
}
