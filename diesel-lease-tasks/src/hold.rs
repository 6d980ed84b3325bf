//! How long a run of a task holds its lock: at most, and at least.
use std::time::Duration;

use diesel_lease::{KeeperSettings, Lease};

/// How long a run of a task holds its lock: at most (ShedLock's `lockAtMostFor`) and, if given,
/// at least (its `lockAtLeastFor`).
///
/// * **At most**: the keeper renews the lock while the task runs, and stops once the run has
///   held it this long: the task learns that its lock is lost ([`RunningTask::check`]), and
///   another node may run the task once the lock has outlived the lease, so a hung run blocks
///   the task for at most this plus one lease. A node that dies frees its lock within one
///   lease, whatever this is.
/// * **At least**, by the database's clock from the start of the run: a run that ends sooner
///   leaves the lock held, dated so that it frees just when this has passed (past the lease
///   too, when this is longer), so that a task run on one node is not run again on another
///   whose clock is ahead. It holds however the run ends: a result, an error or a panic.
///
/// ```
/// use std::time::Duration;
/// use diesel_lease_tasks::Hold;
///
/// let hold = Hold::at_most(Duration::from_secs(600)).at_least(Duration::from_secs(30));
/// assert_eq!(hold, Hold::at_most(Duration::from_secs(600)).at_least(Duration::from_secs(30)));
/// ```
///
/// [`RunningTask::check`]: super::RunningTask::check
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Hold {
    at_most: Duration,
    at_least: Option<Duration>,
}

impl Hold {
    /// A run holds the lock at most `at_most`, and no shortest hold: the lock frees as the run
    /// ends.
    ///
    /// ```
    /// let hold = diesel_lease_tasks::Hold::at_most(std::time::Duration::from_secs(600));
    /// # let _ = hold;
    /// ```
    pub fn at_most(at_most: Duration) -> Self {
        Self {
            at_most,
            at_least: None,
        }
    }

    /// A run holds the lock at least `at_least`, by the database's clock: no longer than the
    /// longest hold, and within the range of a [`Lease`](diesel_lease::Lease) (up to 30 days), though
    /// it may be longer than the task locks' lease (else the run is refused before anything is
    /// sent, with [`diesel_lease::Error::InvalidSettings`]).
    ///
    /// ```
    /// # use std::time::Duration;
    /// let hold = diesel_lease_tasks::Hold::at_most(Duration::from_secs(600)).at_least(Duration::from_secs(60));
    /// # let _ = hold;
    /// ```
    pub fn at_least(self, at_least: Duration) -> Self {
        Self {
            at_least: Some(at_least),
            ..self
        }
    }

    /// The settings of the keeper that keeps runs of this hold, under `lease`.
    pub(super) fn keeper_settings(self, lease: Lease) -> KeeperSettings {
        let settings = KeeperSettings::new(lease).at_most(self.at_most);
        match self.at_least {
            Some(at_least) => settings.at_least(at_least),
            None => settings,
        }
    }
}
