//! A bounded batch `UPDATE`: at most N rows matching a filter, in an order, changed by one
//! statement (or one short transaction) that concurrent batches cannot both change. Claims and
//! reaps are both made of it.
use diesel::backend::Backend;
use diesel::expression::Expression;
use diesel::query_builder::{AsChangeset, AstPass, Query, QueryFragment, QueryId};
use diesel::serialize::ToSql;
use diesel::sql_types::{BigInt, HasSqlType};
use diesel::{QueryResult, RunQueryDsl, Table};

use crate::release_rows::KeyIn;
use crate::strategy::{BatchParts, Both, ClaimsBatches, ReturnsSelection, SelectWhere};
use crate::{ClaimLease, Error, NoReturning, Returning, Update, Where};

/// The most rows one batch may claim or reap.
pub(crate) const MAX_BATCH: usize = 10_000;

/// `size` as a statement's `LIMIT`, or [`Error::InvalidBatchSize`] before anything is sent.
pub(crate) fn batch_limit(size: usize) -> Result<i64, Error> {
    match i64::try_from(size) {
        Ok(limit) if (1..=MAX_BATCH).contains(&size) => Ok(limit),
        _ => Err(Error::InvalidBatchSize(format!(
            "{size} is outside 1..={MAX_BATCH}"
        ))),
    }
}

/// How a backend runs a batch update and learns which rows it changed: one `UPDATE ..
/// RETURNING` (PostgreSQL, SQLite), or a short transaction that locks the candidates' keys first
/// (MySQL/MariaDB).
///
/// ```
/// # include!("doctest_setup.rs");
/// # #[cfg(feature = "sqlite")]
/// fn runs<'q, Parts, C, R>()
/// where
///     diesel::sqlite::Sqlite: diesel_lease::RunsBatchUpdates<'q, Parts, C, R>,
/// {
/// }
/// # fn main() {}
/// ```
pub trait RunsBatchUpdates<'q, Parts, C, R>: Backend {
    /// Runs the batch update made of `parts` and gives back the rows it changed.
    #[doc(hidden)]
    fn run_batch(parts: Parts, conn: &mut C) -> QueryResult<Vec<R>>;
}

/// Everything a backend needs to run a batch update, for it to build the statements its way
/// ([`RunsBatchUpdates`]).
#[doc(hidden)]
#[derive(Debug)]
pub struct BatchUpdateParts<T, F, O, Set, Selection, Changed> {
    pub(crate) table: T,
    pub(crate) filter: F,
    pub(crate) order: O,
    pub(crate) limit: i64,
    pub(crate) set: Set,
    pub(crate) selection: Selection,
    /// What the `UPDATE` leaves on each row it changed (a claim's token, a reap's `NULL`): how
    /// a read after it tells the rows it changed from the rows it passed over. Only backends
    /// without `RETURNING` read it.
    #[cfg_attr(not(feature = "mysql"), allow(dead_code))]
    pub(crate) changed: Changed,
}

impl<T: ClaimLease, F, O, Set, Selection, Changed>
    BatchUpdateParts<T, F, O, Set, Selection, Changed>
{
    /// The one `UPDATE` that picks the rows and changes them (PostgreSQL, SQLite), and the
    /// selection it should return.
    #[cfg(any(feature = "postgres", feature = "sqlite"))]
    pub(crate) fn into_statement(self) -> (BatchUpdate<T, F, O, Set, NoReturning>, Selection)
    where
        Set: AsChangeset<Target = T>,
    {
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

    /// The keys of the rows to change, locked, skipping rows another transaction has locked
    /// (MySQL/MariaDB, in a transaction).
    #[cfg(feature = "mysql")]
    pub(crate) fn candidates(&self) -> Candidates<T, F, O>
    where
        F: Clone,
        O: Clone,
    {
        Candidates {
            from_clause: self.table.from_clause(),
            primary_key: self.table.primary_key(),
            filter: self.filter.clone(),
            order: self.order.clone(),
            limit: self.limit,
        }
    }

    /// The `UPDATE` of the rows with `keys`, still matching the filter, and the read of the rows
    /// it changed (MySQL/MariaDB, in the transaction that locked them). The filter may read
    /// other tables, which the lock does not hold still: a row it no longer matches is passed
    /// over, and the read tells it by what the `UPDATE` leaves on the rows it changed.
    #[cfg(feature = "mysql")]
    pub(crate) fn by_keys<K: Clone>(
        self,
        keys: Vec<K>,
    ) -> KeyedBatch<T, F, Set, Selection, K, Changed>
    where
        Set: AsChangeset<Target = T>,
    {
        let key_in = |keys| KeyIn::new(self.table.primary_key(), keys);
        let changed = Both::new(key_in(keys.clone()), self.changed);
        let read_back = SelectWhere::new(self.table, self.selection, changed);
        let statement = Update::new(
            self.table,
            Where::new(Both::new(key_in(keys), self.filter)),
            self.set,
        );
        (statement, read_back)
    }
}

/// The `UPDATE` of a batch by its keys, and the read of its rows (MySQL/MariaDB).
#[cfg(feature = "mysql")]
type KeyedBatch<T, F, Set, Selection, K, Changed> = (
    KeyedBatchUpdate<T, F, Set, K>,
    KeyedReadBack<T, Selection, K, Changed>,
);

/// The `UPDATE` of a batch by the keys its candidates locked (MySQL/MariaDB).
#[doc(hidden)]
pub type KeyedBatchUpdate<T, F, Set, K> =
    Update<T, Where<Both<KeyIn<<T as Table>::PrimaryKey, K>, F>>, Set>;

/// The read of the rows a batch changed, by their keys and what the change left on them
/// (MySQL/MariaDB), locked by the same transaction.
#[doc(hidden)]
pub type KeyedReadBack<T, Selection, K, Changed> =
    SelectWhere<T, Selection, Both<KeyIn<<T as Table>::PrimaryKey, K>, Changed>>;

/// `SELECT key FROM table WHERE .. ORDER BY .. LIMIT n FOR UPDATE SKIP LOCKED`.
#[doc(hidden)]
pub struct Candidates<T: Table, F, O> {
    from_clause: T::FromClause,
    primary_key: T::PrimaryKey,
    filter: F,
    order: O,
    limit: i64,
}

impl<T: Table, F, O> std::fmt::Debug for Candidates<T, F, O> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(std::any::type_name::<Self>())
    }
}

