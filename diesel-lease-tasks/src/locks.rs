//! The task locks of one node: running a task under its lock, or saying who holds it.
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};

use diesel::r2d2::{ConnectionManager, Pool};

use super::connection::TaskConnection;
use super::run::{RunningTask, TaskRun};
use super::schema::task_locks;
use super::{Error, Hold, TaskError};
use diesel_lease::{Claim, Claimed, Keeper, Kept, Lease, LeaseHolder, LeaseLost, LossReason};
use diesel_lease::{Refusal, Won};

/// How many times a run claims the lock when the lock changed hands between its claim and the
/// read of who holds it, or when the run created the task's row.
const ATTEMPTS: usize = 3;

/// The scheduled-task locks of one node: [`run`](Self::run) runs a task under its lock, so that
/// of the nodes that run it on a schedule, one runs it at a time, and says who holds the lock
/// when another node's run does.
///
/// A task's lock is its row of [`task_locks`](super::schema::task_locks), by its name, created
/// by the task's first run. A run takes it with one conditional `UPDATE` (the lease layer's
/// claim) when it is free or has outlived the lease by the database's clock; a
/// [`Keeper`] renews it while the task runs and the run releases it when the task ends, unless
/// its shortest hold ([`Hold::at_least`]) has not passed. Nothing is held between statements:
/// no advisory lock, no open transaction, no pinned connection, so it runs behind a pooler in
/// transaction mode (with `PgTransactionPooling` on PgBouncer 1.18). The locks are shared by a
/// node's threads: clone them, or share a reference.
///
/// The lease is how soon a lock held by a node that died frees itself: a run's lock is renewed
/// every third of it, so keep it well above the database's longest pause. Every node of a task
/// must use the same lease.
///
/// One keeper, started by the first run and kept until the last clone of these locks is
/// dropped, renews every run's lock, each under its own [`Hold`] (its
/// [statistics](Self::stats) are the locks'): one thread however many holds the runs have,
/// computed at run time or not.
///
/// ```
/// # include!("doctest_setup.rs");
/// use std::time::Duration;
/// use diesel_lease_tasks::{Hold, TaskLocks, TaskRun};
/// use diesel_lease::Lease;
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let pool = tasks_pool()?;
/// let node_a = TaskLocks::new(pool.clone(), "node-a", Lease::from_secs(30)?)?;
/// let node_b = TaskLocks::new(pool, "node-b", Lease::from_secs(30)?)?;
/// let hold = Hold::at_most(Duration::from_secs(600)).at_least(Duration::from_secs(60));
///
/// let ran = node_a.run("nightly-report", hold, |task| {
///     // While node A runs it, node B's run is refused, and says who holds the lock.
///     let elsewhere = node_b.run("nightly-report", hold, |_| Ok(()))?;
///     assert_eq!(elsewhere.held_by().map(|holder| holder.owner.as_str()), Some("node-a"));
///     task.check()?;
///     Ok("report sent")
/// })?;
/// assert_eq!(ran, TaskRun::Ran("report sent"));
///
/// // Done at once, it holds the lock 60 s all the same, by the database's clock.
/// let again = node_b.run("nightly-report", hold, |_| Ok(()))?;
/// assert!(again.held_by().is_some_and(|holder| holder.frees_in > Duration::from_secs(30)));
/// # Ok(())
/// # }
/// ```
pub struct TaskLocks<C: TaskConnection> {
    shared: Arc<Shared<C>>,
}

struct Shared<C: TaskConnection> {
    pool: Pool<ConnectionManager<C>>,
    node: String,
    lease: Lease,
    /// The keeper of every run, started by the first.
    keeper: Mutex<Option<Arc<Keeper<C>>>>,
}

impl<C: TaskConnection> Clone for TaskLocks<C> {
    fn clone(&self) -> Self {
        Self {
            shared: Arc::clone(&self.shared),
        }
    }
}

impl<C: TaskConnection> fmt::Debug for TaskLocks<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TaskLocks")
            .field("node", &self.shared.node)
            .field("lease", &self.shared.lease)
            .finish_non_exhaustive()
    }
}

/// What a claim of a task's lock came to.
enum Taken {
    Won(Won<String, task_locks::table>),
    HeldBy(LeaseHolder),
}

