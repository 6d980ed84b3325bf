//! When a waiting claim tries again: pure logic. Every reading of the process's monotonic clock
//! and every random draw is passed in, so that it is tested on a fake clock. It decides how long
//! the caller sleeps, never who holds a row: that is the refusal's reading, by the database's
//! clock.
use std::time::{Duration, Instant};

use crate::Refusal;

/// The shortest interval between two attempts a caller may set: a shorter one would be a busy
/// loop of statements. As short as the shortest lease.
pub(crate) const SHORTEST_RECHECK: Duration = Duration::from_millis(1);

/// The longest pause of a batch's backoff, unless the caller sets another: how late work that
/// comes while the wait sleeps is claimed, at most.
pub(crate) const BATCH_RECHECK: Duration = Duration::from_secs(1);

/// The first pause of a backoff (of a batch that came back empty, or of a claim whose row
/// freed between its refusal and its reading), doubled after each pause up to the recheck
/// interval.
const FIRST_STEP: Duration = Duration::from_millis(20);

/// How long after a holder's lease runs out, by the reading, a waiter wakes: at least this, at
/// most twice this, so that waiters of one row do not all wake at once, and none before the row
/// frees (a lease exactly as old as its length is still fresh).
const PAST_FREEING: Duration = Duration::from_millis(10);

/// The scale of a random draw: a roll is uniform in `0..ROLLS`.
pub(crate) const ROLLS: u32 = 1 << 16;

/// What a wait does after an attempt that took nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Next {
    /// Sleep this long, then try again.
    After(Duration),
    /// Give back the attempt's outcome: the wait has ended, or waiting cannot help.
    Done,
}

/// The pauses of one wait: the recheck interval (the longest pause, and so how late a release
/// or new work is noticed), the deadline, and the backoff's step.
#[derive(Debug, Clone)]
pub(crate) struct Schedule {
    recheck: Duration,
    deadline: Instant,
    step: Duration,
}

impl Schedule {
    /// A wait that tried first at `start`, for up to `up_to`, pausing at most `recheck` between
    /// attempts; `None` when the deadline is past what the clock can count.
    pub(crate) fn new(start: Instant, up_to: Duration, recheck: Duration) -> Option<Self> {
        Some(Self {
            recheck,
            deadline: start.checked_add(up_to)?,
            step: FIRST_STEP,
        })
    }

    /// After a claim of one row was refused, and its refusal read as `reading` at `at`.
    ///
    /// * Held: until the holder's lease frees by the reading, and a little more, but never
    ///   longer than the recheck interval (a holder may release early), three quarters of it
    ///   at least.
    /// * Free or outlived (the row freed since the claim, and the claim's own condition takes
    ///   it, by the reading): the backoff's next pause, short at first.
    /// * No such row, or a row the caller's own filter refuses (the filter evaluated in the
    ///   reading, so a release since the claim is free, not this): waiting cannot help.
    pub(crate) fn after_refusal(&mut self, reading: &Refusal, at: Instant, roll: u32) -> Next {
        let pause = match reading {
            Refusal::Held(holder) => {
                self.step = FIRST_STEP;
                let freed = holder
                    .frees_in
                    .saturating_add(PAST_FREEING)
                    .saturating_add(part_of(PAST_FREEING, roll));
                freed.min(downward(self.recheck, roll))
            }
            Refusal::Free | Refusal::Outlived { .. } => self.backoff(roll),
            Refusal::NotClaimable | Refusal::NoSuchRow => return Next::Done,
        };
        self.within_deadline(pause, at)
    }

    /// After a batch claim came back empty at `at`: the backoff's next pause.
    pub(crate) fn after_empty(&mut self, at: Instant, roll: u32) -> Next {
        let pause = self.backoff(roll);
        self.within_deadline(pause, at)
    }

    /// The step, jittered downward, never above the recheck interval; the step doubles.
    fn backoff(&mut self, roll: u32) -> Duration {
        let step = self.step.min(self.recheck);
        self.step = step.saturating_mul(2).min(self.recheck);
        downward(step, roll)
    }

    /// `pause`, cut short at the deadline, so that the last attempt is made there; nothing more
    /// once the deadline has come.
    fn within_deadline(&self, pause: Duration, at: Instant) -> Next {
        match self.deadline.checked_duration_since(at) {
            Some(left) if !left.is_zero() => Next::After(pause.min(left)),
            _ => Next::Done,
        }
    }
}

/// `pause` less up to a quarter, by `roll`: jittered, and never longer than `pause`, so that the
/// interval documented is a true bound on how late a change is noticed.
fn downward(pause: Duration, roll: u32) -> Duration {
    let quarter = pause / 4;
    (pause - quarter).saturating_add(part_of(quarter, roll))
}