impl<T, F, O, DB> QueryFragment<DB> for Candidates<T, F, O>
where
    DB: Backend + HasSqlType<BigInt>,
    i64: ToSql<BigInt, DB>,
    T: Table,
    T::FromClause: QueryFragment<DB>,
    T::PrimaryKey: QueryFragment<DB>,
    F: QueryFragment<DB>,
    O: QueryFragment<DB>,
{
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        out.push_sql("SELECT ");
        self.primary_key.walk_ast(out.reborrow())?;
        out.push_sql(" FROM ");
        self.from_clause.walk_ast(out.reborrow())?;
        out.push_sql(" WHERE ");
        self.filter.walk_ast(out.reborrow())?;
        if !self.order.is_noop(out.backend())? {
            out.push_sql(" ORDER BY ");
            self.order.walk_ast(out.reborrow())?;
        }
        out.push_sql(" LIMIT ");
        out.push_bind_param::<BigInt, _>(&self.limit)?;
        out.push_sql(" FOR UPDATE SKIP LOCKED");
        Ok(())
    }
}

/// Cached by its SQL text: the caller's filter may vary it.
impl<T: Table, F, O> QueryId for Candidates<T, F, O> {
    type QueryId = ();
    const HAS_STATIC_QUERY_ID: bool = false;
}

impl<T: Table, F, O> Query for Candidates<T, F, O>
where
    T::PrimaryKey: Expression,
{
    type SqlType = <T::PrimaryKey as Expression>::SqlType;
}

impl<T: Table, F, O, C> RunQueryDsl<C> for Candidates<T, F, O> {}

/// No order: the database's choice.
#[doc(hidden)]
#[derive(Debug, Clone, Copy, QueryId)]
pub struct NoOrder;

impl<DB: Backend> QueryFragment<DB> for NoOrder {
    fn walk_ast<'b>(&'b self, _: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        Ok(())
    }
}

/// The caller's order of a batch.
#[doc(hidden)]
#[derive(Debug, Clone, Copy, QueryId)]
pub struct OrderBy<Order>(pub(crate) Order);

impl<DB: Backend, Order: QueryFragment<DB>> QueryFragment<DB> for OrderBy<Order> {
    fn walk_ast<'b>(&'b self, out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        self.0.walk_ast(out)
    }
}

/// The `UPDATE` of a batch; each backend puts its parts together
/// ([`ClaimsBatches`](crate::strategy::ClaimsBatches)).
#[doc(hidden)]
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

impl<T, F, O, Set, Ret, DB> QueryFragment<DB> for BatchUpdate<T, F, O, Set, Ret>
where
    DB: ClaimsBatches,
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
        DB::walk_batch_claim(parts, out.reborrow())?;
        self.returning.walk_ast(out.reborrow())
    }
}

/// Cached by its SQL text, like [`Update`](crate::Update): the caller's changes may vary it.
impl<T: Table, F, O, Set: AsChangeset, Ret> QueryId for BatchUpdate<T, F, O, Set, Ret> {
    type QueryId = ();
    const HAS_STATIC_QUERY_ID: bool = false;
}

impl<T: Table, F, O, Set: AsChangeset, Selection: Expression> Query
    for BatchUpdate<T, F, O, Set, Returning<Selection>>
{
    type SqlType = Selection::SqlType;
}

impl<T: Table, F, O, Set: AsChangeset, Ret, C> RunQueryDsl<C> for BatchUpdate<T, F, O, Set, Ret> {}

impl<T: Table, F, O, Set: AsChangeset, Selection> ReturnsSelection<Selection>
    for BatchUpdate<T, F, O, Set, NoReturning>
{
    type Returning = BatchUpdate<T, F, O, Set, Returning<Selection>>;

    fn returning(self, selection: Selection) -> Self::Returning {
        BatchUpdate {
            from_clause: self.from_clause,
            primary_key: self.primary_key,
            set: self.set,
            filter: self.filter,
            order: self.order,
            limit: self.limit,
            returning: Returning(selection),
        }
    }
}
