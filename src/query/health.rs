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
/// What it reads on each backend (PostgreSQL's table statistics and the oldest transaction
/// holding the cleanup horizon back, InnoDB's history list and oldest read view, SQLite's
/// write-ahead log and free pages), what each reading means and when it warns:
/// [docs/operations.md](https://github.com/diesel-lease/diesel-lease/blob/main/docs/operations.md#lease-table-health).
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
