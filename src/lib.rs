//! Leases and locks held in ordinary rows of a Diesel-managed database.
//!
//! Several processes share work and hold locks through three columns of any table: who holds
//! the row (`owner`), which claim this is (`claim_token`) and since when (`claimed_at`). The names
//! are the table's own; [`claim_lease!`] maps them. Everything the library writes or compares is
//! timed by the **database's clock**, never the application's, so nodes whose clocks or session
//! time zones disagree still agree on who holds what.
//!
//! * A claim is one conditional `UPDATE`: [`ClaimLease::taken`] goes into the same `.set(..)` as the
//!   caller's own changes, and [`ClaimLease::claimable`] into its `.filter(..)`. Whether it won is
//!   read from that statement ([`GetIfWonDsl::get_if_won`]), never from an earlier read.
//! * Renewals and releases are guarded by the claim's token ([`ClaimLease::held_by`]), so a holder
//!   whose lease was taken over can change nothing.
//! * Nothing is held between calls: no advisory lock, no open transaction, no pinned connection.
//! * [`update`] is `diesel::update` prepared once per connection, for statements whose SQL their
//!   type fixes (every lease changeset and predicate); `diesel::update` works as well.
//!
//! ```
//! # include!("doctest_setup.rs");
//! use diesel::prelude::*;
//! use diesel_lease::prelude::*;
//!
//! # fn main() -> Result<(), diesel_lease::Error> {
//! # let conn = &mut jobs_connection()?;
//! let lease = Lease::from_secs(30)?;
//! let claim = Claim::new("worker-1")?;
//!
//! // Claim job 1 and mark it running, in one statement; get the row back only if this claim won.
//! let job: Option<Job> = diesel_lease::update(jobs::table.find(1).filter(jobs::table.claimable(lease)))
//!     .set((jobs::table.taken(&claim), jobs::status.eq("running")))
//!     .get_if_won(&claim, conn)?;
//! assert_eq!(job.map(|job| job.status), Some("running".to_owned()));
//!
//! // A second worker loses while the lease is fresh.
//! let rival = Claim::new("worker-2")?;
//! let lost: Option<Job> = diesel_lease::update(jobs::table.find(1).filter(jobs::table.claimable(lease)))
//!     .set(jobs::table.taken(&rival))
//!     .get_if_won(&rival, conn)?;
//! assert!(lost.is_none());
//!
//! // Only the holder can finish the job; the guard is its token.
//! let finished = diesel_lease::update(jobs::table.find(1).filter(jobs::table.held_by(claim.token())))
//!     .set((jobs::table.released(), jobs::status.eq("done")))
//!     .execute(conn)?;
//! assert_eq!(finished, 1);
//! # Ok(())
//! # }
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs, missing_debug_implementations, unreachable_pub)]
#![warn(clippy::unwrap_used, clippy::expect_used)]

pub mod agent;
mod claim;
mod claim_lease;
mod clock;
mod error;
mod get_if_won;
mod lease;
pub mod sql_types;
mod update;

#[cfg(feature = "mysql")]
pub mod mysql;
#[cfg(feature = "postgres")]
pub mod pg;
#[cfg(feature = "sqlite")]
pub mod sqlite;

pub use claim::Claim;
pub use claim_lease::{
    ClaimLease, Claimable, Fresh, HeldBy, Outlived, Released, Renewed, RenewedAgo, Taken, TakenAgo,
    Unclaimed,
};
pub use clock::{Ago, DatabaseClock, Now, Null, TimestampOn};
pub use error::Error;
pub use get_if_won::{ClaimingStatement, GetIfWonDsl, ReportsWinner};
pub use lease::{Age, Lease};
pub use update::{
    update, IncompleteUpdate, NoReturning, ReturningAll, SupportsReturning, Update, UpdateOf,
};

#[doc(hidden)]
pub use diesel as __diesel;

/// The README's examples, compiled and run as doctests so they cannot rot.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

/// What a table author imports: the trait, its value types and the winner check.
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
    pub use crate::{claim_lease, Age, Claim, ClaimLease, GetIfWonDsl, Lease};
}
