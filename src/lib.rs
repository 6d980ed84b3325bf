//! Leases and locks held in ordinary rows of a Diesel-managed database.
//!
//! Several processes share work and hold locks through three columns of any table: who holds
//! the row (`owner`), which claim this is (`claim_token`) and since when (`claimed_at`). The names
//! are the table's own; [`claim_lease!`] maps them. Everything the library writes or compares is
//! timed by the **database's clock**, never the application's, so nodes whose clocks or session
//! time zones disagree still agree on who holds what.
//!
//! * A claim is one conditional `UPDATE` that sets the claim itself: [`ClaimLease::claim_row`]
//!   takes one row by its key, [`ClaimLease::claim_batch`] the next due rows, each with the
//!   caller's own conditions and changes in the same statement. Whether it won is read from that
//!   statement (`RETURNING`, or the matched rows on MySQL), never from an earlier read, and the
//!   outcome carries the claim (owner and token) with the rows it won.
//! * Renewals and releases are guarded by the claim's token ([`ClaimLease::held_by`],
//!   [`ClaimLease::release_rows`]), so a holder whose lease was taken over can change nothing.
//! * Nothing is held between calls: no advisory lock, no open transaction, no pinned connection.
//! * The changesets and predicates ([`ClaimLease::taken`], [`ClaimLease::claimable`], ..) stay
//!   available for statements composed by hand; [`update`] is `diesel::update` prepared once per
//!   connection when its SQL is fixed by its type.
//! * [`LeaseColumns`] writes the diesel migration that adds the lease columns, and the token's
//!   index, to an existing table, typed for the backend.
//!
//! ```
//! # include!("doctest_setup.rs");
//! use diesel::prelude::*;
//! use diesel_lease::prelude::*;
//!
//! # fn main() -> Result<(), diesel_lease::Error> {
//! # let conn = &mut jobs_connection()?;
//! let lease = Lease::from_secs(30)?;
//!
//! // Claim job 1 and mark it running, in one statement.
//! let outcome: Claimed<Job, _, _> = jobs::table
//!     .claim_row(1, lease)
//!     .set(jobs::status.eq("running"))
//!     .by(Claim::new("worker-1")?, conn)?;
//! let won = outcome.won().expect("an unclaimed job is claimable");
//!
//! // A second worker is refused while the lease is fresh, and can ask why.
//! let rival: Claimed<Job, _, _> = jobs::table.claim_row(1, lease).by(Claim::new("worker-2")?, conn)?;
//! let Claimed::Refused(refused) = rival else { panic!("the lease is fresh") };
//! assert!(matches!(refused.why(conn)?, Refusal::Held(holder) if holder.owner == "worker-1"));
//!
//! // Only the holder can finish the job; the guard is its token.
//! let finished = jobs::table
//!     .release_rows(won.claim(), vec![1_i64])
//!     .set(jobs::status.eq("done"))
//!     .run(conn)?;
//! assert_eq!(finished, [1]);
//! # Ok(())
//! # }
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs, missing_debug_implementations, unreachable_pub)]
#![warn(clippy::unwrap_used, clippy::expect_used)]

#[cfg(feature = "agent")]
pub mod agent;
mod batch_update;
mod claim;
mod claim_batch;
mod claim_lease;
mod claim_row;
mod clock;
mod error;
mod events;
mod fence;
mod inspect;
mod keeper;
mod lease;
mod migration;
mod reap;
mod refusal;
mod release_rows;
pub mod sql_types;
mod strategy;
mod update;

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

pub use batch_update::RunsBatchUpdates;
pub use claim::Claim;
pub use claim_batch::{Batch, ClaimBatch};
pub use claim_lease::{
    ClaimLease, Claimable, Fresh, HeldBy, Outlived, Released, Renewed, RenewedAgo, Taken, TakenAgo,
    Unclaimed,
};
pub use claim_row::{ClaimRow, Claimed, Won};
pub use clock::{Ago, ClockMicros, DatabaseClock, MicrosSince, Now, Null, TimestampOn};
pub use error::Error;
pub use fence::{Fence, NoFence};
pub use inspect::{HeldPerOwner, Holders, Holding};
pub use keeper::{
    Keeper, KeeperSettings, KeepsRows, Kept, LeaseLost, ListsRowValues, LossReason, ReadsClock,
    RenewsRows,
};
pub use lease::{Age, Lease};
pub use migration::{LeaseColumns, LeaseDdl, LeaseMigration};
pub use reap::Reap;
pub use refusal::{LeaseHolder, Refusal, Refused};
pub use release_rows::ReleaseRows;
pub use strategy::{Both, NoChanges, RecoversFailedReads, ReleasesRows, ReportsWinners};
pub use update::{
    update, IncompleteUpdate, NoReturning, Returning, SupportsReturning, Update, UpdateOf, Where,
};
/// The statement types the claims build, named in their bounds; not for direct use.
#[doc(hidden)]
pub use {
    batch_update::{
        BatchUpdate, BatchUpdateParts, Candidates, KeyedBatchUpdate, KeyedReadBack, NoOrder,
        OrderBy,
    },
    claim_row::{KeyIs, RowClaimStatement, RowReadBack},
    fence::Incremented,
    inspect::{
        AllHeld, HeldPerOwnerId, HoldersRead, HoldingColumns, ReadHolders, ReadStale, StaleOnly,
    },
    keeper::{KeyAndToken, PairsIn, ReadRenewed, Renewal},
    refusal::{HolderColumns, WhyRefused},
    release_rows::{GuardedUpdate, KeyIn, LockHeldRows, ReleaseStatement},
    strategy::{
        BatchParts, ClaimsBatches, FenceBump, FenceRead, ForUpdate, NoLock, ReturnsSelection,
        SelectWhere, TakenBy,
    },
};

#[doc(hidden)]
pub use diesel as __diesel;

/// The README's examples, compiled and run as doctests so they cannot rot. They run on SQLite
/// and show the agent locks, so they run in builds with both features.
#[cfg(all(doctest, feature = "sqlite", feature = "agent"))]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

/// What a table author imports: the trait, its value types and the outcomes of claims.
///
/// ```
/// use diesel_lease::prelude::*;
///
/// let claim = Claim::new("worker-1")?;
/// let lease = Lease::from_secs(30)?;
/// # let _ = (claim, lease);
/// # Ok::<(), diesel_lease::Error>(())
/// ```
pub mod prelude {
    pub use crate::{claim_lease, Age, Batch, Claim, ClaimLease, Claimed, Lease, Refusal};
}
