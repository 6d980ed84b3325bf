//! What each backend decides for itself: how a claim reports its winners, how a batch picks its
//! rows, how a release reports the rows it changed. The traits are here; their impls live in
//! `src/pg`, `src/mysql` and `src/sqlite`. Also the small SQL nodes the claim statements share.
use std::marker::PhantomData;

use diesel::backend::Backend;
use diesel::connection::{Connection, TransactionManager};
use diesel::dsl;
use diesel::expression::{is_aggregate, AppearsOnTable, Expression, ValidGrouping};
use diesel::query_builder::{AsChangeset, AstPass, Query, QueryFragment, QueryId};
use diesel::result::{DatabaseErrorKind, Error as DieselError};
use diesel::sql_types::{Bool, Nullable};
use diesel::{ExpressionMethods, QueryResult, RunQueryDsl, Table};

use crate::claim_lease::{ClaimedAtOf, ClockOf, OwnerOf, TokenOf};
use crate::{Claim, ClaimLease, Now};

/// A statement that can give back `Selection` of the rows it changes (`RETURNING`).
#[doc(hidden)]
pub trait ReturnsSelection<Selection> {
    /// The statement with its `RETURNING` clause.
    type Returning;

    /// Adds `RETURNING selection`.
    fn returning(self, selection: Selection) -> Self::Returning;
}

/// How a backend runs a claiming statement and learns which rows it won: from the statement
/// itself (`RETURNING`), or from its matched-row count and a read of the rows by the claim's
/// token right after (MySQL/MariaDB).
///
/// Implemented by the library for each backend; a table author never implements it.
///
/// ```
/// # include!("doctest_setup.rs");
/// # #[cfg(feature = "sqlite")]
/// fn reports<'q, S, Sel, RB, C, R>()
/// where
///     diesel::sqlite::Sqlite: diesel_lease::ReportsWinners<'q, S, Sel, RB, C, R>,
/// {
/// }
/// # fn main() {}
/// ```
pub trait ReportsWinners<'q, Statement, Selection, ReadBack, C, R>: Backend {
    /// Runs `statement` and gives back `selection` of the row it won, if it won one.
    /// `read_back` selects the same of the row the claim's token holds, for backends without
    /// `RETURNING`.
    #[doc(hidden)]
    fn winner(
        statement: Statement,
        selection: Selection,
        read_back: ReadBack,
        conn: &mut C,
    ) -> QueryResult<Option<R>>;
}

/// How a backend finishes rows a claim holds in one guarded `UPDATE` and learns which it
/// changed: `RETURNING` their keys, or (MySQL/MariaDB) by locking the rows the token still holds
/// first, in the same short transaction.
///
/// ```
/// # include!("doctest_setup.rs");
/// # #[cfg(feature = "sqlite")]
/// fn releases<'q, U, K, L, C, Key>()
/// where
///     diesel::sqlite::Sqlite: diesel_lease::ReleasesRows<'q, U, K, L, C, Key>,
/// {
/// }
/// # fn main() {}
/// ```
pub trait ReleasesRows<'q, Statement, KeyColumns, Locking, C, Key>: Backend {
    /// Runs `statement` and gives back the keys of the rows it changed. `only` is the key when
    /// the statement names one row, whose matched count then says whether it changed.
    #[doc(hidden)]
    fn released(
        statement: Statement,
        keys: KeyColumns,
        locking: Locking,
        only: Option<Key>,
        conn: &mut C,
    ) -> QueryResult<Vec<Key>>;
}

