//! The agent turn and user locks, on every configured backend.
#[macro_use]
mod common;

on_every_backend! {
    all: {
        include!("scenarios/agent.rs");
        include!("scenarios/agent_ages.rs");
        include!("scenarios/agent_release.rs");
        include!("scenarios/agent_races.rs");
        include!("scenarios/agent_kept.rs");
        include!("scenarios/agent_nodes.rs");
        #[cfg(all(feature = "postgres", feature = "mysql", feature = "sqlite"))]
        include!("scenarios/agent_multi_connection.rs");
    }
    postgres: {
        include!("scenarios/agent_postgres.rs");
    }
    mysql: {
        include!("scenarios/agent_mysql.rs");
    }
}

// The scenario files this binary includes, declared for rustfmt alone and never compiled: rustfmt
// does not follow `include!`, so `cargo fmt` formats and checks them through this declaration.
#[cfg(any())]
mod scenarios {
    mod agent;
    mod agent_ages;
    mod agent_kept;
    mod agent_multi_connection;
    mod agent_mysql;
    mod agent_nodes;
    mod agent_postgres;
    mod agent_races;
    mod agent_release;
}