impl<C: TaskConnection> TaskLocks<C> {
    /// The task locks of `node` (named in `locked_by`), run through `pool`, with `lease` the
    /// lease of a run's lock: how soon the lock of a node that died frees itself, by the
    /// database's clock. An invalid node is [`diesel_lease::Error::InvalidOwner`].
    ///
    /// ```
    /// # include!("doctest_setup.rs");
    /// use diesel_lease::Lease;
    /// use diesel_lease_tasks::TaskLocks;
    ///
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let pool = tasks_pool()?;
    /// let locks = TaskLocks::new(pool.clone(), "node-a", Lease::from_secs(30)?)?;
    /// assert_eq!(locks.node(), "node-a");
    /// assert!(TaskLocks::new(pool, " node-a", Lease::from_secs(30)?).is_err());
    /// # Ok(())
    /// # }
    /// ```
    pub fn new(pool: Pool<ConnectionManager<C>>, node: &str, lease: Lease) -> Result<Self, Error> {
        let node = Claim::check_text(node).map_err(diesel_lease::Error::InvalidOwner)?;
        Ok(Self {
            shared: Arc::new(Shared {
                pool,
                node: node.to_owned(),
                lease,
                keeper: Mutex::new(None),
            }),
        })
    }

    /// The node the locks are taken for.
    ///
    /// ```
    /// # include!("doctest_setup.rs");
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let pool = tasks_pool()?;
    /// let locks = diesel_lease_tasks::TaskLocks::new(pool, "n1", diesel_lease::Lease::from_secs(9)?)?;
    /// assert_eq!(locks.node(), "n1");
    /// # Ok(())
    /// # }
    /// ```
    pub fn node(&self) -> &str {
        &self.shared.node
    }

    /// The lease of a run's lock.
    ///
    /// ```
    /// # include!("doctest_setup.rs");
    /// # use diesel_lease::Lease;
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let pool = tasks_pool()?;
    /// let locks = diesel_lease_tasks::TaskLocks::new(pool, "n1", Lease::from_secs(9)?)?;
    /// assert_eq!(locks.lease(), Lease::from_secs(9)?);
    /// # Ok(())
    /// # }
    /// ```
    pub fn lease(&self) -> Lease {
        self.shared.lease
    }