/// The part `roll / ROLLS` of `whole`, in whole nanoseconds, without floating point (which a
/// duration near the largest would overflow).
fn part_of(whole: Duration, roll: u32) -> Duration {
    let nanos = whole.as_nanos() * u128::from(roll.min(ROLLS - 1)) / u128::from(ROLLS);
    let secs = u64::try_from(nanos / 1_000_000_000).unwrap_or(u64::MAX);
    // Below a billion, so it fits.
    let subsec = u32::try_from(nanos % 1_000_000_000).unwrap_or(0);
    Duration::new(secs, subsec)
}

/// The random draws of one wait: xorshift64*, seeded from the operating system's randomness
/// (through a v4 UUID's), so that waiters started together draw apart.
#[derive(Debug)]
pub(crate) struct Jitter(u64);

impl Jitter {
    pub(crate) fn new() -> Self {
        let (high, low) = uuid::Uuid::new_v4().as_u64_pair();
        // Never zero, where xorshift stays.
        Self((high ^ low) | 1)
    }

    /// A draw uniform in `0..ROLLS`.
    pub(crate) fn roll(&mut self) -> u32 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        // The top 16 bits of the scrambled state, the best of xorshift64*.
        u32::try_from(x.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 48).unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::{Jitter, Next, Schedule, ROLLS};
    use crate::monotonic::FakeClock;
    use crate::{LeaseHolder, Refusal};

    const LOWEST: u32 = 0;
    const HIGHEST: u32 = ROLLS - 1;

    fn ms(millis: u64) -> Duration {
        Duration::from_millis(millis)
    }

    fn held(frees_in: Duration) -> Refusal {
        Refusal::Held(LeaseHolder {
            owner: "worker-1".into(),
            token: "t1".into(),
            age: Duration::ZERO,
            frees_in,
        })
    }

    fn pause(next: Next) -> Duration {
        match next {
            Next::After(pause) => pause,
            Next::Done => panic!("the wait ended"),
        }
    }

    /// A wait of 10 s from the clock's start, rechecking every second.
    fn ten_seconds(clock: &FakeClock) -> Schedule {
        schedule(clock, Duration::from_secs(10), Duration::from_secs(1))
    }

    /// A wait of `up_to` from the clock's start, rechecking every `recheck`.
    fn schedule(clock: &FakeClock, up_to: Duration, recheck: Duration) -> Schedule {
        let Some(schedule) = Schedule::new(clock.at(0), up_to, recheck) else {
            panic!("a deadline of {up_to:?} from the clock's start is out of range");
        };
        schedule
    }

    #[test]
    fn a_held_row_is_rechecked_within_the_interval_and_no_sooner_than_three_quarters_of_it() {
        let clock = FakeClock::start();
        let mut schedule = ten_seconds(&clock);
        let reading = held(Duration::from_secs(50));
        let shortest = pause(schedule.after_refusal(&reading, clock.at(0), LOWEST));
        let longest = pause(schedule.after_refusal(&reading, clock.at(0), HIGHEST));
        assert_eq!(shortest, ms(750));
        assert!(longest < ms(1_000) && longest > ms(999), "{longest:?}");
    }

    #[test]
    fn a_lease_that_frees_before_the_recheck_is_tried_just_after_it_frees_never_before() {
        let clock = FakeClock::start();
        let mut schedule = ten_seconds(&clock);
        let reading = held(ms(300));
        let soonest = pause(schedule.after_refusal(&reading, clock.at(0), LOWEST));
        let latest = pause(schedule.after_refusal(&reading, clock.at(0), HIGHEST));
        assert_eq!(soonest, ms(310), "10 ms past its freeing");
        assert!(latest < ms(320) && latest > soonest, "{latest:?}");
        let now_free = pause(schedule.after_refusal(&held(Duration::ZERO), clock.at(0), LOWEST));
        assert_eq!(
            now_free,
            ms(10),
            "a lease exactly as old as its length is still fresh"
        );
    }

    #[test]
    fn the_last_pause_ends_at_the_deadline_and_the_attempt_there_is_the_last() {
        let clock = FakeClock::start();
        let mut schedule = ten_seconds(&clock);
        let reading = held(Duration::from_secs(50));
        assert_eq!(
            schedule.after_refusal(&reading, clock.at(9_600), HIGHEST),
            Next::After(ms(400))
        );
        assert_eq!(
            schedule.after_refusal(&reading, clock.at(10_000), HIGHEST),
            Next::Done
        );
        assert_eq!(
            schedule.after_refusal(&reading, clock.at(12_000), LOWEST),
            Next::Done
        );
    }

