//! The scheduled-task locks, on every configured backend.
#[macro_use]
mod common;

on_every_backend! {
    all: {
        include!("scenarios/tasks.rs");
        include!("scenarios/tasks_fuzz.rs");
        include!("scenarios/tasks_holds.rs");
        #[cfg(all(feature = "postgres", feature = "mysql", feature = "sqlite"))]
        include!("scenarios/tasks_multi_connection.rs");
    }
}

// The scenario files this binary includes, declared for rustfmt alone and never compiled: rustfmt
// does not follow `include!`, so `cargo fmt` formats and checks them through this declaration.
#[cfg(any())]
mod scenarios {
    mod tasks;
    mod tasks_fuzz;
    mod tasks_holds;
    mod tasks_multi_connection;
}
