//! The lease layer, the keeper, the agent locks, the task locks and the health reading through
//! PgBouncer in transaction mode (at `PGBOUNCER_DATABASE_URL`), whose pooled connections carry
//! `PgTransactionPooling`: the shared scenarios, each statement on whichever server connection
//! the pooler picks, and waits for a lease, which sleep between statements holding no server
//! connection.
//!
//! Its own test binary: it shares the database of the PostgreSQL tests, whose tables it makes
//! anew, and cargo runs test binaries one after the other.
#[macro_use]
mod common;

#[test]
fn every_backend_that_ci_requires_is_configured() {
    common::assert_configured(&[(
        cfg!(feature = "postgres"),
        cfg!(lease_test_pgbouncer),
        "PGBOUNCER_DATABASE_URL",
    )]);
}

#[cfg(all(feature = "postgres", not(lease_test_pgbouncer)))]
#[test]
#[ignore = "PGBOUNCER_DATABASE_URL is not set"]
fn not_configured() {}

/// The jobs table's shared helpers, through the pooler.
#[cfg(all(feature = "postgres", lease_test_pgbouncer))]
#[allow(dead_code)]
mod support {
    use crate::common::pooler as backend;
    include!("scenarios/support.rs");
}

#[cfg(all(feature = "postgres", lease_test_pgbouncer))]
#[path = "scenarios/generic.rs"]
mod generic;

#[cfg(all(feature = "postgres", lease_test_pgbouncer))]
mod lease {
    use crate::common::pooler as backend;
    use crate::support::{self, *};
    include!("scenarios/lease.rs");
    include!("scenarios/lease_holder.rs");
    include!("scenarios/lease_clock.rs");
    include!("scenarios/lease_changes.rs");
    include!("scenarios/lease_refusals.rs");
    include!("scenarios/lease_batch.rs");
    include!("scenarios/lease_reap.rs");
    include!("scenarios/lease_fence.rs");

    mod composite {
        use super::backend;
        include!("scenarios/composite.rs");
        include!("scenarios/composite_held.rs");
        include!("scenarios/composite_races.rs");
    }
}

#[cfg(all(feature = "postgres", lease_test_pgbouncer))]
mod keeper {
    use crate::common::pooler as backend;
    use crate::support::*;
    include!("scenarios/keeper.rs");
    include!("scenarios/keeper_release.rs");
    include!("scenarios/keeper_holds.rs");
    include!("scenarios/keeper_batches.rs");
    include!("scenarios/keeper_stats.rs");
    include!("scenarios/draining.rs");
}

#[cfg(all(feature = "postgres", lease_test_pgbouncer))]
mod agent {
    use crate::common::pooler as backend;
    include!("scenarios/agent.rs");
    include!("scenarios/agent_ages.rs");
    include!("scenarios/agent_release.rs");
    include!("scenarios/agent_races.rs");
    include!("scenarios/agent_kept.rs");
}

#[cfg(all(feature = "postgres", lease_test_pgbouncer))]
mod health {
    use crate::common::pooler as backend;
    use crate::support::*;
    include!("scenarios/health.rs");
}

#[cfg(all(feature = "postgres", lease_test_pgbouncer))]
mod wait {
    use crate::common::pooler as backend;
    use crate::support::*;
    include!("scenarios/wait.rs");
    include!("scenarios/wait_race.rs");
    include!("scenarios/wait_pool.rs");
}

#[cfg(all(feature = "postgres", lease_test_pgbouncer))]
mod tasks {
    use crate::common::pooler as backend;
    include!("scenarios/tasks.rs");
    include!("scenarios/tasks_fuzz.rs");
}
