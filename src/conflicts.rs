//! Write conflicts the library lost and turned into "nothing changed": counted process-wide, so
//! that operators can see a deadlock rate, and told as a `tracing` event (feature `tracing`).
use std::sync::atomic::{AtomicU64, Ordering};

use diesel::result::Error as DieselError;

use crate::Claim;

/// The write conflicts this process lost since it started, by the operation that lost them: a
/// deadlock victim or a Galera certification failure on MySQL/MariaDB (error 1213, whatever the
/// server's language), a serialization failure on PostgreSQL (SQLSTATE 40001). Read by
/// [`LostConflicts::since_start`]; plain numbers to log or export to any metrics system, and each loss is
/// also a `tracing` event at `INFO`, "write conflict lost", with its table (and claim).
///
/// A claim or reap that loses one outside a transaction of yours changed nothing, and answers as
/// a lost race does ("not claimed", nothing reaped): these counts are the only trace it leaves.
/// A keeper's renewal that loses one failed, and is counted here and in
/// [`KeeperStats::renewal_conflicts`](crate::KeeperStats::renewal_conflicts). Inside a
/// transaction of yours a lost conflict is your error, and is not counted. SQLite has no such
/// conflicts: a busy database is [`Error::Busy`](crate::Error::Busy).
///
/// ```
/// let lost = diesel_lease::LostConflicts::since_start();
/// assert_eq!(
///     lost.total(),
///     lost.row_claims + lost.batch_claims + lost.reaps + lost.renewals
/// );
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct LostConflicts {
    /// Claims by key that lost one, and claimed nothing.
    pub row_claims: u64,
    /// Batch claims that lost one, and claimed nothing.
    pub batch_claims: u64,
    /// Reaps that lost one, and reaped nothing.
    pub reaps: u64,
    /// A keeper's renewals that lost one, and failed.
    pub renewals: u64,
}

impl LostConflicts {
    /// The write conflicts this process has lost since it started, counted across every
    /// connection, table and keeper: read it twice and subtract for a rate.
    ///
    /// ```
    /// use diesel_lease::LostConflicts;
    ///
    /// let before = LostConflicts::since_start();
    /// assert!(LostConflicts::since_start().total() >= before.total(), "counts only rise");
    /// ```
    pub fn since_start() -> Self {
        let read = |count: &AtomicU64| count.load(Ordering::Relaxed);
        Self {
            row_claims: read(&COUNTS[Operation::RowClaim as usize]),
            batch_claims: read(&COUNTS[Operation::BatchClaim as usize]),
            reaps: read(&COUNTS[Operation::Reap as usize]),
            renewals: read(&COUNTS[Operation::Renewal as usize]),
        }
    }

    /// The conflicts lost by every operation.
    ///
    /// ```
    /// assert_eq!(diesel_lease::LostConflicts::default().total(), 0);
    /// ```
    pub fn total(&self) -> u64 {
        self.row_claims + self.batch_claims + self.reaps + self.renewals
    }
}

/// The operation that lost a conflict, as counted and named in its event.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Operation {
    RowClaim,
    BatchClaim,
    Reap,
    Renewal,
}

impl Operation {
    fn name(self) -> &'static str {
        match self {
            Operation::RowClaim => "claim by key",
            Operation::BatchClaim => "batch claim",
            Operation::Reap => "reap",
            Operation::Renewal => "keeper renewal",
        }
    }
}

static COUNTS: [AtomicU64; 4] = [
    AtomicU64::new(0),
    AtomicU64::new(0),
    AtomicU64::new(0),
    AtomicU64::new(0),
];

/// A conflict lost by `operation` on `table` (for `claim`, if it has one), with `error`: counted,
/// and told.
pub(crate) fn lost(operation: Operation, table: &str, claim: Option<&Claim>, error: &DieselError) {
    COUNTS[operation as usize].fetch_add(1, Ordering::Relaxed);
    crate::events::emit_conflict_lost(operation.name(), table, claim, error);
}