/// A backend that learns what a statement changed from its `RETURNING` rows: the winners of a
/// claim, the keys a release changed.
#[cfg(any(feature = "postgres", feature = "sqlite"))]
macro_rules! reports_by_returning {
    ($backend:ty) => {
        impl $crate::SupportsReturning for $backend {}

        impl<'q, S, Selection, ReadBack, C, R>
            $crate::ReportsWinners<'q, S, Selection, ReadBack, C, R> for $backend
        where
            C: diesel::Connection<Backend = $backend>,
            S: $crate::strategy::ReturnsSelection<Selection>,
            S::Returning: diesel::query_dsl::LoadQuery<'q, C, R>,
        {
            fn winner(
                statement: S,
                selection: Selection,
                _: ReadBack,
                conn: &mut C,
            ) -> diesel::QueryResult<Option<R>> {
                let statement = statement.returning(selection);
                diesel::OptionalExtension::optional(diesel::RunQueryDsl::get_result(
                    statement, conn,
                ))
            }
        }

        impl<'q, T, F, O, Set, Selection, Changed, C, R>
            $crate::RunsBatchUpdates<
                'q,
                $crate::BatchUpdateParts<T, F, O, Set, Selection, Changed>,
                C,
                R,
            > for $backend
        where
            C: diesel::Connection<Backend = $backend>,
            T: $crate::ClaimLease,
            Set: diesel::query_builder::AsChangeset<Target = T>,
            $crate::BatchUpdate<T, F, O, Set, $crate::Returning<Selection>>:
                diesel::query_dsl::LoadQuery<'q, C, R>,
        {
            fn run_batch(
                parts: $crate::BatchUpdateParts<T, F, O, Set, Selection, Changed>,
                conn: &mut C,
            ) -> diesel::QueryResult<Vec<R>> {
                let (statement, selection) = parts.into_statement();
                let statement = $crate::strategy::ReturnsSelection::returning(statement, selection);
                diesel::RunQueryDsl::load(statement, conn)
            }
        }

        impl<S, KeyAndToken, ReadBack, C, Row> $crate::RenewsRows<S, KeyAndToken, ReadBack, C, Row>
            for $backend
        where
            C: diesel::Connection<Backend = $backend>,
            S: $crate::strategy::ReturnsSelection<KeyAndToken>,
            S::Returning: diesel::query_dsl::LoadQuery<'static, C, Row>,
        {
            fn renewed(
                statement: S,
                key_and_token: KeyAndToken,
                _: ReadBack,
                conn: &mut C,
            ) -> diesel::QueryResult<Vec<Row>> {
                diesel::RunQueryDsl::load(statement.returning(key_and_token), conn)
            }
        }

        impl<'q, S, Keys, Locking, C, Key> $crate::ReleasesRows<'q, S, Keys, Locking, C, Key>
            for $backend
        where
            C: diesel::Connection<Backend = $backend>,
            S: $crate::strategy::ReturnsSelection<Keys>,
            S::Returning: diesel::query_dsl::LoadQuery<'q, C, Key>,
        {
            fn released(
                statement: S,
                keys: Keys,
                _: Locking,
                _: Option<Key>,
                conn: &mut C,
            ) -> diesel::QueryResult<Vec<Key>> {
                diesel::RunQueryDsl::load(statement.returning(keys), conn)
            }
        }
    };
}
#[cfg(any(feature = "postgres", feature = "sqlite"))]
pub(crate) use reports_by_returning;

/// How a backend writes a batch claim: an `UPDATE` of at most `limit` claimable rows, in the
/// caller's order, that no two concurrent claims can both win.
#[doc(hidden)]
pub trait ClaimsBatches: crate::DatabaseClock {
    /// Writes the whole `UPDATE`, without its `RETURNING` clause.
    fn walk_batch_claim<'b>(
        batch: BatchParts<'b, Self>,
        out: AstPass<'_, 'b, Self>,
    ) -> QueryResult<()>;
}

/// The parts of a batch claim, each rendered by the generic layer, put together by a backend.
#[doc(hidden)]
#[allow(missing_debug_implementations)] // references to SQL nodes
pub struct BatchParts<'b, DB: Backend> {
    /// The table, as in `FROM`.
    pub table: &'b dyn QueryFragment<DB>,
    /// The primary key's columns, comma-separated.
    pub primary_key: &'b dyn QueryFragment<DB>,
    /// The assignments of the `SET` list.
    pub set: &'b dyn QueryFragment<DB>,
    /// Which rows may be claimed: the caller's filter and the lease's.
    pub filter: &'b dyn QueryFragment<DB>,
    /// The caller's order, or `None`.
    pub order: Option<&'b dyn QueryFragment<DB>>,
    /// The most rows to claim.
    pub limit: &'b i64,
}

#[cfg(any(feature = "postgres", feature = "sqlite"))]
impl<DB: Backend> BatchParts<'_, DB> {
    /// `UPDATE table SET ..`: how every backend's batch claim starts or ends.
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

/// The changeset that takes a row for a claim, owning its values, so that a claim statement
/// writes its own claim and no other.
#[doc(hidden)]
pub type TakenBy<T> = (
    dsl::Eq<OwnerOf<T>, String>,
    dsl::Eq<TokenOf<T>, String>,
    dsl::Eq<ClaimedAtOf<T>, Now<ClockOf<T>>>,
    FenceBump<T>,
);

/// What a take does to a table's fence: `fence = fence + 1`, or nothing.
#[doc(hidden)]
pub type FenceBump<T> = <<T as ClaimLease>::Fence as crate::Fence<T>>::Bump;

/// How a claim reads a table's fence back: the column, or `NULL`.
#[doc(hidden)]
pub type FenceRead<T> = <<T as ClaimLease>::Fence as crate::Fence<T>>::Read;

