//! A run of a task: the handle the task checks its lock with, and what the run came to.
use super::schema::task_locks;
use super::Error;
use diesel_lease::{Kept, LeaseHolder};

/// What a run of a task came to: it ran, under the lock for the whole run, with what the task
/// gave back; or another run holds the lock, and the task did not run here.
///
/// ```
/// # include!("doctest_setup.rs");
/// use std::time::Duration;
/// use diesel_lease_tasks::{Hold, TaskLocks, TaskRun};
/// use diesel_lease::Lease;
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let pool = tasks_pool()?;
/// let locks = TaskLocks::new(pool, "node-a", Lease::from_secs(30)?)?;
/// let hold = Hold::at_most(Duration::from_secs(60));
/// match locks.run("nightly-report", hold, |_task| Ok(42))? {
///     TaskRun::Ran(rows) => assert_eq!(rows, 42),
///     TaskRun::HeldBy(holder) => println!("running on {} for {:?}", holder.owner, holder.age),
/// }
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use = "a task that did not run says who holds its lock"]
pub enum TaskRun<R> {
    /// The task ran, holding the lock from its start to its end, and gave back this.
    Ran(R),
    /// Another run holds the task's lock (on another node, or on this one), within the lease or
    /// the shortest hold of a run that ended: who, since when, and how soon it frees at the
    /// latest, by the database's clock.
    HeldBy(LeaseHolder),
}

impl<R> TaskRun<R> {
    /// What the task gave back, if it ran.
    ///
    /// ```
    /// let run = diesel_lease_tasks::TaskRun::Ran(7);
    /// assert_eq!(run.ran(), Some(7));
    /// ```
    pub fn ran(self) -> Option<R> {
        match self {
            TaskRun::Ran(value) => Some(value),
            TaskRun::HeldBy(_) => None,
        }
    }

    /// Who holds the lock, if the task did not run.
    ///
    /// ```
    /// let run = diesel_lease_tasks::TaskRun::Ran(7);
    /// assert!(run.held_by().is_none());
    /// ```
    pub fn held_by(&self) -> Option<&LeaseHolder> {
        match self {
            TaskRun::Ran(_) => None,
            TaskRun::HeldBy(holder) => Some(holder),
        }
    }
}

/// The task as it runs, handed to its closure: ask it whether the lock is still the run's before
/// each effect outside the database. A cheap check, made without a statement: the keeper that
/// renews the lock says when it was lost.
///
/// ```
/// # include!("doctest_setup.rs");
/// use std::time::Duration;
/// use diesel_lease_tasks::{Hold, TaskLocks};
/// use diesel_lease::Lease;
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let pool = tasks_pool()?;
/// let locks = TaskLocks::new(pool, "node-a", Lease::from_secs(30)?)?;
/// let sent = locks.run("send-invoices", Hold::at_most(Duration::from_secs(600)), |task| {
///     assert_eq!(task.name(), "send-invoices");
///     let mut sent = 0;
///     for _invoice in 0..3 {
///         task.check()?; // stop at once if the lock was lost
///         sent += 1;
///     }
///     Ok(sent)
/// })?;
/// assert_eq!(sent.ran(), Some(3));
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct RunningTask<'a> {
    pub(super) name: &'a str,
    pub(super) kept: &'a Kept<task_locks::table>,
}

impl RunningTask<'_> {
    /// The task's name.
    ///
    /// See [`RunningTask`] for an example.
    pub fn name(&self) -> &str {
        self.name
    }

    /// Whether the lock is still the run's: renewed in time, not taken over, within the longest
    /// hold.
    ///
    /// ```
    /// # include!("doctest_setup.rs");
    /// # use std::time::Duration;
    /// # use diesel_lease_tasks::{Hold, TaskLocks};
    /// # use diesel_lease::Lease;
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let pool = tasks_pool()?;
    /// let locks = TaskLocks::new(pool, "node-a", Lease::from_secs(30)?)?;
    /// locks.run("compact", Hold::at_most(Duration::from_secs(60)), |task| {
    ///     assert!(task.is_held());
    ///     Ok(())
    /// })?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn is_held(&self) -> bool {
        self.kept.is_held()
    }

    /// `Ok` while [`is_held`](Self::is_held); otherwise [`Error::LockLost`], which says why:
    /// stop the task there (`?` does), since it may now run on another node.
    ///
    /// See [`RunningTask`] for an example.
    pub fn check(&self) -> Result<(), Error> {
        self.kept.check().map_err(Error::LockLost)
    }
}
