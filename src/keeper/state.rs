//! The state of one kept claim, shared by the keeper and the work: which rows it still holds,
//! until when a confirmed renewal is trusted, and whether and why its lease is lost. Pure logic:
//! every reading of the process's monotonic clock is passed in, so that it is tested on a fake
//! clock.
use std::collections::HashSet;
use std::hash::Hash;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::stats::Tally;
use super::{KeeperSettings, LeaseLost, LossReason};
use crate::{Claim, Error};

/// What the keeper and the work share of one kept claim.
pub(super) struct ClaimState<K> {
    /// The table's name, for operators.
    table: &'static str,
    claim: Claim,
    settings: KeeperSettings,
    kept_since: Instant,
    /// The end of the shortest hold, by the database's clock in microseconds since the epoch.
    hold_until: Option<i64>,
    /// Held while a statement of this claim runs, so that a renewal and a release never cross
    /// (a renewal landing after the release would report the release as a loss).
    statement: Mutex<()>,
    /// Locked only briefly, never across a statement: `is_held` must stay cheap.
    inner: Mutex<Inner<K>>,
    /// The keeper's tally, which counts the rows this claim loses.
    tally: Arc<Tally>,
}

struct Inner<K> {
    held: Vec<K>,
    lost: Vec<K>,
    reason: Option<LossReason>,
    renewing: bool,
    /// The keys the release changed, once it ran.
    release_outcome: Option<Vec<K>>,
    trusted_until: Instant,
    /// Whether a renewal was ever confirmed: before that, nothing is trusted.
    confirmed: bool,
    /// Handed back to the caller, who finishes, releases or keeps the rows elsewhere.
    handed_back: bool,
    last_error: Option<String>,
    unconfirmed_told: bool,
}

impl<K: Clone + Eq + Hash> ClaimState<K> {
    /// A claim of `keys` kept from `now`. Nothing is trusted until a renewal is confirmed: the
    /// claim may be old already.
    pub(super) fn new(
        table: &'static str,
        claim: Claim,
        keys: Vec<K>,
        settings: KeeperSettings,
        hold_until: Option<i64>,
        now: Instant,
        tally: Arc<Tally>,
    ) -> Self {
        Self {
            table,
            claim,
            settings,
            kept_since: now,
            hold_until,
            statement: Mutex::new(()),
            inner: Mutex::new(Inner {
                held: keys,
                lost: Vec::new(),
                reason: None,
                renewing: true,
                release_outcome: None,
                trusted_until: now,
                confirmed: false,
                handed_back: false,
                last_error: None,
                unconfirmed_told: false,
            }),
            tally,
        }
    }

    pub(super) fn claim(&self) -> &Claim {
        &self.claim
    }

    pub(super) fn settings(&self) -> KeeperSettings {
        self.settings
    }

    /// The end of the shortest hold, by the database's clock.
    pub(super) fn hold_until(&self) -> Option<i64> {
        self.hold_until
    }

