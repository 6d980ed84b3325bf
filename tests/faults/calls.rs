//! The longest call of each kind a scenario made, timed on this process's monotonic clock: the
//! bound docs/operations.md states on a call is asserted from these.
use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Duration;

use crate::report::millis;

#[derive(Default)]
pub struct Calls {
    longest: Mutex<BTreeMap<&'static str, Duration>>,
}

impl Calls {
    /// Runs `call`, timed, as a call of kind `what`.
    pub fn timed<R>(&self, what: &'static str, call: impl FnOnce() -> R) -> R {
        let started = crate::timer();
        let result = call();
        let took = started.elapsed();
        let mut longest = self.longest.lock().unwrap_or_else(|e| e.into_inner());
        let entry = longest.entry(what).or_default();
        *entry = (*entry).max(took);
        result
    }

    /// The longest call of any kind.
    pub fn longest(&self) -> Duration {
        let longest = self.longest.lock().unwrap_or_else(|e| e.into_inner());
        longest.values().copied().max().unwrap_or_default()
    }

    /// The longest call of each kind, as `kind 12.3 ms, ..`.
    pub fn text(&self) -> String {
        let longest = self.longest.lock().unwrap_or_else(|e| e.into_inner());
        longest
            .iter()
            .map(|(what, took)| format!("{what} {}", millis(*took)))
            .collect::<Vec<_>>()
            .join(", ")
    }
}
