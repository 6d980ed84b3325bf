//! `SELECT .. FROM .. WHERE ..`, with or without a row lock, over any table.
use std::marker::PhantomData;

use diesel::backend::Backend;
use diesel::expression::Expression;
use diesel::query_builder::{AstPass, Query, QueryFragment, QueryId};
use diesel::query_dsl::RunQueryDslSupport;
use diesel::{QueryResult, Table};

use crate::backend::LeaseBackend;

/// No row lock: a plain `SELECT`.
///
/// ```
/// let _plain = diesel_lease::__private::sql::NoLock;
/// ```
#[derive(Debug, Clone, Copy, Default, diesel::query_builder::QueryId)]
pub struct NoLock;

/// `FOR UPDATE`: the rows read stay locked until the transaction ends.
///
/// ```
/// let _locking = diesel_lease::__private::sql::ForUpdate;
/// ```
#[derive(Debug, Clone, Copy, Default, diesel::query_builder::QueryId)]
pub struct ForUpdate;

/// The rows read stay locked until the transaction ends, and those another transaction holds
/// locked are passed over: `FOR UPDATE SKIP LOCKED`, as the backend writes it
/// ([`LeaseBackend::LOCK_PASSING_LOCKED`]), the rows named by their keys reached as
/// [`ForUpdateByKey`] reaches them.
///
/// ```
/// let _passing = diesel_lease::__private::sql::PassingLocked;
/// ```
#[derive(Debug, Clone, Copy, Default, diesel::query_builder::QueryId)]
pub struct PassingLocked;

/// Rows named by their keys, reached as [`ForUpdateByKey`] reaches them.
impl<DB: LeaseBackend> ReadLock<DB> for PassingLocked {
    fn walk_access<'b>(&'b self, out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        DB::walk_primary_key_access(out)
    }

    fn walk_lock<'b>(&'b self, mut out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        if let Some(clause) = DB::LOCK_PASSING_LOCKED {
            out.push_sql(clause);
        }
        Ok(())
    }
}

/// `FOR UPDATE` of rows named by their keys, reached through the primary key where a backend can
/// be told so
/// ([`LeaseBackend::walk_primary_key_access`](crate::backend::LeaseBackend::walk_primary_key_access)):
/// MariaDB may otherwise read them through another index, or past the range optimizer's limit
/// scan the whole table, locking what it passes.
///
/// ```
/// let _locking = diesel_lease::__private::sql::ForUpdateByKey;
/// ```
#[derive(Debug, Clone, Copy, Default, diesel::query_builder::QueryId)]
pub struct ForUpdateByKey;

/// How a [`SelectWhere`] reaches the rows it reads, and whether it locks them.
pub trait ReadLock<DB: Backend> {
    /// Written after the table: how the read reaches its rows; nothing but for reads by key.
    fn walk_access<'b>(&'b self, out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        let _ = out;
        Ok(())
    }

    /// Written after the condition: the locking clause, if any.
    fn walk_lock<'b>(&'b self, out: AstPass<'_, 'b, DB>) -> QueryResult<()>;
}

impl<DB: Backend> ReadLock<DB> for NoLock {
    fn walk_lock<'b>(&'b self, _: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        Ok(())
    }
}

impl<DB: Backend> ReadLock<DB> for ForUpdate {
    fn walk_lock<'b>(&'b self, mut out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        out.push_sql(" FOR UPDATE");
        Ok(())
    }
}

impl<DB: LeaseBackend> ReadLock<DB> for ForUpdateByKey {
    fn walk_access<'b>(&'b self, out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        DB::walk_primary_key_access(out)
    }

    fn walk_lock<'b>(&'b self, mut out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        out.push_sql(" FOR UPDATE");
        Ok(())
    }
}