    /// The lock that keeps this claim's statements from crossing.
    pub(super) fn statement(&self) -> MutexGuard<'_, ()> {
        lock(&self.statement)
    }

    /// The keys of the rows still held, as of the last renewal.
    pub(super) fn held(&self) -> Vec<K> {
        lock(&self.inner).held.clone()
    }

    /// Whether the claim's rows are to be renewed at `now`: not released, not given up, and not
    /// past the longest hold, which ends its renewals here.
    pub(super) fn to_renew(&self, now: Instant) -> bool {
        let mut inner = lock(&self.inner);
        if !inner.renewing || inner.release_outcome.is_some() {
            return false;
        }
        if inner.held.is_empty() {
            // A claim of no rows (an empty batch) has nothing to renew, and nothing to lose.
            return false;
        }
        if self.past_longest_hold(now) {
            inner.renewing = false;
            inner.reason.get_or_insert(LossReason::LongestHold);
            let rows = inner.held.len();
            drop(inner);
            self.tell_lost(rows, LossReason::LongestHold);
            return false;
        }
        true
    }

    /// A renewal that was sent at `request_start` changed `renewed`, the rows with this claim's
    /// token, and passed over `locked`, rows still with its token that another transaction held
    /// locked: both are still held, and the rest are lost. When nothing was passed over, the
    /// trust runs from the request's start (the lease runs from the database's clock at the
    /// statement, which is no earlier); a row passed over was not renewed, so the trust deadline
    /// stays where it was, and once it has passed the lease is lost, as after a failed renewal.
    pub(super) fn renewed(&self, renewed: &[&K], locked: &[&K], request_start: Instant) {
        let mut inner = lock(&self.inner);
        if !inner.renewing {
            // Given up or released while the renewal ran: a loss is final, and keeps its cause.
            return;
        }
        // A set, so that a claim of many rows is matched in linear time, not quadratic.
        let held: HashSet<&K> = renewed.iter().chain(locked).copied().collect();
        let (still_held, lost): (Vec<K>, Vec<K>) =
            inner.held.drain(..).partition(|key| held.contains(key));
        if !lost.is_empty() {
            self.tell_lost(lost.len(), LossReason::TakenOver);
            inner.lost.extend(lost);
            inner.reason.get_or_insert(LossReason::TakenOver);
        }
        inner.held = still_held;
        if locked.is_empty() {
            inner.trusted_until = request_start + self.settings.trusted_part();
            inner.confirmed = true;
            inner.last_error = None;
        } else {
            inner.last_error = Some(format!(
                "{} rows locked by another transaction, not renewed",
                locked.len()
            ));
            if request_start >= inner.trusted_until {
                self.give_up_unconfirmed(&mut inner);
            }
        }
    }

    /// How long the lease would still be trusted at `at`, a renewal's confirmation, without
    /// that renewal: `None` before the first confirmed renewal, when nothing was trusted yet.
    pub(super) fn margin_at(&self, at: Instant) -> Option<Duration> {
        let inner = lock(&self.inner);
        inner
            .confirmed
            .then(|| inner.trusted_until.saturating_duration_since(at))
    }

    /// A renewal failed with `error` at `now`: the trust deadline stays where it was, and once it
    /// has passed, the lease is lost.
    pub(super) fn unconfirmed(&self, error: &Error, now: Instant) {
        let mut inner = lock(&self.inner);
        inner.last_error = Some(error.to_string());
        if now >= inner.trusted_until {
            self.give_up_unconfirmed(&mut inner);
        }
    }

    /// Renewals stop, with no release: a release failed, and the lease runs out on its own
    /// unless a later release gets through. The rows it still held, for operators.
    pub(super) fn stop_renewing(&self) -> usize {
        let mut inner = lock(&self.inner);
        inner.renewing = false;
        inner.held.len()
    }

    /// The claim is handed back to the caller (`Kept::stop_keeping`): renewals stop, and no
    /// release of the keeper's (a drain, its stop) may touch it any more. Waits for a statement
    /// of the claim in flight; gives back the rows still held.
    pub(super) fn hand_back(&self) -> Vec<K> {
        let _statement = self.statement();
        let mut inner = lock(&self.inner);
        inner.renewing = false;
        inner.handed_back = true;
        inner.held.clone()
    }

    /// Whether the claim was released, or handed back to the caller: nothing for the keeper to
    /// release.
    pub(super) fn is_off_the_keepers_hands(&self) -> bool {
        let inner = lock(&self.inner);
        inner.release_outcome.is_some() || inner.handed_back
    }

    /// The release ran and changed `released`: renewals stop, and nothing is held.
    pub(super) fn mark_released(&self, released: Vec<K>) {
        let mut inner = lock(&self.inner);
        inner.renewing = false;
        inner.held.clear();
        inner.release_outcome = Some(released);
    }

    /// What the release changed, if it ran.
    #[cfg(test)]
    pub(super) fn release_outcome(&self) -> Option<Vec<K>> {
        lock(&self.inner).release_outcome.clone()
    }

    /// Released, or given up: nothing left to renew.
    pub(super) fn is_done(&self) -> bool {
        let inner = lock(&self.inner);
        inner.release_outcome.is_some() || !inner.renewing
    }

    /// Whether the lease is lost at `now`, and if so which rows and why.
    pub(super) fn loss(&self, now: Instant) -> Option<LeaseLost<K>> {
        let mut inner = lock(&self.inner);
        let reason = if let Some(reason) = inner.reason {
            reason
        } else if inner.release_outcome.is_some() {
            LossReason::Released
        } else if inner.held.is_empty() {
            // Nothing held and no loss recorded: a claim of no rows, which cannot lose any. (Rows
            // that were held and lost have their reason recorded, and are told above.)
            return None;
        } else if self.past_longest_hold(now) {
            LossReason::LongestHold
        } else if now >= inner.trusted_until {
            self.give_up_unconfirmed(&mut inner);
            LossReason::Unconfirmed
        } else {
            return None;
        };
        let mut rows = inner.lost.clone();
        if reason != LossReason::TakenOver {
            rows.extend(inner.held.iter().cloned());
        }
        Some(LeaseLost {
            rows,
            reason,
            cause: inner.last_error.clone(),
        })
    }

    /// Past the trust deadline: the lease is lost for good, and renewals stop, so that a renewal
    /// that gets through later never revives a lease the work may have been told it lost.
    /// Operators hear of it once.
    fn give_up_unconfirmed(&self, inner: &mut Inner<K>) {
        inner.renewing = false;
        inner.reason.get_or_insert(LossReason::Unconfirmed);
        if !inner.unconfirmed_told {
            inner.unconfirmed_told = true;
            self.tell_lost(inner.held.len(), LossReason::Unconfirmed);
        }
    }

    /// Operators hear that `rows` rows were lost for `reason`, and the keeper counts them.
    fn tell_lost(&self, rows: usize, reason: LossReason) {
        crate::events::emit_lost(self.table, &self.claim, rows, &reason);
        self.tally.lost(rows, reason);
    }

    fn past_longest_hold(&self, now: Instant) -> bool {
        self.settings.longest_hold().is_some_and(|at_most| {
            // A longest hold past what the clock can count never comes.
            self.kept_since
                .checked_add(at_most)
                .is_some_and(|end| now >= end)
        })
    }
}