    /// Runs `task` under the lock of the task `name`, held as `hold` says, or says who holds it.
    ///
    /// The lock is claimed in one statement (the task's row is created first, by its first
    /// run). When another run holds it, within the lease or the shortest hold of a run that
    /// ended, the task does not run: [`TaskRun::HeldBy`] names the holder. Otherwise `task`
    /// runs on this thread, given the [`RunningTask`] to check the lock with, while a keeper
    /// renews the lock; when it ends the lock is released, or dated so that it frees when the
    /// shortest hold ends, however the task ended (a value, an error, a panic, which goes on
    /// unwinding). The run's own connection goes back to the pool before the task starts.
    ///
    /// The task fails with any error ([`TaskError`]: `?` passes on its own errors, and its
    /// `Ok(..)` needs no type written); `run` gives it back as [`Error::Task`], or as itself
    /// when it is an error of these locks the task passed on (`task.check()?`). A run
    /// whose lock was lost ([`RunningTask::check`]), or found taken over as it ended, is
    /// [`Error::LockLost`], never [`TaskRun::Ran`], even when the task gave back a value.
    /// A hold the keeper cannot keep is refused before anything is sent
    /// ([`diesel_lease::Error::InvalidSettings`]), as is an invalid name ([`Error::InvalidName`]).
    ///
    /// If the lock cannot be kept (the keeper's first renewal fails) the task does not run, and
    /// the lock frees itself within the lease. If its release fails after the task ran, the
    /// error is given back, and the lock frees itself within the lease, even before its
    /// shortest hold.
    ///
    /// Call it outside a transaction of your own: its statements run on connections of the
    /// pool, and take none of the caller's.
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
    /// let hold = Hold::at_most(Duration::from_secs(600));
    /// let failed = locks.run("import", hold, |_| Err::<(), _>("no file".into()));
    /// assert_eq!(failed.unwrap_err().to_string(), "no file", "the task's own error");
    /// assert_eq!(locks.run("import", hold, |_| Ok(1))?, TaskRun::Ran(1), "freed by the failed run");
    /// # Ok(())
    /// # }
    /// ```
    pub fn run<R, F>(&self, name: &str, hold: Hold, task: F) -> Result<TaskRun<R>, Error>
    where
        F: FnOnce(&RunningTask<'_>) -> Result<R, TaskError>,
    {
        let name = Claim::check_text(name).map_err(Error::InvalidName)?;
        let settings = hold.keeper_settings(self.shared.lease).checked()?;
        let keeper = self.keeper()?;
        let won = match self.take(name)? {
            Taken::Won(won) => won,
            Taken::HeldBy(holder) => return Ok(TaskRun::HeldBy(holder)),
        };
        // Should the keeper fail to keep it, the lock frees itself within the lease.
        let kept = C::keep_task(&keeper, &won, settings).map_err(Error::from)?;
        // An error or a panic of the task drops `kept`, which releases the lock, or dates it
        // for the shortest hold, as the release below does.
        let running = RunningTask { name, kept: &kept };
        // A lock lost already (a longest hold past at its first renewal) runs nothing.
        running.check()?;
        let value = task(&running).map_err(Error::of_task)?;
        self.finish(name, &kept)?;
        Ok(TaskRun::Ran(value))
    }

    /// What the keeper of these locks' runs has done since the first run: see
    /// [`KeeperStats`](diesel_lease::KeeperStats). Nothing before it.
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
    /// assert_eq!(locks.stats().renewal_statements, 0);
    /// locks.run("import", Hold::at_most(Duration::from_secs(60)), |_| Ok(()))?;
    /// locks.run("export", Hold::at_most(Duration::from_secs(90)), |_| Ok(()))?;
    /// assert_eq!(locks.stats().renewal_statements, 2, "each run's first renewal, by one keeper");
    /// # Ok(())
    /// # }
    /// ```
    pub fn stats(&self) -> diesel_lease::KeeperStats {
        lock(&self.shared.keeper)
            .as_ref()
            .map_or_else(Default::default, |keeper| keeper.stats())
    }

    /// The keeper of every run, started on first use.
    fn keeper(&self) -> Result<Arc<Keeper<C>>, Error> {
        let mut keeper = lock(&self.shared.keeper);
        if let Some(keeper) = keeper.as_ref() {
            return Ok(Arc::clone(keeper));
        }
        let settings = diesel_lease::KeeperSettings::new(self.shared.lease);
        let started = Arc::new(Keeper::start(self.shared.pool.clone(), settings)?);
        *keeper = Some(Arc::clone(&started));
        Ok(started)
    }

    /// Claims the lock of task `name` for a new run of this node; who holds it, if another run
    /// does.
    fn take(&self, name: &str) -> Result<Taken, Error> {
        let claim = Claim::new(&self.shared.node)?;
        let conn = &mut *self.shared.pool.get()?;
        for _ in 0..ATTEMPTS {
            let refused = match conn.claim_task(name, &claim, self.shared.lease)? {
                Claimed::Won(won) => return Ok(Taken::Won(won)),
                Claimed::Refused(refused) => refused,
            };
            match refused.why() {
                Refusal::Held(holder) => return Ok(Taken::HeldBy(holder.clone())),
                Refusal::NoSuchRow => conn.create_task(name)?,
                // Freed, or outlived, since the claim: claim it again.
                Refusal::Free | Refusal::Outlived { .. } => {}
                // NotClaimable, or a refusal this crate does not know (the lease layer's
                // `Refusal` may grow): never claimed again blindly.
                _ => return Err(Error::Unclaimable(name.to_owned())),
            }
        }
        Err(Error::Contended(format!(
            "the lock of task {name:?} was found free, outlived or missing {ATTEMPTS} times in a row"
        )))
    }

    /// Ends a run whose task gave back a value: releases its lock (or dates it, before its
    /// shortest hold); a lock lost during the run, or no longer the run's at its end, is
    /// [`Error::LockLost`].
    fn finish(&self, name: &str, kept: &Kept<task_locks::table>) -> Result<(), Error> {
        let lost = kept.check().err();
        let released = C::release_task(&mut *self.shared.pool.get()?, kept)?;
        match lost {
            Some(lost) => Err(Error::LockLost(lost)),
            None if released.is_empty() => Err(Error::LockLost(LeaseLost {
                rows: vec![name.to_owned()],
                reason: LossReason::TakenOver,
                cause: None,
            })),
            None => Ok(()),
        }
    }
}

/// A mutex's guard; a poisoned mutex holds plain data that is still sound.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}
