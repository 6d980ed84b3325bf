//! `std::sync::Barrier`, except that a thread left waiting panics instead of hanging: when one
//! racer of a race panics, it never arrives, and the test must fail, not stall.
use std::sync::{Condvar, Mutex};
use std::time::Duration;

/// Longer than any statement of a race should take (SQLite's busy timeout is 30 s), counted
/// in waits of a second: wakings for nothing only make the patience shorter.
const PATIENCE_SECS: u32 = 120;

pub(super) struct Barrier {
    parties: usize,
    /// Arrived so far, and how many times the barrier has tripped.
    state: Mutex<(usize, u64)>,
    tripped: Condvar,
}

impl Barrier {
    pub(super) fn new(parties: usize) -> Self {
        Self {
            parties,
            state: Mutex::new((0, 0)),
            tripped: Condvar::new(),
        }
    }

    /// Waits until every party has arrived; panics after [`PATIENCE_SECS`] without them.
    pub(super) fn wait(&self) {
        let mut state = self
            .state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let generation = state.1;
        state.0 += 1;
        if state.0 == self.parties {
            *state = (0, generation + 1);
            self.tripped.notify_all();
            return;
        }
        for _ in 0..PATIENCE_SECS {
            if state.1 != generation {
                return;
            }
            state = self
                .tripped
                .wait_timeout(state, Duration::from_secs(1))
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .0;
        }
        assert!(
            state.1 != generation,
            "a party never reached the barrier: did another thread panic?"
        );
    }
}
