//! The table of task locks, one `table!` for every backend.
//!
//! `locked_at` is [`UtcTimestamp`](diesel_lease::sql_types::UtcTimestamp): `TIMESTAMPTZ` on PostgreSQL,
//! `DATETIME(6)` holding UTC on MySQL/MariaDB, TEXT on SQLite; the migrations create the table.
//! Its lease columns are named by [`claim_lease!`](diesel_lease::claim_lease), so every statement of the
//! lease layer reads it: who holds which task's lock, for how long yet, by the database's clock.
//!
//! ```
//! # include!("doctest_setup.rs");
//! use diesel_lease::prelude::*;
//! use diesel_lease_tasks::schema::task_locks;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let pool = tasks_pool()?;
//! let held = task_locks::table.holders(Lease::from_secs(30)?).run(&mut pool.get()?)?;
//! assert!(held.is_empty(), "no task runs");
//! # Ok(())
//! # }
//! ```
#![allow(missing_docs)] // the items table! generates for each column; the columns are documented

diesel::table! {
    use diesel::sql_types::*;
    use diesel_lease::sql_types::UtcTimestamp;

    /// The lock of each scheduled task, by the task's name; a task's row is created by its
    /// first run.
    task_locks (name) {
        /// The task's name.
        name -> Text,
        /// The node whose run holds the lock.
        locked_by -> Nullable<Text>,
        /// The run that holds the lock.
        lock_token -> Nullable<Text>,
        /// Since when, by the database's clock: the lock's claim or last renewal, or, after a run
        /// that ended before its shortest hold, a time dated so that the lock frees when the hold
        /// ends (to come, when the hold is longer than the lease).
        locked_at -> Nullable<UtcTimestamp>,
    }
}

diesel_lease::claim_lease!(task_locks {
    owner: locked_by,
    claim_token: lock_token,
    claimed_at: locked_at,
});