    #[test]
    fn no_row_or_a_row_the_filter_refuses_ends_the_wait_at_once() {
        let clock = FakeClock::start();
        for reading in [Refusal::NoSuchRow, Refusal::NotClaimable] {
            let mut schedule = ten_seconds(&clock);
            assert_eq!(
                schedule.after_refusal(&reading, clock.at(0), LOWEST),
                Next::Done,
                "{reading}"
            );
        }
    }

    #[test]
    fn a_row_the_filter_refuses_ends_the_wait_even_just_after_it_was_held() {
        let clock = FakeClock::start();
        let mut schedule = ten_seconds(&clock);
        schedule.after_refusal(&held(Duration::from_secs(50)), clock.at(0), LOWEST);
        // The reading evaluates the filter: a release since the claim reads free, not this.
        assert_eq!(
            schedule.after_refusal(&Refusal::NotClaimable, clock.at(1), LOWEST),
            Next::Done
        );
        // Freed since the claim, and the filter takes it: tried again soon.
        let mut schedule = ten_seconds(&clock);
        let again = pause(schedule.after_refusal(&Refusal::Free, clock.at(0), LOWEST));
        assert_eq!(again, ms(15), "the backoff's first step, jittered");
    }

    #[test]
    fn a_row_freed_since_its_refusal_is_tried_again_soon_backing_off_to_the_interval() {
        let clock = FakeClock::start();
        let mut schedule = ten_seconds(&clock);
        let outlived = Refusal::Outlived {
            owner: "worker-1".into(),
            token: "t1".into(),
            ago: ms(5),
        };
        let pauses: Vec<Duration> = (0..8)
            .map(|_| pause(schedule.after_refusal(&outlived, clock.at(0), LOWEST)))
            .collect();
        let steps = [20, 40, 80, 160, 320, 640, 1_000, 1_000];
        let expected: Vec<Duration> = steps.iter().map(|step| ms(step * 3 / 4)).collect();
        assert_eq!(pauses, expected);
        // A held reading starts the backoff over.
        schedule.after_refusal(&held(Duration::from_secs(50)), clock.at(0), LOWEST);
        assert_eq!(
            pause(schedule.after_refusal(&Refusal::Free, clock.at(0), LOWEST)),
            ms(15)
        );
    }

    #[test]
    fn an_empty_batch_backs_off_doubling_to_the_interval_jittered_downward() {
        let clock = FakeClock::start();
        let mut schedule = ten_seconds(&clock);
        let mut rolls = Jitter::new();
        let mut step = ms(20);
        for _ in 0..10 {
            let pause = pause(schedule.after_empty(clock.at(0), rolls.roll()));
            assert!(
                pause <= step && pause >= step * 3 / 4,
                "{pause:?} for {step:?}"
            );
            step = (step * 2).min(ms(1_000));
        }
        assert_eq!(schedule.after_empty(clock.at(10_000), LOWEST), Next::Done);
    }

    #[test]
    fn an_interval_shorter_than_the_first_step_bounds_every_pause() {
        let clock = FakeClock::start();
        let mut schedule = schedule(&clock, Duration::from_secs(1), ms(4));
        assert_eq!(
            pause(schedule.after_empty(clock.at(0), HIGHEST)),
            ms(4) - Duration::from_nanos(16)
        );
        let reading = held(Duration::from_secs(50));
        assert_eq!(
            pause(schedule.after_refusal(&reading, clock.at(0), LOWEST)),
            ms(3)
        );
    }

    #[test]
    fn the_longest_durations_neither_overflow_nor_panic() {
        let clock = FakeClock::start();
        assert!(Schedule::new(clock.at(0), Duration::MAX, ms(1)).is_none());
        let mut schedule = schedule(&clock, Duration::from_secs(10), Duration::MAX);
        let reading = held(Duration::MAX);
        assert_eq!(
            schedule.after_refusal(&reading, clock.at(0), HIGHEST),
            Next::After(Duration::from_secs(10))
        );
        let mut backoff = (0..16).map(|_| pause(schedule.after_empty(clock.at(1_000), HIGHEST)));
        assert!(backoff.all(|pause| pause <= Duration::from_secs(9)));
    }

    #[test]
    fn draws_cover_their_range_and_differ_between_waits() {
        let mut jitter = Jitter::new();
        let rolls: Vec<u32> = (0..1_000).map(|_| jitter.roll()).collect();
        assert!(rolls.iter().all(|roll| *roll < ROLLS));
        assert!(rolls.iter().any(|roll| *roll < ROLLS / 4));
        assert!(rolls.iter().any(|roll| *roll > ROLLS / 4 * 3));
        let other: Vec<u32> = {
            let mut jitter = Jitter::new();
            (0..8).map(|_| jitter.roll()).collect()
        };
        assert_ne!(rolls[..8], other[..], "seeded apart");
    }
}
