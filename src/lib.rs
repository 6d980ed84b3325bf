//! Leases and locks held in ordinary rows of a Diesel-managed database.
//!
//! Several processes share work and hold locks through three columns of any table: who holds
//! the row (`owner`), which claim this is (`claim_token`) and since when (`claimed_at`). The
//! names are the table's own; [`claim_lease!`] maps them. Everything the library writes or
//! compares is timed by the **database's clock**, never the application's, so nodes whose clocks
//! disagree still agree on who holds what.
//!
//! * A claim is one conditional `UPDATE` that sets the claim and your own changes:
//!   [`LeaseDsl::claim_row`] takes one row by its key, [`LeaseDsl::claim_batch`] the next due
//!   rows. Whether it won is read from that statement, never from an earlier read.
//! * The outcome is the holder's handle. Its renewals, writes and releases ([`Holds`], the same
//!   for a row won, a batch and rows named by key) are guarded by the claim's token, so a holder
//!   whose lease was taken over changes nothing, and learns it at once.
//! * Every statement finishes with `.run(conn)`, bounded by one trait, [`LeaseQuery`].
//! * Nothing is held between calls: no advisory lock, no open transaction, no pinned connection.
//! * A [`Keeper`] renews what it keeps; a reap frees rows whose holders are gone;
//!   [`LeaseColumns`] writes the migration that adds the lease columns to a table.
//!
//! Start with the [`guide`]: one chapter per concern, from claiming a row to testing your own
//! tables, every snippet a doctest. [`prelude`] is what a table author imports.
#![forbid(unsafe_code)]
#![warn(missing_docs, missing_debug_implementations, unreachable_pub)]
#![warn(clippy::unwrap_used, clippy::expect_used)]

pub mod backend;
mod claim;
mod claim_index;
mod conflicts;
pub mod dsl;
mod error;
mod events;
pub mod guide;
pub mod health;
mod keeper;
mod lease;
mod migration;
mod monotonic;
mod multi_connection;
mod node;
mod outcome;
mod query;
mod sql;
pub mod sql_types;
mod table;
#[cfg(feature = "testkit")]
pub mod testkit;

// The doctests' shared setup, which they pull in with `include!`, declared for rustfmt alone and
// never compiled as part of the library: `cargo fmt` formats and checks it through this line.
#[cfg(any())]
mod doctest_setup;

#[cfg(feature = "mysql")]
pub mod mysql;
#[cfg(feature = "postgres")]
pub mod pg;
#[cfg(feature = "sqlite")]
pub mod sqlite;

pub use claim::Claim;
pub use claim_index::ClaimIndex;
pub use conflicts::LostConflicts;
pub use error::Error;
pub use health::{HealthThresholds, TableHealth};
pub use keeper::{
    Drained, DrainedTable, Keepable, Keeper, KeeperSettings, KeeperStats, Kept, LeaseLost,
    LossReason,
};
pub use lease::{Age, Lease, OutOfRange};
pub use migration::LeaseColumns;
pub use node::Node;
pub use outcome::{Batch, Claimed, LeaseHolder, Refusal, Refused, Won};
pub use query::{
    CheckOut, ClaimBatch, ClaimCursor, ClaimRow, HeldRows, Holds, LeaseDsl, LeaseQuery, OwnedRows,
    Reap, RunLeaseDsl, Waiting,
};
pub use sql::{now, update, MAX_BATCH_SIZE};
pub use table::{ClaimLease, Fenced, NoFence};
// The crate's own paths to what only `__private` makes public.
pub(crate) use __private::*;

/// What the library's bounds and macros name but users never write: the backend strategy and its
/// plans, the SQL nodes statements are made of, and Diesel itself for the macros' expansions. No
/// part of the API: nothing here is covered by semver.
#[doc(hidden)]
pub mod __private {
    pub use crate::dsl::parts::{ByClaim, Releases, ReturnSelection, SetChanges, Starts};
    pub use crate::keeper::{
        KeeperRelease, KeeperRenewal, KeeperRound, PairRelease, PairRenewal, RenewedRow,
        RoundRenewed,
    };
    pub use crate::outcome::Holder;
    pub use crate::query::{
        AllHeld, Answer, ChangesGiven, Claimant, DatabaseTime, DatedRenewal, FromCursor, Guarded,
        Health, HeldPerOwner, Holders, HoldersFilter, Holding, IncompleteWrite, LeaseStatement,
        NoClaimant, OwnerRelease, Releasing, Renewing, StaleOnly, StartsBatch, WriteKind, Writing,
    };
    pub use crate::table::{
        sql_table_name, BindKey, Claimable, ClaimedAtType, Fence, FenceBump, FenceRead, Fresh,
        HeldBy, IntoKey, KeyType, Outlived, Released, Renewed, RenewedAgo, Taken, TakenAgo,
        TakenBy, TokenIs, Unclaimed,
    };
    pub use diesel;