pub(crate) fn taken_by<T: ClaimLease>(claim: &Claim) -> TakenBy<T> {
    (
        T::Owner::default().eq(claim.owner().to_owned()),
        T::ClaimToken::default().eq(claim.token().to_owned()),
        T::ClaimedAt::default().eq(Now::default()),
        <T::Fence as crate::Fence<T>>::bump(),
    )
}

/// The predicate that a claim's token holds the row, owning the token.
pub(crate) type HeldByToken<T> = dsl::Eq<TokenOf<T>, String>;

pub(crate) fn held_by_token<T: ClaimLease>(claim: &Claim) -> HeldByToken<T> {
    T::ClaimToken::default().eq(claim.token().to_owned())
}

/// No changes of the caller's own: a claim or release sets only the lease columns.
///
/// ```
/// # include!("doctest_setup.rs");
/// # fn main() {
/// let _nothing_else = diesel_lease::NoChanges::<jobs::table>::default();
/// # }
/// ```
#[derive(Debug, Clone, Copy)]
pub struct NoChanges<T>(PhantomData<T>);

impl<T> Default for NoChanges<T> {
    fn default() -> Self {
        Self(PhantomData)
    }
}

impl<T: Table> AsChangeset for NoChanges<T> {
    type Target = T;
    type Changeset = Self;

    fn as_changeset(self) -> Self {
        self
    }
}

impl<T, DB: Backend> QueryFragment<DB> for NoChanges<T> {
    fn walk_ast<'b>(&'b self, _: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        Ok(())
    }
}

/// `(A AND B)`: how the library adds the caller's filters to its own.
///
/// ```
/// # include!("doctest_setup.rs");
/// # use diesel::prelude::*;
/// # fn main() {
/// let _both = diesel_lease::Both::new(jobs::id.eq(1), jobs::status.eq("queued"));
/// # }
/// ```
#[derive(Debug, Clone, Copy, diesel::query_builder::QueryId)]
pub struct Both<A, B>(A, B);

impl<A, B> Both<A, B> {
    /// `(a AND b)`.
    ///
    /// ```
    /// # include!("doctest_setup.rs");
    /// # use diesel::prelude::*;
    /// # fn main() {
    /// let _both = diesel_lease::Both::new(jobs::id.eq(1), jobs::id.eq(2));
    /// # }
    /// ```
    pub fn new(a: A, b: B) -> Self {
        Self(a, b)
    }
}

impl<A: Expression, B: Expression> Expression for Both<A, B> {
    type SqlType = Nullable<Bool>;
}

impl<A: AppearsOnTable<QS>, B: AppearsOnTable<QS>, QS> AppearsOnTable<QS> for Both<A, B> where
    Self: Expression
{
}

impl<A, B, GroupBy> ValidGrouping<GroupBy> for Both<A, B> {
    type IsAggregate = is_aggregate::Never;
}

impl<A: QueryFragment<DB>, B: QueryFragment<DB>, DB: Backend> QueryFragment<DB> for Both<A, B> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        out.push_sql("(");
        self.0.walk_ast(out.reborrow())?;
        out.push_sql(" AND ");
        self.1.walk_ast(out.reborrow())?;
        out.push_sql(")");
        Ok(())
    }
}

/// No row lock: a plain `SELECT`.
#[doc(hidden)]
#[derive(Debug, Clone, Copy, Default, diesel::query_builder::QueryId)]
pub struct NoLock;

/// `FOR UPDATE`: the rows read stay locked until the transaction ends.
#[doc(hidden)]
#[derive(Debug, Clone, Copy, Default, diesel::query_builder::QueryId)]
pub struct ForUpdate;

impl<DB: Backend> QueryFragment<DB> for NoLock {
    fn walk_ast<'b>(&'b self, _: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        Ok(())
    }
}

impl<DB: Backend> QueryFragment<DB> for ForUpdate {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        out.push_sql(" FOR UPDATE");
        Ok(())
    }
}

/// `SELECT selection FROM table WHERE condition`: the reads the library makes of a claimed row
/// (its read-back on MySQL/MariaDB, why a claim was refused), without Diesel's query builder,
/// whose bounds do not resolve over a generic table.
#[doc(hidden)]
pub struct SelectWhere<T: Table, Selection, Condition, Lock = NoLock> {
    from_clause: T::FromClause,
    selection: Selection,
    condition: Condition,
    lock: Lock,
}

impl<T: Table, Selection, Condition, Lock> std::fmt::Debug
    for SelectWhere<T, Selection, Condition, Lock>
{
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(std::any::type_name::<Self>())
    }
}

impl<T: Table, Selection, Condition, Lock: Default> SelectWhere<T, Selection, Condition, Lock> {
    pub(crate) fn new(table: T, selection: Selection, condition: Condition) -> Self {
        Self {
            from_clause: table.from_clause(),
            selection,
            condition,
            lock: Lock::default(),
        }
    }
}

