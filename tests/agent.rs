//! The agent turn and user locks, on every configured backend.
#![cfg(feature = "agent")]
mod common;

#[cfg(feature = "postgres")]
mod postgres {
    use crate::common::postgres as backend;
    include!("scenarios/agent.rs");
    include!("scenarios/agent_postgres.rs");
}

#[cfg(feature = "mysql")]
mod mysql {
    use crate::common::mysql as backend;
    include!("scenarios/agent.rs");
    include!("scenarios/agent_mysql.rs");
}

#[cfg(feature = "sqlite")]
mod sqlite {
    use crate::common::sqlite as backend;
    include!("scenarios/agent.rs");
}

// The scenario files this binary includes, declared for rustfmt alone and never compiled: rustfmt
// does not follow `include!`, so `cargo fmt` formats and checks them through this declaration.
#[cfg(any())]
mod scenarios {
    mod agent;
    mod agent_mysql;
    mod agent_postgres;
}
