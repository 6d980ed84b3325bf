/// Everything that can go wrong with the task locks.
///
/// An `Invalid*` error, of this type or of the lease layer's ([`Error::Lease`]), means that
/// nothing was written. Another node's run holding the lock is no error: it is
/// [`TaskRun::HeldBy`](super::TaskRun::HeldBy).
///
/// ```
/// # include!("doctest_setup.rs");
/// use std::time::Duration;
/// use diesel_lease_tasks::{Error, Hold, TaskLocks};
/// use diesel_lease::Lease;
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let pool = tasks_pool()?;
/// let locks = TaskLocks::new(pool, "node-a", Lease::from_secs(30)?)?;
/// let refused = locks.run("", Hold::at_most(Duration::from_secs(60)), |_| Ok(()));
/// assert!(matches!(refused, Err(Error::InvalidName(_))));
/// # Ok(())
/// # }
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The lease layer's error: the database, the pool, or an invalid node, lease or hold
    /// ([`diesel_lease::Error::InvalidSettings`]).
    #[error(transparent)]
    Lease(#[from] diesel_lease::Error),
    /// Bringing the table of task locks up to date failed; the source is the migration's own
    /// error.
    #[error("migration error: {0}")]
    Migration(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// A task's name is empty, too long, holds control characters or white space at either end.
    #[error("invalid task name: {0}")]
    InvalidName(String),
    /// The run's lock was lost while the task ran, or found lost when it ended: the task passed
    /// its longest hold, the keeper could not renew the lock in time, or another run took it
    /// over. The task may have run on another node meanwhile: this is never a clean run. Said
    /// by [`RunningTask::check`](super::RunningTask::check) during the run (stop there), and by
    /// [`TaskLocks::run`](super::TaskLocks::run) for a task that ended without stopping.
    #[error("the task lost its lock: {0}")]
    LockLost(diesel_lease::LeaseLost<String>),
    /// The lock changed hands again and again while the run tried to take it; trying again is
    /// safe.
    #[error("contended: {0}")]
    Contended(String),
    /// The task's row has its lock columns half set (a token without a node or a time, written
    /// by hand), which no run takes; clear them to free the task.
    #[error("the lock of task {0:?} is half set, and no run takes it")]
    Unclaimable(String),
    /// The task's own error, as it returned it. An error of these locks that the task passed
    /// on (`task.check()?`) comes back as itself, [`LockLost`](Self::LockLost) say.
    #[error(transparent)]
    Task(TaskError),
}

/// What a task's closure gives back when it fails: any error, so that `?` passes on the task's
/// own errors, and the closure's `Ok(..)` needs no type written.
///
/// ```
/// let failed: diesel_lease_tasks::TaskError = "no file".into();
/// assert_eq!(failed.to_string(), "no file");
/// ```
pub type TaskError = Box<dyn std::error::Error + Send + Sync>;

impl Error {
    /// The error a run gives back for its task's `error`.
    pub(super) fn of_task(error: TaskError) -> Self {
        error
            .downcast::<Error>()
            .map_or_else(Error::Task, |own| *own)
    }
}

diesel_lease::__lease_errors_convert_into!(Error);