impl<T, Selection, Condition, Lock, DB> QueryFragment<DB>
    for SelectWhere<T, Selection, Condition, Lock>
where
    DB: Backend,
    T: Table,
    T::FromClause: QueryFragment<DB>,
    Selection: QueryFragment<DB>,
    Condition: QueryFragment<DB>,
    Lock: QueryFragment<DB>,
{
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        out.push_sql("SELECT ");
        self.selection.walk_ast(out.reborrow())?;
        out.push_sql(" FROM ");
        self.from_clause.walk_ast(out.reborrow())?;
        out.push_sql(" WHERE ");
        self.condition.walk_ast(out.reborrow())?;
        self.lock.walk_ast(out.reborrow())
    }
}

/// What a [`SelectWhere`] is cached by: its parts' types.
#[doc(hidden)]
#[derive(Debug)]
pub struct SelectWhereId<T, Selection, Condition, Lock>(
    PhantomData<(T, Selection, Condition, Lock)>,
);

impl<T, Selection, Condition, Lock> QueryId for SelectWhere<T, Selection, Condition, Lock>
where
    T: Table + QueryId,
    Selection: QueryId,
    Condition: QueryId,
    Lock: QueryId,
{
    type QueryId = SelectWhereId<T::QueryId, Selection::QueryId, Condition::QueryId, Lock::QueryId>;
    const HAS_STATIC_QUERY_ID: bool = T::HAS_STATIC_QUERY_ID
        && Selection::HAS_STATIC_QUERY_ID
        && Condition::HAS_STATIC_QUERY_ID
        && Lock::HAS_STATIC_QUERY_ID;
}

impl<T: Table, Selection: Expression, Condition, Lock> Query
    for SelectWhere<T, Selection, Condition, Lock>
{
    type SqlType = Selection::SqlType;
}

impl<T: Table, Selection, Condition, Lock, C> RunQueryDsl<C>
    for SelectWhere<T, Selection, Condition, Lock>
{
}

/// What a backend does to a connection on which a statement that returns rows has just failed
/// with a database error, before anything else runs on it: nothing on PostgreSQL and SQLite. On
/// MySQL/MariaDB the connection's prepared statements are dropped, since the client library can
/// leave the failed one unable to run again (its next execution would wait for ever); see
/// `docs/upstream/mysql-statement-hang.md`. That turns Diesel's statement cache back on for the
/// connection, should it have been off.
///
/// Implemented by the library for each backend; a table author never implements it.
///
/// ```
/// # include!("doctest_setup.rs");
/// # #[cfg(feature = "sqlite")]
/// fn recovers<DB: diesel_lease::RecoversFailedReads>() {}
/// # fn main() {
/// # #[cfg(feature = "sqlite")]
/// recovers::<diesel::sqlite::Sqlite>();
/// # }
/// ```
pub trait RecoversFailedReads: Backend {
    /// Puts `conn` right after a statement that returns rows failed on it.
    #[doc(hidden)]
    fn after_failed_read<C: Connection<Backend = Self>>(conn: &mut C);
}

/// Runs `read`, a statement that returns rows, and lets the backend put the connection right
/// if it failed in the database, before the same statement can run again on it (a retry
/// included): every `SELECT` the library sends goes through here.
pub(crate) fn read_rows<C, R>(
    conn: &mut C,
    read: impl FnOnce(&mut C) -> QueryResult<R>,
) -> QueryResult<R>
where
    C: Connection,
    C::Backend: RecoversFailedReads,
{
    let result = read(conn);
    if let Err(DieselError::DatabaseError(..)) = result {
        C::Backend::after_failed_read(conn);
    }
    result
}

/// A claim that lost a write conflict outside a transaction of the caller's has claimed
/// nothing: a deadlock victim on MySQL/MariaDB, a Galera certification failure, a
/// serialization failure on PostgreSQL. The statement was rolled back alone, so it is a lost
/// race like any other. Inside the caller's transaction the whole transaction is gone, and the
/// caller must hear of it.
pub(crate) fn lost_conflict_claims_nothing<C: Connection, Won: Default>(
    result: QueryResult<Won>,
    conn: &mut C,
) -> QueryResult<Won> {
    match result {
        Err(DieselError::DatabaseError(DatabaseErrorKind::SerializationFailure, _))
            if in_no_transaction(conn) =>
        {
            Ok(Won::default())
        }
        other => other,
    }
}

pub(crate) fn in_no_transaction<C: Connection>(conn: &mut C) -> bool {
    matches!(
        C::TransactionManager::transaction_manager_status_mut(conn).transaction_depth(),
        Ok(None)
    )
}
