//! The lease columns' generated migration, applied and reverted on every configured backend.
#[macro_use]
mod common;

on_every_backend! {
    all: {
        include!("scenarios/lease_columns.rs");
    }
}

// The scenario files this binary includes, declared for rustfmt alone and never compiled: rustfmt
// does not follow `include!`, so `cargo fmt` formats and checks them through this declaration.
#[cfg(any())]
mod scenarios {
    mod lease_columns;
}
