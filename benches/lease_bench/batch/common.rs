//! What the files of measurement 8 share: its constants, its table, the rows it reads and its
//! workers' tally. A leaf: it imports no other file of the measurement.
use std::time::{Duration, Instant};

use diesel::prelude::*;
use diesel::result::{DatabaseErrorKind, Error as DieselError};
use diesel::sql_types::BigInt;

use crate::shared::{check, Res};

pub use crate::batch_figures::*;

/// The measurement's number, in `--only` and in docs/benchmarks.md.
pub const SECTION: u32 = crate::measurements::BATCH;
/// How much longer than one slice the library would take to drain a cell's queue, at the rate
/// of its warm-up (within the plan's bounds): the slice, not the queue, ends most samples.
pub const QUEUE_SLACK: f64 = 1.25;

diesel::table! {
    use diesel::sql_types::*;
    use diesel_lease::sql_types::UtcTimestamp;

    /// The queue of measurement 8.
    bench_jobs (id) {
        id -> BigInt,
        status -> Text,
        owner -> Nullable<Text>,
        claim_token -> Nullable<Text>,
        claimed_at -> Nullable<UtcTimestamp>,
    }
}

diesel_lease::claim_lease!(bench_jobs);

/// A job, as `claim_row` and the bare changesets read it back.
#[derive(Debug, Queryable)]
#[diesel(table_name = bench_jobs)]
#[allow(dead_code)] // read back to be decoded, as a caller would
pub struct JobRow {
    pub id: i64,
    pub status: String,
    pub owner: Option<String>,
    pub claim_token: Option<String>,
    pub claimed_at: Option<chrono::DateTime<chrono::Utc>>,
}

/// A job's key, as hand-written SQL reads it.
#[derive(QueryableByName)]
pub struct Id {
    #[diesel(sql_type = BigInt)]
    id: i64,
}

pub fn ids(rows: Vec<Id>) -> Vec<i64> {
    rows.into_iter().map(|row| row.id).collect()
}

/// A claim that lost a write conflict (a deadlock victim) claimed nothing, as the library says
/// of its own (it runs outside any transaction of the caller's).
pub fn lost_conflict_claims_nothing(claimed: QueryResult<Vec<Id>>) -> QueryResult<Vec<i64>> {
    match claimed {
        Err(DieselError::DatabaseError(DatabaseErrorKind::SerializationFailure, _)) => {
            Ok(Vec::new())
        }
        other => other.map(ids),
    }
}

/// How a worker claims its jobs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Way {
    /// `claim_batch`, then the batch's release.
    Library = 0,
    /// The same SQL by hand, prepared once.
    Hand = 1,
    /// `SELECT id .. LIMIT n`, then one conditional `UPDATE` per id with the lease changesets;
    /// the jobs won are finished by the hand-written release.
    Naive = 2,
}

/// What workers did: jobs finished, claims that found their job taken, claims that came back
/// empty while jobs were still queued (their rows locked by other workers' claims).
#[derive(Debug, Clone, Copy, Default)]
pub struct Tally {
    pub finished: u64,
    pub lost: u64,
    pub empty: u64,
}

impl std::ops::AddAssign for Tally {
    fn add_assign(&mut self, other: Self) {
        self.finished += other.finished;
        self.lost += other.lost;
        self.empty += other.empty;
    }
}

/// Runs `claim` on rows 1, 2, .. (up to `rows`) for `slice` at most: the mean time of one claim
/// in microseconds, and the last row claimed. Row 1 is claimed first, untimed.
pub fn micros_per_claim(
    slice: Duration,
    rows: i64,
    mut claim: impl FnMut(i64) -> Res<()>,
) -> Res<(f64, i64)> {
    claim(1)?;
    let start = Instant::now();
    let mut id = 1;
    while id < rows && start.elapsed() < slice {
        id += 1;
        claim(id)?;
    }
    check(id > 1, "no row left to claim")?;
    Ok((start.elapsed().as_secs_f64() * 1e6 / (id - 1) as f64, id))
}
