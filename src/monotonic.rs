//! The one reading of the process's clock in the library: the monotonic clock. It times a
//! keeper's trust deadline, which can only make a keeper give a lease up sooner (a renewal it
//! could not confirm in time), never hold it longer, and how long a caller is willing to wait;
//! it never decides who holds a row: every timestamp in the database stays the database's.
use std::time::Instant;

/// Now, on the process's monotonic clock.
#[allow(clippy::disallowed_methods)] // the documented exception: see the module's comment
pub(crate) fn instant() -> Instant {
    Instant::now()
}

/// A fake of the monotonic clock for unit tests of pure logic (a keeper's state machine, a
/// wait's schedule), which only ever sees the instants passed to it: instants counted in
/// milliseconds from a start.
#[cfg(test)]
pub(crate) struct FakeClock(Instant);

#[cfg(test)]
impl FakeClock {
    pub(crate) fn start() -> Self {
        Self(instant())
    }

    pub(crate) fn at(&self, millis: u64) -> Instant {
        self.0 + std::time::Duration::from_millis(millis)
    }
}