/// `SELECT selection FROM table WHERE condition`: the reads the library makes of claimed rows
/// (their read-back on MySQL/MariaDB, why a claim was refused, who holds what), without Diesel's
/// query builder, whose bounds do not resolve over a generic table. Cached by its parts' types
/// when each part's SQL is fixed by its type, else by its SQL text.
///
/// ```
/// # include!("../doctest_setup.rs");
/// # use diesel::prelude::*;
/// use diesel_lease::__private::sql::{NoLock, SelectWhere};
///
/// # fn main() -> Result<(), diesel_lease::Error> {
/// # let conn = &mut jobs_connection()?;
/// let read: SelectWhere<jobs::table, jobs::status, _, NoLock> = SelectWhere::new(jobs::table, jobs::status, jobs::id.eq(1));
/// let status: String = read.get_result(conn)?;
/// assert_eq!(status, "queued");
/// # Ok(())
/// # }
/// ```
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
    /// `SELECT selection FROM table WHERE condition`, with the lock `Lock`.
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use diesel::prelude::*;
    /// use diesel_lease::__private::sql::{ForUpdate, SelectWhere};
    ///
    /// # fn main() {
    /// let queued: SelectWhere<jobs::table, jobs::id, _, ForUpdate> =
    ///     SelectWhere::new(jobs::table, jobs::id, jobs::status.eq("queued"));
    /// # let _ = queued;
    /// # }
    /// ```
    pub fn new(table: T, selection: Selection, condition: Condition) -> Self {
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
    Lock: ReadLock<DB>,
{
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        out.push_sql("SELECT ");
        self.selection.walk_ast(out.reborrow())?;
        out.push_sql(" FROM ");
        self.from_clause.walk_ast(out.reborrow())?;
        self.lock.walk_access(out.reborrow())?;
        out.push_sql(" WHERE ");
        self.condition.walk_ast(out.reborrow())?;
        self.lock.walk_lock(out.reborrow())
    }
}

/// What a [`SelectWhere`] is cached by: its parts' types.
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

impl<T: Table, Selection, Condition, Lock> RunQueryDslSupport
    for SelectWhere<T, Selection, Condition, Lock>
{
}

/// `SELECT owner, COUNT(*) FROM table WHERE token IS NOT NULL GROUP BY owner ORDER BY owner`,
/// the owners grouped exactly, whatever the column's collation (as
/// [`TextIs`](crate::dsl::TextIs) compares them): the read behind
/// [`LeaseDsl::held_per_owner`](crate::LeaseDsl::held_per_owner).
///
/// ```
/// # include!("../doctest_setup.rs");
/// # fn main() {
/// let _read = diesel_lease::__private::sql::CountPerOwner::new(jobs::table);
/// # }
/// ```
pub struct CountPerOwner<T: Table> {
    from_clause: T::FromClause,
    owner: Identifier,
}

/// A column by its name alone, unqualified.
#[derive(Debug, Clone, Copy)]
struct Identifier(&'static str);

impl<DB: Backend> QueryFragment<DB> for Identifier {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        out.push_identifier(self.0)
    }
}

impl<T: Table> std::fmt::Debug for CountPerOwner<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(std::any::type_name::<Self>())
    }
}

impl<T: crate::ClaimLease> CountPerOwner<T> {
    /// The read of `table`.
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # fn main() {
    /// let _read = diesel_lease::__private::sql::CountPerOwner::new(jobs::table);
    /// # }
    /// ```
    pub fn new(table: T) -> Self {
        Self {
            from_clause: table.from_clause(),
            owner: Identifier(<crate::table::OwnerOf<T> as diesel::Column>::NAME),
        }
    }
}

impl<T, DB> QueryFragment<DB> for CountPerOwner<T>
where
    DB: crate::backend::LeaseBackend,
    T: crate::ClaimLease,
    T::FromClause: QueryFragment<DB>,
{
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        out.push_sql("SELECT ");
        self.owner.walk_ast(out.reborrow())?;
        out.push_sql(", COUNT(*) FROM ");
        self.from_clause.walk_ast(out.reborrow())?;
        out.push_sql(" WHERE ");
        out.push_identifier(<crate::table::TokenOf<T> as diesel::Column>::NAME)?;
        // Grouped exactly: a collation that ignores case would count `Worker-1`'s rows and
        // `worker-1`'s as one owner's, under either name. By the column too, so that every
        // server lets it be selected.
        out.push_sql(" IS NOT NULL GROUP BY ");
        DB::walk_exact_text(&self.owner, out.reborrow())?;
        out.push_sql(", ");
        self.owner.walk_ast(out.reborrow())?;
        out.push_sql(" ORDER BY ");
        self.owner.walk_ast(out.reborrow())?;
        out.push_sql(", ");
        DB::walk_exact_text(&self.owner, out.reborrow())
    }
}

/// Cached by its table: its SQL is fixed by the table's type.
impl<T: Table + QueryId + 'static> QueryId for CountPerOwner<T> {
    type QueryId = Self;
    const HAS_STATIC_QUERY_ID: bool = T::HAS_STATIC_QUERY_ID;
}

impl<T: Table> Query for CountPerOwner<T> {
    type SqlType = (
        diesel::sql_types::Nullable<diesel::sql_types::Text>,
        diesel::sql_types::BigInt,
    );
}

impl<T: Table> RunQueryDslSupport for CountPerOwner<T> {}