    /// The SQL nodes every statement is made of.
    pub mod sql {
        pub use crate::sql::after::After;
        pub use crate::sql::batch::BatchUpdate;
        pub use crate::sql::clock::{Ago, ClockMicros, MicrosSince};
        pub use crate::sql::exact::TextIn;
        pub use crate::sql::incremented::Incremented;
        pub use crate::sql::keys::{KeysIn, KeysOf, PairsIn, PairsOf};
        pub use crate::sql::select::{
            CountPerOwner, ForUpdate, ForUpdateByKey, NoLock, PassingLocked, ReadLock, SelectWhere,
            SelectWhereId,
        };
        pub use crate::sql::update::{
            AnyIndex, CachedUpdateOf, IncompleteCachedUpdate, NoReturning, PrimaryKeyAccess,
            ReturningClause, Where,
        };
        pub use crate::sql::*;
    }

    /// What a backend implements to run the statements, and the plans it is handed.
    pub mod backend {
        pub use crate::backend::bounds::{SupportsReturning, TimestampOn};
        pub use crate::backend::ddl::LeaseDdl;
        pub use crate::backend::health::{HealthPlan, ReadsHealth, TableName};
        pub use crate::backend::ops::{
            BatchInOneStatement, BatchParts, BatchPlan, ClaimsBatch, ClaimsRow, HeldWrite,
            ReturnsSelection, RowClaim, WritesHeld,
        };
        pub use crate::backend::reads::{in_no_transaction, read, read_optional};
        pub use crate::backend::runs::{AsMulti, NativeLeaseQuery, RunsStatement};
        pub use crate::backend::*;
    }
}

/// The README's example, compiled and run as a doctest so that it cannot rot. It runs on SQLite.
#[cfg(all(doctest, feature = "sqlite"))]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

/// What a table author imports: the traits whose methods build and run the statements, the
/// values they take, the outcomes and handles they give, the keeper, the bound of generic code
/// ([`LeaseQuery`]), the database's clock ([`now`]) and the largest batch: whatever ordinary
/// code names in a helper's signature.
///
/// ```
/// # include!("doctest_setup.rs");
/// use diesel::prelude::*;
/// use diesel_lease::prelude::*;
///
/// /// Claims the next due jobs, at most `MAX_BATCH_SIZE`, and keeps them.
/// fn take_due(
///     conn: &mut DocConnection,
///     keeper: &Keeper<DocConnection>,
///     worker: &Claim,
///     lease: Lease,
/// ) -> Result<Kept<jobs::table>, diesel_lease::Error> {
///     let batch: Batch<i64, jobs::table> = jobs::table
///         .claim_batch(MAX_BATCH_SIZE, lease)
///         .by(worker)
///         .filter(jobs::status.eq("queued"))
///         .returning(jobs::id)
///         .run(conn)?;
///     keeper.keep(batch.held())
/// }
///
/// /// Finishes what a worker holds: the rows by their keys, guarded by its token.
/// fn finish(held: &HeldRows<jobs::table>, conn: &mut DocConnection) -> Result<usize, diesel_lease::Error> {
///     Ok(held.release().set(jobs::status.eq("done")).run(conn)?.len())
/// }
///
/// /// Whether a row won is still held, by the database's clock.
/// fn still_mine(won: &Won<i64, jobs::table>, conn: &mut DocConnection) -> Result<bool, diesel_lease::Error> {
///     won.renew().run(conn)
/// }
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let pool = jobs_pool()?;
/// let lease = Lease::from_secs(30)?;
/// let keeper = Keeper::start(pool.clone(), KeeperSettings::new(lease))?;
/// let conn = &mut pool.get()?;
/// let kept = take_due(conn, &keeper, &Claim::new("worker-1")?, lease)?;
/// assert_eq!(kept.held().keys(), [1]);
/// let claimed: i64 = jobs::table.filter(jobs::claimed_at.le(now())).count().get_result(conn)?;
/// assert_eq!(claimed, 1, "claimed no later than the database's now");
/// let held = kept.stop_keeping();
/// assert_eq!(finish(&held, conn)?, 1);
/// # diesel::sql_query("INSERT INTO jobs (id, status) VALUES (2, 'queued')").execute(conn)?;
/// # let won = jobs::table.claim_row(2, lease).by(&Claim::new("worker-2")?).returning(jobs::id).run(conn)?;
/// # assert!(still_mine(&won.won().expect("free"), conn)?);
/// # Ok(())
/// # }
/// ```
pub mod prelude {
    #[doc(no_inline)]
    pub use crate::{
        claim_lease, now, Age, Batch, Claim, ClaimLease, Claimed, HeldRows, Holds, Keeper,
        KeeperSettings, Kept, Lease, LeaseDsl, LeaseQuery, Refusal, RunLeaseDsl, Won,
        MAX_BATCH_SIZE,
    };
}