/// A mutex's guard; a poisoned mutex holds plain data that is still sound.
pub(super) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    use super::ClaimState;
    use crate::keeper::stats::Tally;
    use crate::keeper::{KeeperSettings, LossReason};
    use crate::monotonic::FakeClock;
    use crate::{Claim, Error, Lease};

    /// A lease of 10 s, renewed every 3 s, trusted for 8 s after a confirmed renewal.
    fn settings() -> Result<KeeperSettings, Error> {
        Ok(KeeperSettings::new(Lease::from_secs(10)?)
            .every(Duration::from_secs(3))
            .margin(Duration::from_secs(2)))
    }

    fn kept(clock: &FakeClock, settings: KeeperSettings) -> Result<ClaimState<i64>, Error> {
        let claim = Claim::new("worker-1")?;
        Ok(ClaimState::new(
            "jobs",
            claim,
            vec![1, 2, 3],
            settings,
            None,
            clock.at(0),
            Arc::default(),
        ))
    }

    fn reason(state: &ClaimState<i64>, at: Instant) -> Option<LossReason> {
        state.loss(at).map(|lost| lost.reason)
    }

    #[test]
    fn nothing_is_trusted_before_the_first_confirmed_renewal() -> Result<(), Error> {
        let clock = FakeClock::start();
        let state = kept(&clock, settings()?)?;
        assert_eq!(reason(&state, clock.at(0)), Some(LossReason::Unconfirmed));
        Ok(())
    }

    #[test]
    fn a_confirmed_renewal_is_trusted_for_the_lease_less_the_margin_from_its_request(
    ) -> Result<(), Error> {
        let clock = FakeClock::start();
        let state = kept(&clock, settings()?)?;
        state.renewed(&[&1, &2, &3], &[], clock.at(1_000));
        assert_eq!(reason(&state, clock.at(8_999)), None);
        let lost = state
            .loss(clock.at(9_000))
            .map(|lost| (lost.reason, lost.rows));
        assert_eq!(lost, Some((LossReason::Unconfirmed, vec![1, 2, 3])));
        Ok(())
    }

    #[test]
    fn a_failed_renewal_keeps_the_deadline_and_a_loss_past_it_is_final() -> Result<(), Error> {
        let clock = FakeClock::start();
        let state = kept(&clock, settings()?)?;
        state.renewed(&[&1, &2, &3], &[], clock.at(0));
        let unreachable = Error::InvalidSettings("the server did not answer".into());
        state.unconfirmed(&unreachable, clock.at(3_000));
        assert_eq!(
            reason(&state, clock.at(3_000)),
            None,
            "still within the trust"
        );
        assert!(state.to_renew(clock.at(3_000)));
        state.unconfirmed(&unreachable, clock.at(8_000));
        assert_eq!(
            reason(&state, clock.at(8_000)),
            Some(LossReason::Unconfirmed)
        );
        assert!(!state.to_renew(clock.at(8_000)), "renewals stop");
        // A renewal that got through late does not make the claim held again.
        state.renewed(&[&1, &2, &3], &[], clock.at(8_500));
        let lost = state.loss(clock.at(8_500));
        assert_eq!(
            lost.as_ref().map(|lost| lost.reason),
            Some(LossReason::Unconfirmed)
        );
        assert!(
            lost.is_some_and(|lost| lost.cause.is_some()),
            "the last error is told"
        );
        Ok(())
    }

    #[test]
    fn a_row_passed_over_locked_is_still_held_but_confirms_nothing_and_the_deadline_still_ends_it(
    ) -> Result<(), Error> {
        let clock = FakeClock::start();
        let state = kept(&clock, settings()?)?;
        state.renewed(&[&1, &2, &3], &[], clock.at(0));
        // Row 2 locked by a worker's transaction: rows 1 and 3 renewed, nothing lost.
        state.renewed(&[&1, &3], &[&2], clock.at(5_000));
        assert_eq!(state.held(), [1, 2, 3]);
        assert_eq!(
            reason(&state, clock.at(7_999)),
            None,
            "trusted until 8 s, from the first"
        );
        assert_eq!(
            reason(&state, clock.at(8_000)),
            Some(LossReason::Unconfirmed),
            "not pushed on by a round that passed a row over"
        );
        assert_eq!(
            state.loss(clock.at(8_000)).and_then(|lost| lost.cause),
            Some("1 rows locked by another transaction, not renewed".into())
        );
        Ok(())
    }

    #[test]
    fn a_round_after_the_lock_went_is_trusted_again() -> Result<(), Error> {
        let clock = FakeClock::start();
        let state = kept(&clock, settings()?)?;
        state.renewed(&[&1, &2, &3], &[], clock.at(0));
        state.renewed(&[&1, &3], &[&2], clock.at(3_000));
        state.renewed(&[&1, &2, &3], &[], clock.at(6_000));
        assert_eq!(
            reason(&state, clock.at(13_999)),
            None,
            "trusted from 6 s for 8 s"
        );
        Ok(())
    }

    #[test]
    fn a_renewal_that_changed_fewer_rows_loses_those_and_keeps_the_rest() -> Result<(), Error> {
        let clock = FakeClock::start();
        let state = kept(&clock, settings()?)?;
        state.renewed(&[&1, &3], &[], clock.at(0));
        assert_eq!(state.held(), [1, 3]);
        let lost = state.loss(clock.at(1)).map(|lost| (lost.reason, lost.rows));
        assert_eq!(lost, Some((LossReason::TakenOver, vec![2])));
        assert!(
            state.to_renew(clock.at(1)),
            "the rows still held are still renewed"
        );
        Ok(())
    }

    #[test]
    fn past_the_longest_hold_renewals_stop_and_the_claim_is_lost() -> Result<(), Error> {
        let clock = FakeClock::start();
        let state = kept(&clock, settings()?.at_most(Duration::from_secs(5)))?;
        state.renewed(&[&1, &2, &3], &[], clock.at(4_000));
        assert!(state.to_renew(clock.at(4_999)));
        assert_eq!(reason(&state, clock.at(4_999)), None);
        assert!(!state.to_renew(clock.at(5_000)));
        assert_eq!(
            reason(&state, clock.at(5_000)),
            Some(LossReason::LongestHold)
        );
        Ok(())
    }

    #[test]
    fn a_longest_hold_beyond_the_clock_never_comes() -> Result<(), Error> {
        let clock = FakeClock::start();
        let state = kept(&clock, settings()?.at_most(Duration::MAX))?;
        state.renewed(&[&1], &[], clock.at(0));
        assert!(state.to_renew(clock.at(1_000)));
        Ok(())
    }

    #[test]
    fn a_claim_of_no_rows_is_held_unrenewed_and_never_lost_until_released() -> Result<(), Error> {
        let clock = FakeClock::start();
        let claim = Claim::new("worker-1")?;
        let settings = settings()?.at_most(Duration::from_secs(5));
        let state = ClaimState::<i64>::new(
            "jobs",
            claim,
            Vec::new(),
            settings,
            None,
            clock.at(0),
            Arc::default(),
        );
        for at in [0, 9_000, 60_000] {
            assert!(!state.to_renew(clock.at(at)), "nothing to renew at {at} ms");
            assert_eq!(
                reason(&state, clock.at(at)),
                None,
                "nothing lost at {at} ms"
            );
        }
        state.mark_released(Vec::new());
        assert_eq!(reason(&state, clock.at(60_001)), Some(LossReason::Released));
        Ok(())
    }

    #[test]
    fn a_claim_whose_every_row_was_taken_over_stays_lost() -> Result<(), Error> {
        let clock = FakeClock::start();
        let state = kept(&clock, settings()?)?;
        state.renewed(&[], &[], clock.at(0));
        assert!(state.held().is_empty());
        let lost = state.loss(clock.at(1)).map(|lost| (lost.reason, lost.rows));
        assert_eq!(lost, Some((LossReason::TakenOver, vec![1, 2, 3])));
        assert!(!state.to_renew(clock.at(1)), "nothing left to renew");
        Ok(())
    }

    #[test]
    fn a_released_claim_is_renewed_no_more_and_says_so() -> Result<(), Error> {
        let clock = FakeClock::start();
        let state = kept(&clock, settings()?)?;
        state.renewed(&[&1, &2, &3], &[], clock.at(0));
        state.mark_released(vec![1, 2]);
        assert!(state.is_done());
        assert!(!state.to_renew(clock.at(1)));
        assert_eq!(state.release_outcome(), Some(vec![1, 2]));
        assert_eq!(reason(&state, clock.at(1)), Some(LossReason::Released));
        Ok(())
    }

    #[test]
    fn the_margin_is_the_trust_left_at_a_confirmation_and_none_before_the_first(
    ) -> Result<(), Error> {
        let clock = FakeClock::start();
        let state = kept(&clock, settings()?)?;
        assert_eq!(state.margin_at(clock.at(500)), None, "nothing trusted yet");
        state.renewed(&[&1, &2, &3], &[], clock.at(1_000));
        assert_eq!(
            state.margin_at(clock.at(4_000)),
            Some(Duration::from_secs(5)),
            "trusted until 9 s, confirmed again at 4 s"
        );
        assert_eq!(state.margin_at(clock.at(9_500)), Some(Duration::ZERO));
        Ok(())
    }

    #[test]
    fn the_rows_a_claim_loses_are_counted_by_reason_once() -> Result<(), Error> {
        let clock = FakeClock::start();
        let tally = Arc::new(Tally::default());
        let state = ClaimState::new(
            "jobs",
            Claim::new("worker-1")?,
            vec![1, 2, 3],
            settings()?,
            None,
            clock.at(0),
            Arc::clone(&tally),
        );
        state.renewed(&[&1, &2], &[], clock.at(0));
        let unreachable = Error::InvalidSettings("the server did not answer".into());
        state.unconfirmed(&unreachable, clock.at(9_000));
        state.unconfirmed(&unreachable, clock.at(9_001));
        state.loss(clock.at(9_002));
        let stats = tally.snapshot();
        assert_eq!((stats.rows_taken_over, stats.rows_unconfirmed), (1, 2));
        Ok(())
    }

    #[test]
    fn a_claim_handed_back_is_renewed_and_released_by_the_keeper_no_more() -> Result<(), Error> {
        let clock = FakeClock::start();
        let state = kept(&clock, settings()?)?;
        state.renewed(&[&1, &2, &3], &[], clock.at(0));
        assert!(!state.is_off_the_keepers_hands());
        assert_eq!(state.hand_back(), [1, 2, 3], "the rows, for the caller");
        assert!(state.is_off_the_keepers_hands());
        assert!(!state.to_renew(clock.at(1)));
        assert_eq!(state.release_outcome(), None, "handed back, not released");
        Ok(())
    }

    #[test]
    fn a_claim_whose_release_failed_is_renewed_no_more() -> Result<(), Error> {
        let clock = FakeClock::start();
        let state = kept(&clock, settings()?)?;
        state.renewed(&[&1, &2, &3], &[], clock.at(0));
        assert_eq!(state.stop_renewing(), 3);
        assert!(state.is_done());
        assert!(!state.to_renew(clock.at(1)));
        Ok(())
    }
}
