//! Scheduled-task locks by name (what ShedLock is used for), built on the generic lease layer:
//! of the nodes that run a task on a schedule, one runs it at a time, and a run that ends early
//! can hold the lock a while longer, so that no other node runs the task again too soon.
//!
//! [`TaskLocks::run`] runs a closure under the lock of a task's name, held at most and at least
//! as a [`Hold`] says, or says which node's run holds the lock. The locks are rows of
//! [`schema::task_locks`], one per task, claimed through [`ClaimLease`](diesel_lease::ClaimLease) and
//! kept by a [`Keeper`](diesel_lease::Keeper): every decision by the database's clock, nothing held
//! between statements (no advisory lock, no pinned connection). Migrations for each backend are
//! embedded ([`run_migrations`]).
//!
//! ```
//! # include!("doctest_setup.rs");
//! use std::time::Duration;
//! use diesel_lease_tasks::{Hold, TaskLocks, TaskRun};
//! use diesel_lease::Lease;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let pool = tasks_pool()?;
//! diesel_lease_tasks::run_migrations(&mut *pool.get()?)?;
//! let locks = TaskLocks::new(pool, "node-a", Lease::from_secs(30)?)?;
//! let hold = Hold::at_most(Duration::from_secs(600)).at_least(Duration::from_secs(10));
//! let run = locks.run("nightly-report", hold, |task| {
//!     // ... the report, checking the lock before each effect outside the database:
//!     task.check()?;
//!     Ok(())
//! })?;
//! assert_eq!(run, TaskRun::Ran(()));
//! # Ok(())
//! # }
//! ```
#![doc = include_str!("GUIDE.md")]
#![forbid(unsafe_code)]
#![warn(missing_docs, missing_debug_implementations, unreachable_pub)]
#![warn(clippy::unwrap_used, clippy::expect_used)]

// The doctests' shared setup, which they pull in with `include!`, declared for rustfmt alone and
// never compiled as part of the library.
#[cfg(any())]
mod doctest_setup;

mod connection;
mod error;
mod hold;
mod locks;
mod migrations;
mod run;
pub mod schema;

pub use connection::TaskConnection;
pub use error::{Error, TaskError};
pub use hold::Hold;
pub use locks::TaskLocks;
pub use migrations::{run_migrations, TaskMigrations};
pub use run::{RunningTask, TaskRun};
