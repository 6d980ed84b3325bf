//! A bounded batch `UPDATE` in one statement, as PostgreSQL and SQLite write it, and the caller's
//! order of a batch.
use diesel::backend::Backend;
use diesel::expression::Expression;
use diesel::query_builder::{AsChangeset, AstPass, Query, QueryFragment, QueryId};
use diesel::query_dsl::RunQueryDslSupport;
use diesel::{QueryResult, Table};

use super::{NoReturning, ReturningClause};
#[cfg(any(feature = "postgres", feature = "sqlite"))]
use crate::backend::BatchPlan;
use crate::backend::{BatchInOneStatement, BatchParts, ReturnsSelection};
use crate::Error;

/// The most rows one batch may claim or reap.
///
/// ```
/// assert_eq!(diesel_lease::MAX_BATCH_SIZE, 10_000);
/// ```
pub const MAX_BATCH_SIZE: usize = 10_000;

/// `size` as a statement's `LIMIT`, or [`Error::InvalidBatchSize`] before anything is sent.
pub(crate) fn batch_limit(size: usize) -> Result<i64, Error> {
    match i64::try_from(size) {
        Ok(limit) if (1..=MAX_BATCH_SIZE).contains(&size) => Ok(limit),
        _ => Err(Error::InvalidBatchSize(format!(
            "{size} is outside 1..={MAX_BATCH_SIZE}"
        ))),
    }
}

/// No order: the database's choice.
///
/// ```
/// let _any_order = diesel_lease::__private::sql::NoOrder;
/// ```
#[derive(Debug, Clone, Copy, QueryId)]
pub struct NoOrder;

impl<DB: Backend> QueryFragment<DB> for NoOrder {
    fn walk_ast<'b>(&'b self, _: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        Ok(())
    }
}

/// The caller's order of a batch: a column, `column.desc()`, or a tuple of them.
///
/// ```
/// # include!("../doctest_setup.rs");
/// # use diesel::prelude::*;
/// # fn main() {
/// let _oldest_first = diesel_lease::__private::sql::Ordered::new(jobs::id.asc());
/// # }
/// ```
#[derive(Debug, Clone, Copy, QueryId)]
pub struct Ordered<Order>(Order);

impl<Order> Ordered<Order> {
    /// `ORDER BY order`.
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # fn main() {
    /// let _by_id = diesel_lease::__private::sql::Ordered::new(jobs::id);
    /// # }
    /// ```
    pub fn new(order: Order) -> Self {
        Self(order)
    }
}

impl<DB: Backend, Order: QueryFragment<DB>> QueryFragment<DB> for Ordered<Order> {
    fn walk_ast<'b>(&'b self, out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        self.0.walk_ast(out)
    }
}

/// An order a caller's `.order_by(..)` may replace: none, or the caller's own; not a cursor's,
/// which a claim from a cursor keeps.
///
/// ```
/// fn reorderable<O: diesel_lease::__private::sql::CallerOrder>() {}
/// reorderable::<diesel_lease::__private::sql::NoOrder>();
/// ```
#[diagnostic::on_unimplemented(
    message = "a claim from a cursor takes its rows in key order and has no `.order_by(..)`",
    label = "claims from a cursor",
    note = "drop `.from_cursor(..)` to claim in an order of your own, from the queue's head"
)]
pub trait CallerOrder {}

impl CallerOrder for NoOrder {}

impl<Order> CallerOrder for Ordered<Order> {}

/// A batch `UPDATE` in one statement (PostgreSQL, SQLite); each backend puts its parts together
/// ([`BatchInOneStatement`]). Cached by its SQL text, like [`CachedUpdate`](super::CachedUpdate): the
/// caller's changes may vary it.
///
/// ```
/// # include!("../doctest_setup.rs");
/// fn one_statement<T: diesel::Table, F, O, S: diesel::query_builder::AsChangeset, R>(
///     _: &diesel_lease::__private::sql::BatchUpdate<T, F, O, S, R>,
/// ) {
/// }
/// # fn main() {}
/// ```
pub struct BatchUpdate<T: Table, F, O, Set: AsChangeset, Ret> {
    from_clause: T::FromClause,
    primary_key: T::PrimaryKey,
    set: Set::Changeset,
    filter: F,
    order: O,
    limit: i64,
    returning: Ret,
}

impl<T: Table, F, O, Set: AsChangeset, Ret> std::fmt::Debug for BatchUpdate<T, F, O, Set, Ret> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(std::any::type_name::<Self>())
    }
}

