//! What a keeper has done, for operators: its rounds and how late they started, the rows it
//! renewed and lost, its last round's latency, and how near a kept lease came to its trust
//! deadline. Pure bookkeeping: every reading of the monotonic clock is passed in, so that it is
//! tested on a fake clock.
use std::fmt;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::LossReason;

/// A snapshot of what a [`Keeper`](crate::Keeper) has done since it started: made by
/// [`Keeper::stats`](crate::Keeper::stats), plain numbers to log or export to any metrics
/// system (no metrics dependency), and emitted as the fields of a `tracing` event after each
/// round and when the keeper stops (feature `tracing`).
///
/// * A round is **late** when it starts more than a tenth of the renewal interval after its
///   time: the previous round took longer than the interval (a slow database, a pool with no
///   connection free) or the thread was not scheduled. Late rounds eat into the margin.
/// * A row **passed over** was locked by another transaction (a worker's own transaction on its
///   job row, left open) when a round came: the round renewed the other rows and left it, and
///   its claim is not confirmed until a round renews it, lost if none does before the trust
///   deadline. Keep transactions on kept rows short.
/// * The **smallest margin** is how near a kept lease came to its trust deadline: at each
///   confirmed renewal after the first, how long the keeper would still have trusted the lease
///   without it. Nearing zero, leases are about to be given up: renew more often, or look at the
///   database's latency.
///
/// ```
/// use std::time::Duration;
/// use diesel_lease::KeeperStats;
///
/// let stats = KeeperStats::default();
/// assert_eq!(stats.rounds, 0);
/// assert_eq!(stats.rows_lost(), 0);
/// assert_eq!(stats.smallest_margin, None);
/// assert_eq!(
///     stats.to_string(),
///     "0 rounds (0 late, at most 0ns late), 0 renewal statements (0 failed, 0 of them conflicts), \
///      0 rows renewed, 0 passed over (locked), \
///      0 rows lost (0 taken over, 0 unconfirmed, 0 past the longest hold)"
/// );
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct KeeperStats {
    /// The rounds of renewals made.
    pub rounds: u64,
    /// The rounds that started late: more than a tenth of the renewal interval after their time.
    pub late_rounds: u64,
    /// The latest any round started, past its time.
    pub most_late: Duration,
    /// The renewal statements sent: one per table and round (and 4,096 rows), and a claim's
    /// first as it is kept.
    pub renewal_statements: u64,
    /// The renewals that could not be made (a database error, no pool connection in time):
    /// their claims' trust deadlines stood.
    pub failed_renewals: u64,
    /// Of the failed renewals, those that lost a write conflict (a deadlock, a serialization or
    /// Galera certification failure): a rate operators may want apart, since it says the
    /// keeper's rows are contended rather than the database unreachable. Also counted
    /// process-wide by [`LostConflicts::since_start`](crate::LostConflicts::since_start).
    pub renewal_conflicts: u64,
    /// The rows renewals found still held, and renewed.
    pub rows_renewed: u64,
    /// Rows a round passed over because another transaction held them locked: still held by
    /// their claim, not renewed that round (a claim with such a row is not confirmed, and is
    /// lost once its trust deadline passes).
    pub rows_passed_over: u64,
    /// Rows lost because a renewal found them no longer held by their claim.
    pub rows_taken_over: u64,
    /// Rows lost because no renewal was confirmed within the lease less the margin.
    pub rows_unconfirmed: u64,
    /// Rows given up because the longest hold passed.
    pub rows_past_longest_hold: u64,
    /// How long the last round that renewed anything took, from its start to its last
    /// renewal's answer.
    pub last_round: Option<Duration>,
    /// The least time left before a kept lease's trust deadline, at any confirmed renewal
    /// after a claim's first.
    pub smallest_margin: Option<Duration>,
}

impl KeeperStats {
    /// The rows lost, for every reason.
    ///
    /// ```
    /// let stats = diesel_lease::KeeperStats::default();
    /// assert_eq!(stats.rows_lost(), 0);
    /// ```
    pub fn rows_lost(&self) -> u64 {
        self.rows_taken_over + self.rows_unconfirmed + self.rows_past_longest_hold
    }
}

impl fmt::Display for KeeperStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} rounds ({} late, at most {:?} late), {} renewal statements ({} failed, {} of them \
             conflicts), {} rows renewed, {} passed over (locked), {} rows lost ({} taken over, \
             {} unconfirmed, {} past the longest hold)",
            self.rounds,
            self.late_rounds,
            self.most_late,
            self.renewal_statements,
            self.failed_renewals,
            self.renewal_conflicts,
            self.rows_renewed,
            self.rows_passed_over,
            self.rows_lost(),
            self.rows_taken_over,
            self.rows_unconfirmed,
            self.rows_past_longest_hold,
        )?;
        if let Some(last_round) = self.last_round {
            write!(f, ", last round {last_round:?}")?;
        }
        if let Some(margin) = self.smallest_margin {
            write!(f, ", smallest margin {margin:?}")?;
        }
        Ok(())
    }
}

/// A keeper's running tally, shared by its thread, its tables' renewals and the states of the
/// claims it keeps (a loss may be found by the work's own check).
#[derive(Debug, Default)]
pub(super) struct Tally {
    stats: Mutex<KeeperStats>,
}

impl Tally {
    /// The numbers, locked briefly; poisoned, they are still sound.
    fn stats(&self) -> MutexGuard<'_, KeeperStats> {
        self.stats
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// A copy of the numbers now.
    pub(super) fn snapshot(&self) -> KeeperStats {
        self.stats().clone()
    }

