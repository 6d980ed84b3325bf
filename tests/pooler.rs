//! The lease layer, the keeper and the agent locks through PgBouncer in transaction mode (at
//! `PGBOUNCER_DATABASE_URL`), whose pooled connections carry `PgTransactionPooling`: the shared
//! scenarios, each statement on whichever server connection the pooler picks.
//!
//! Its own test binary: it shares the database of the PostgreSQL tests, whose tables it makes
//! anew, and cargo runs test binaries one after the other.
mod common;

#[cfg(feature = "postgres")]
mod lease {
    use crate::common::pooler as backend;
    include!("scenarios/lease.rs");
}

#[cfg(feature = "postgres")]
mod keeper {
    use crate::common::pooler as backend;
    include!("scenarios/keeper.rs");
}

#[cfg(all(feature = "postgres", feature = "agent"))]
mod agent {
    use crate::common::pooler as backend;
    include!("scenarios/agent.rs");
}