#[cfg(any(feature = "postgres", feature = "sqlite"))]
impl<T: Table, F, O, Set: AsChangeset<Target = T>, Selection, Changed>
    BatchPlan<T, F, O, Set, Selection, Changed>
{
    /// The one `UPDATE` that picks the rows and changes them, and the selection it should
    /// return.
    pub(crate) fn into_statement(self) -> (BatchUpdate<T, F, O, Set, NoReturning>, Selection) {
        let statement = BatchUpdate {
            from_clause: self.table.from_clause(),
            primary_key: self.table.primary_key(),
            set: self.set.as_changeset(),
            filter: self.filter,
            order: self.order,
            limit: self.limit,
            returning: NoReturning,
        };
        (statement, self.selection)
    }
}

impl<T, F, O, Set, Ret, DB> QueryFragment<DB> for BatchUpdate<T, F, O, Set, Ret>
where
    DB: BatchInOneStatement,
    T: Table,
    T::FromClause: QueryFragment<DB>,
    T::PrimaryKey: QueryFragment<DB>,
    Set: AsChangeset,
    Set::Changeset: QueryFragment<DB>,
    F: QueryFragment<DB>,
    O: QueryFragment<DB>,
    Ret: QueryFragment<DB>,
{
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        let order: Option<&dyn QueryFragment<DB>> = if self.order.is_noop(out.backend())? {
            None
        } else {
            Some(&self.order)
        };
        let parts = BatchParts {
            table: &self.from_clause,
            primary_key: &self.primary_key,
            set: &self.set,
            filter: &self.filter,
            order,
            limit: &self.limit,
        };
        DB::walk_batch_update(parts, out.reborrow())?;
        self.returning.walk_ast(out.reborrow())
    }
}

/// Cached by its SQL text: the caller's changes may vary it.
impl<T: Table, F, O, Set: AsChangeset, Ret> QueryId for BatchUpdate<T, F, O, Set, Ret> {
    type QueryId = ();
    const HAS_STATIC_QUERY_ID: bool = false;
}

impl<T: Table, F, O, Set: AsChangeset, Selection: Expression> Query
    for BatchUpdate<T, F, O, Set, ReturningClause<Selection>>
{
    type SqlType = Selection::SqlType;
}

impl<T: Table, F, O, Set: AsChangeset, Ret> RunQueryDslSupport for BatchUpdate<T, F, O, Set, Ret> {}

impl<T: Table, F, O, Set: AsChangeset, Selection> ReturnsSelection<Selection>
    for BatchUpdate<T, F, O, Set, NoReturning>
{
    type Returning = BatchUpdate<T, F, O, Set, ReturningClause<Selection>>;

    fn returning(self, selection: Selection) -> Self::Returning {
        BatchUpdate {
            from_clause: self.from_clause,
            primary_key: self.primary_key,
            set: self.set,
            filter: self.filter,
            order: self.order,
            limit: self.limit,
            returning: ReturningClause(selection),
        }
    }
}

#[cfg(any(feature = "postgres", feature = "sqlite"))]
impl<DB: Backend> BatchParts<'_, DB> {
    /// `UPDATE table SET ..`: how a batch `UPDATE` starts or ends.
    pub(crate) fn walk_update_set<'b>(&self, mut out: AstPass<'_, 'b, DB>) -> QueryResult<()>
    where
        Self: 'b,
    {
        out.push_sql("UPDATE ");
        self.table.walk_ast(out.reborrow())?;
        out.push_sql(" SET ");
        self.set.walk_ast(out.reborrow())
    }

    /// ` WHERE filter [ORDER BY order] LIMIT ?`: which rows, how many.
    pub(crate) fn walk_filter_order_limit<'b>(
        &self,
        mut out: AstPass<'_, 'b, DB>,
    ) -> QueryResult<()>
    where
        Self: 'b,
        DB: diesel::sql_types::HasSqlType<diesel::sql_types::BigInt>,
        i64: diesel::serialize::ToSql<diesel::sql_types::BigInt, DB>,
    {
        out.push_sql(" WHERE ");
        self.filter.walk_ast(out.reborrow())?;
        if let Some(order) = self.order {
            out.push_sql(" ORDER BY ");
            order.walk_ast(out.reborrow())?;
        }
        out.push_sql(" LIMIT ");
        out.push_bind_param::<diesel::sql_types::BigInt, _>(self.limit)
    }
}
