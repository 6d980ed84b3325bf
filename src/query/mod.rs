//! The statements diesel-lease builds, and the one verb that runs them.
mod batch_start;
mod changes_given;
mod check_out;
mod claim_batch;
mod claim_row;
mod claimant;
mod cursor;
mod database_time;
mod health;
mod held;
mod holders;
mod holds;
mod kept_by;
mod owned;
mod query_dsl;
mod reap;
mod run;
mod wait_schedule;
mod waiting;

pub use batch_start::{FromCursor, StartsBatch};
pub use changes_given::ChangesGiven;
pub use check_out::CheckOut;
pub use claim_batch::ClaimBatch;
pub use claim_row::ClaimRow;
pub use claimant::{Claimant, NoClaimant};
pub use cursor::ClaimCursor;
pub use database_time::DatabaseTime;
pub use health::Health;
pub use held::{
    Answer, DatedRenewal, Guarded, HeldRows, IncompleteWrite, Releasing, Renewing, WriteKind,
    Writing,
};
pub use holders::{AllHeld, HeldPerOwner, Holders, HoldersFilter, Holding, StaleOnly};
pub use holds::Holds;
pub(crate) use kept_by::{Keeping, KeptBy, ReleaseWrite};
pub use owned::{OwnedRows, OwnerRelease};
pub use query_dsl::LeaseDsl;
pub use reap::Reap;
pub use run::{LeaseQuery, LeaseStatement, RunLeaseDsl};
pub use waiting::Waiting;
