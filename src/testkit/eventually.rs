//! A bounded wait for what a test asserts: tests wait for a condition, they do not time it.
use std::time::Duration;

use crate::monotonic;

/// How long [`eventually`] sleeps between two askings.
const POLL: Duration = Duration::from_millis(5);

/// Asks `done` until it says yes, a few milliseconds apart, and panics, saying what never came
/// (`what`), once `within` has passed without it. A test waits for what it asserts rather than
/// sleeping for a time it hopes is enough: on a slow machine it waits longer, on a fast one
/// less, and the bound only ends a test that would otherwise hang.
///
/// ```
/// use std::sync::atomic::{AtomicBool, Ordering};
/// use std::sync::Arc;
/// use std::time::Duration;
///
/// let done = Arc::new(AtomicBool::new(false));
/// let worker = std::thread::spawn({
///     let done = Arc::clone(&done);
///     move || done.store(true, Ordering::SeqCst)
/// });
/// diesel_lease::testkit::eventually("the worker is done", Duration::from_secs(30), || done.load(Ordering::SeqCst));
/// worker.join().expect("the worker ran");
/// ```
pub fn eventually(what: &str, within: Duration, mut done: impl FnMut() -> bool) {
    let started = monotonic::instant();
    let mut asked = 0_u64;
    loop {
        if done() {
            return;
        }
        asked += 1;
        if monotonic::instant().saturating_duration_since(started) >= within {
            panic!("never came within {within:?} (asked {asked} times): {what}");
        }
        std::thread::sleep(POLL);
    }
}