    /// A round due at `due` started at `started`, with rounds due every `every`.
    pub(super) fn round_started(&self, due: Instant, started: Instant, every: Duration) {
        let late = started.saturating_duration_since(due);
        let mut stats = self.stats();
        stats.most_late = stats.most_late.max(late);
        if late > every / 10 {
            stats.late_rounds += 1;
        }
    }

    /// A round that started at `started` ended at `ended`, having sent `statements` renewals;
    /// its latency is kept when it sent any (a round with nothing to renew says nothing of the
    /// database).
    pub(super) fn round_ended(&self, started: Instant, ended: Instant, statements: usize) {
        let mut stats = self.stats();
        stats.rounds += 1;
        stats.renewal_statements += statements as u64;
        if statements > 0 {
            stats.last_round = Some(ended.saturating_duration_since(started));
        }
    }

    /// A renewal outside the rounds (a claim's first, as it is kept) sent `statements`.
    pub(super) fn statements_sent(&self, statements: usize) {
        self.stats().renewal_statements += statements as u64;
    }

    /// A renewal found `rows` rows still held; `margins` are how long the keeper would still have
    /// trusted each claim's lease without it.
    pub(super) fn renewed(&self, rows: usize, margins: impl IntoIterator<Item = Duration>) {
        let mut stats = self.stats();
        stats.rows_renewed += rows as u64;
        for margin in margins {
            stats.smallest_margin = Some(stats.smallest_margin.map_or(margin, |m| m.min(margin)));
        }
    }

    /// A round passed over `rows` rows that another transaction held locked.
    pub(super) fn passed_over(&self, rows: usize) {
        self.stats().rows_passed_over += rows as u64;
    }

    /// A renewal failed; `conflict` when it lost a write conflict.
    pub(super) fn failed(&self, conflict: bool) {
        let mut stats = self.stats();
        stats.failed_renewals += 1;
        stats.renewal_conflicts += u64::from(conflict);
    }

    /// `rows` rows were lost, for `reason`.
    pub(super) fn lost(&self, rows: usize, reason: LossReason) {
        let mut stats = self.stats();
        let rows = rows as u64;
        match reason {
            LossReason::TakenOver => stats.rows_taken_over += rows,
            LossReason::Unconfirmed => stats.rows_unconfirmed += rows,
            LossReason::LongestHold => stats.rows_past_longest_hold += rows,
            LossReason::Released => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::Tally;
    use crate::keeper::LossReason;
    use crate::monotonic;

    fn at(start: Instant, millis: u64) -> Instant {
        start + Duration::from_millis(millis)
    }

    #[test]
    fn a_round_is_late_past_a_tenth_of_the_interval_and_the_latest_is_kept() {
        let (tally, start) = (Tally::default(), monotonic::instant());
        let every = Duration::from_secs(1);
        tally.round_started(at(start, 0), at(start, 100), every);
        assert_eq!(tally.snapshot().late_rounds, 0, "a tenth late is on time");
        tally.round_started(at(start, 1_000), at(start, 1_350), every);
        tally.round_started(at(start, 2_000), at(start, 2_101), every);
        let stats = tally.snapshot();
        assert_eq!(stats.late_rounds, 2);
        assert_eq!(stats.most_late, Duration::from_millis(350));
    }

    #[test]
    fn a_round_started_early_is_not_late() {
        let (tally, start) = (Tally::default(), monotonic::instant());
        tally.round_started(at(start, 500), at(start, 0), Duration::from_secs(1));
        assert_eq!(tally.snapshot().most_late, Duration::ZERO);
    }

    #[test]
    fn rounds_count_their_statements_and_the_last_ones_latency() {
        let (tally, start) = (Tally::default(), monotonic::instant());
        tally.round_ended(at(start, 0), at(start, 40), 2);
        tally.round_ended(at(start, 1_000), at(start, 1_007), 1);
        tally.round_ended(at(start, 2_000), at(start, 2_000), 0);
        let stats = tally.snapshot();
        assert_eq!((stats.rounds, stats.renewal_statements), (3, 3));
        assert_eq!(
            stats.last_round,
            Some(Duration::from_millis(7)),
            "a round with nothing to renew keeps the last latency"
        );
    }

    #[test]
    fn the_smallest_margin_is_the_least_of_all_confirmed_renewals() {
        let tally = Tally::default();
        tally.renewed(3, [Duration::from_secs(5), Duration::from_secs(2)]);
        tally.renewed(1, []);
        tally.renewed(2, [Duration::from_secs(4)]);
        let stats = tally.snapshot();
        assert_eq!(stats.rows_renewed, 6);
        assert_eq!(stats.smallest_margin, Some(Duration::from_secs(2)));
    }

    #[test]
    fn losses_are_counted_in_rows_by_reason_and_a_release_is_no_loss() {
        let tally = Tally::default();
        tally.lost(2, LossReason::TakenOver);
        tally.lost(3, LossReason::Unconfirmed);
        tally.lost(1, LossReason::LongestHold);
        tally.lost(9, LossReason::Released);
        tally.failed(false);
        tally.failed(true);
        let stats = tally.snapshot();
        assert_eq!(
            (
                stats.rows_taken_over,
                stats.rows_unconfirmed,
                stats.rows_past_longest_hold
            ),
            (2, 3, 1)
        );
        assert_eq!(
            (
                stats.rows_lost(),
                stats.failed_renewals,
                stats.renewal_conflicts
            ),
            (6, 2, 1)
        );
    }
}
