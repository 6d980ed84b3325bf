//! Leases and locks held in ordinary rows of a Diesel-managed database.
//!
//! Several processes share work and hold locks through three columns of any table: who holds
//! the row (`owner`), which claim this is (`claim_token`) and since when (`claimed_at`). The names
//! are the table's own; [`claim_lease!`] maps them. Everything the library writes or compares is
//! timed by the **database's clock**, never the application's, so nodes whose clocks or session
//! time zones disagree still agree on who holds what.
//!
//! * A claim is one conditional `UPDATE` that sets the claim itself: [`LeaseDsl::claim_row`]
//!   takes one row by its key (any primary key, composite too), [`LeaseDsl::claim_batch`] the
//!   next due rows, each with the caller's own conditions and changes in the same statement.
//!   Whether it won is read from that statement (`RETURNING`, or the matched rows on MySQL),
//!   never from an earlier read, and the outcome carries the claim (owner and token) with the
//!   rows it won.
//! * The outcome is its holder's handle: renewals, writes and releases ([`Won::renew`],
//!   [`Won::update`], [`Won::release`]) are guarded by the claim's token, so a holder whose
//!   lease was taken over can change nothing, and learns it at once.
//! * Every statement the library builds finishes with `.run(conn)`, bounded by one trait,
//!   [`LeaseQuery`], as Diesel's queries are by `LoadQuery`: code generic over the connection
//!   writes one bound per statement.
//! * Nothing is held between calls: no advisory lock, no open transaction, no pinned connection.
//! * The changesets and predicates ([`ClaimLease::taken`], [`ClaimLease::claimable`], ..) stay
//!   available for statements composed by hand; [`update`] is `diesel::update` prepared once per
//!   connection and SQL text.
//! * [`LeaseColumns`] writes the diesel migration that adds the lease columns, and the token's
//!   index, to an existing table, typed for the backend.
//! * A claim may wait for its lease, within a bound ([`ClaimRow::waiting`],
//!   [`ClaimBatch::waiting`]); a [`Keeper`] renews what it keeps, counts what it did
//!   ([`Keeper::stats`]) and drains it at shutdown ([`Keeper::drain`]); a [`Node`]'s new life
//!   frees what its earlier lives held ([`LeaseDsl::held_by_earlier_lives_of`]); a table's
//!   health is one read ([`LeaseDsl::health`]); the `testkit` feature helps your own tests.
//!
//! ```
//! # include!("doctest_setup.rs");
//! use diesel::prelude::*;
//! use diesel_lease::prelude::*;
//!
//! # fn main() -> Result<(), diesel_lease::Error> {
//! # let conn = &mut jobs_connection()?;
//! let lease = Lease::from_secs(30)?;
//! let worker = Claim::new("worker-1")?;
//!
//! // Claim job 1 and mark it running, in one statement.
//! let outcome = jobs::table
//!     .claim_row(1, lease)
//!     .by(&worker)
//!     .set(jobs::status.eq("running"))
//!     .run::<Job>(conn)?;
//! let won = outcome.won().expect("an unclaimed job is claimable");
//!
//! // A second worker is refused while the lease is fresh, and can ask why.
//! let rival = jobs::table.claim_row(1, lease).by(&Claim::new("worker-2")?).run::<Job>(conn)?;
//! let Claimed::Refused(refused) = rival else { panic!("the lease is fresh") };
//! assert!(matches!(refused.why().run(conn)?, Refusal::Held(holder) if holder.owner == "worker-1"));
//!
//! // Only the holder can finish the job; the guard is its token.
//! assert!(won.release().set(jobs::status.eq("done")).run(conn)?);
//! # Ok(())
//! # }
//! ```
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
pub mod health;
mod keeper;
mod lease;
mod migration;
mod monotonic;
mod multi_connection;
mod node;
mod outcome;
mod query;
pub mod sql;
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

pub use claim::{check_text, Claim};
pub use claim_index::ClaimIndex;
pub use conflicts::{lost_conflicts, LostConflicts};
pub use error::Error;
pub use health::{HealthThresholds, TableHealth};
pub use keeper::{
    Drained, DrainedTable, Keepable, Keeper, KeeperRelease, KeeperRenewal, KeeperRound,
    KeeperSettings, KeeperStats, Kept, KeptRelease, LeaseLost, LossReason, PairRelease,
    PairRenewal, RenewedRow, RoundRenewed,
};
pub use lease::{Age, Lease, OutOfRange};
pub use migration::{LeaseColumns, LeaseMigration};
pub use node::Node;
pub use outcome::{
    Batch, Claimed, FilterNotRead, Holder, LeaseHolder, OutlivedLease, Refusal, Refused, Why, Won,
};
pub use query::{
    AllHeld, Answer, ChangesGiven, CheckOut, ClaimBatch, ClaimRow, Claimant, DatabaseTime,
    DatedRenewal, Guarded, Health, HeldPerOwner, HeldRows, Holders, HoldersFilter, Holding,
    IncompleteWrite, LeaseDsl, LeaseQuery, LeaseStatement, Many, NoClaimant, One, OwnedRows,
    OwnerRelease, Reap, Release, Renewal, RunLeaseDsl, StaleOnly, WaitQuery, Waiting, Write,
    WriteKind,
};
pub use sql::{now, update, MAX_BATCH_SIZE};
pub use table::{
    BindKey, ClaimLease, Claimable, Fence, FenceBump, FenceRead, Fenced, Fresh, HeldBy, IntoKey,
    KeyType, NoFence, Outlived, Released, Renewed, RenewedAgo, Taken, TakenAgo, TakenBy, TokenIs,
    Unclaimed,
};

#[doc(hidden)]
pub use diesel as __diesel;
#[doc(hidden)]
pub use table::sql_table_name as __sql_table_name;

/// The README's examples, compiled and run as doctests so they cannot rot. They run on SQLite
/// and show the agent locks and the task locks, so they run in builds with all three features.
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
/// assert_eq!(kept.held(), [1]);
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
    pub use crate::{
        claim_lease, now, Age, Batch, Claim, ClaimLease, Claimed, HeldRows, Keeper, KeeperSettings,
        Kept, Lease, LeaseDsl, LeaseQuery, Refusal, RunLeaseDsl, Won, MAX_BATCH_SIZE,
    };
}
