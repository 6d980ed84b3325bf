//! A reading of a lease table's health, as a statement of the library's.
use diesel::backend::Backend;
use diesel::connection::Connection;
use diesel::query_builder::QueryFragment;
use diesel::Table;

use crate::backend::NativeLeaseQuery;
use crate::backend::{HealthPlan, LeaseBackend, ReadsHealth, TableName};
use crate::health::{HealthThresholds, TableHealth};
use crate::query::LeaseStatement;
use crate::Error;

/// A reading of table `T`'s health: built by [`LeaseDsl::health`](crate::LeaseDsl::health),
/// judged by [`thresholds`](Self::thresholds) (the defaults of [`HealthThresholds`] unless set),
/// read by `.run(conn)` as a [`TableHealth`].
///
/// What it reads, by backend (the README's "Lease table health" has the table):
///
/// * PostgreSQL: the table's statistics (`pg_stat_all_tables`, for the table the connection's
///   `search_path` finds): updates and HOT updates and their share, live and dead row versions,
///   the time since the last vacuum and autovacuum, whether autovacuum is on for it, its
///   fillfactor and size; and the oldest transaction holding the cleanup horizon back: another
///   session of the database, a session of any database holding a transaction id (which holds
///   back page pruning everywhere), a prepared transaction, a replication slot; with its age by
///   `statement_timestamp()` and in transaction ids, its process id and what it is doing.
///   A role sees other roles' sessions with `pg_read_all_stats` (or `pg_monitor`).
/// * MySQL/MariaDB: the server's history list length (`INNODB_METRICS`, else MariaDB's status
///   variable), the oldest open transaction of another session that keeps a read view
///   (`INNODB_TRX`) with its age by `UTC_TIMESTAMP(6)` (to the second, whatever the session's
///   time zone), and the table's rows and free space (`information_schema.TABLES`: on MySQL 8,
///   cached for `information_schema_stats_expiry`, a day by default, so that they may be that
///   old; MariaDB reads them afresh). It needs the
///   `PROCESS` privilege. The server lists transactions afresh only once no one has read the list
///   for 0.1 s: a caller reading more often sees the same transactions.
/// * SQLite: the write-ahead log's frames and those a **passive checkpoint** could not copy
///   back (it runs one: it never waits for a reader or a writer, and it only copies what no
///   reader still needs; inside a transaction of the caller's it runs none, and the log's
///   readings are absent), and the pages and free pages of the database file.
///
/// Ages are by the database's clock. A table the database does not have is
/// [`Error::TableNotFound`]; a share threshold outside 0 to 1 is [`Error::InvalidThreshold`],
/// before anything is sent.
///
/// ```
/// # include!("../doctest_setup.rs");
/// use std::time::Duration;
/// use diesel_lease::health::Metric;
/// use diesel_lease::prelude::*;
/// use diesel_lease::HealthThresholds;
///
/// # fn main() -> Result<(), diesel_lease::Error> {
/// # let conn = &mut jobs_connection()?;
/// let health = jobs::table
///     .health()
///     .thresholds(HealthThresholds::default().max_transaction_age(Duration::from_secs(60)))
///     .run(conn)?;
/// print!("{health}");
/// assert!(health.get(Metric::Pages).is_some());
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, Copy)]
#[must_use = "a read does nothing until it is run"]
pub struct Health<T> {
    table: T,
    thresholds: HealthThresholds,
}

impl<T: Table> Health<T> {
    pub(crate) fn new(table: T) -> Self {
        Self {
            table,
            thresholds: HealthThresholds::default(),
        }
    }

    /// Judges the readings by `thresholds` rather than the defaults.
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// use diesel_lease::prelude::*;
    /// use diesel_lease::HealthThresholds;
    ///
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let strict = HealthThresholds::default().max_free_space_share(0.1).min_sample(1);
    /// let health = jobs::table.health().thresholds(strict).run(conn)?;
    /// # let _ = health;
    /// let nonsense = jobs::table.health().thresholds(HealthThresholds::default().max_free_space_share(2.0));
    /// assert!(matches!(nonsense.run(conn), Err(diesel_lease::Error::InvalidThreshold(_))));
    /// # Ok(())
    /// # }
    /// ```
    pub fn thresholds(self, thresholds: HealthThresholds) -> Self {
        Self { thresholds, ..self }
    }
}

impl<T: Table> LeaseStatement<TableHealth> for Health<T> {
    type Output = TableHealth;
}

impl<'q, T, C> NativeLeaseQuery<'q, C, TableHealth> for Health<T>
where
    T: Table,
    T::FromClause: QueryFragment<C::Backend>,
    C: Connection,
    C::Backend: LeaseBackend + ReadsHealth<C> + Default,
    <C::Backend as Backend>::QueryBuilder: Default,
{
    fn run_native(self, conn: &mut C) -> Result<TableHealth, Error> {
        self.thresholds.check()?;
        let from = self.table.from_clause();
        let table = TableName::of::<C::Backend>(&from)?;
        let Some(table) = table else {
            return Err(Error::TableNotFound(
                "the table's FROM clause is not a table's name".to_owned(),
            ));
        };
        let missing = format!(
            "{}: the database has no such table where this connection looks",
            table.plain()
        );
        let plan = HealthPlan {
            table,
            thresholds: self.thresholds,
        };
        C::Backend::read_health(&plan, conn)?.ok_or(Error::TableNotFound(missing))
    }
}

impl<T: Table, C> crate::RunLeaseDsl<C> for Health<T> {}
