//! `UPDATE` statements that Diesel prepares once per connection and SQL text.
//!
//! Diesel marks every `diesel::update(..)` unsafe to cache, since the SQL of an arbitrary
//! changeset may vary with its values (an `Option` field skips its column). Caching it by the
//! SQL it renders is always right: each distinct text is its own prepared statement, so the
//! database parses and plans a claim once per connection instead of at every execution, and a
//! statement can never run under another's SQL.
use diesel::backend::Backend;
use diesel::dsl::SqlTypeOf;
use diesel::expression::Expression;
use diesel::query_builder::{
    AsChangeset, AsQuery, AstPass, IntoUpdateTarget, Query, QueryFragment, QueryId,
};
use diesel::query_dsl::RunQueryDslSupport;
use diesel::result::Error::QueryBuilderError;
use diesel::{QueryResult, Table};

use crate::backend::LeaseBackend;

/// Starts an `UPDATE` of `target` (a table, or a table filtered) that Diesel prepares once per
/// connection and SQL text: `diesel::update`, cached.
///
/// It takes what `diesel::update(..)` takes and gives what it gives (`.set(..)`, then
/// `.execute(..)`, or `RETURNING` rows on PostgreSQL and SQLite). The prepared statement is
/// found by the SQL text the update renders, never by its type: a changeset with `Option` fields
/// renders one text per pattern of `None`s, and each gets its own statement. Values are bound,
/// so the changesets and predicates of [`ClaimLease`] render one text whatever their values.
/// Diesel's own `eq_any` list on MySQL and SQLite varies with its length, and Diesel prepares it
/// at every execution.
///
/// [`ClaimLease`]: crate::ClaimLease
///
/// ```
/// # include!("../doctest_setup.rs");
/// use diesel::prelude::*;
/// use diesel_lease::prelude::*;
///
/// # fn main() -> Result<(), diesel_lease::Error> {
/// # let conn = &mut jobs_connection()?;
/// let (lease, claim) = (Lease::from_secs(30)?, Claim::new("worker-1")?);
/// let claimed = diesel_lease::update(jobs::table.find(1).filter(jobs::table.claimable(lease)))
///     .set((jobs::table.taken(&claim), jobs::status.eq("running")))
///     .execute(conn)?;
/// assert_eq!(claimed, 1);
/// # Ok(())
/// # }
/// ```
pub fn update<T: IntoUpdateTarget>(target: T) -> IncompleteCachedUpdate<T::Table, T::WhereClause> {
    let target = target.into_update_target();
    IncompleteCachedUpdate {
        table: target.table,
        where_clause: target.where_clause,
    }
}

/// An [`update`] waiting for its `.set(..)`.
///
/// ```
/// # include!("../doctest_setup.rs");
/// # use diesel_lease::prelude::*;
/// # fn main() {
/// let _incomplete = diesel_lease::update(jobs::table);
/// # }
/// ```
#[derive(Debug, Clone, Copy)]
pub struct IncompleteCachedUpdate<T, W> {
    table: T,
    where_clause: W,
}

impl<T: Table, W> IncompleteCachedUpdate<T, W> {
    /// The changes: anything `diesel::update(..).set(..)` takes.
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use diesel::prelude::*;
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let done = diesel_lease::update(jobs::table.find(1)).set(jobs::status.eq("done")).execute(conn)?;
    /// assert_eq!(done, 1);
    /// # Ok(())
    /// # }
    /// ```
    pub fn set<Changes: AsChangeset<Target = T>>(
        self,
        changes: Changes,
    ) -> CachedUpdate<T, W, Changes> {
        CachedUpdate {
            from_clause: self.table.from_clause(),
            access: AnyIndex,
            where_clause: self.where_clause,
            values: changes.as_changeset(),
            returning: NoReturning,
        }
    }
}

/// An `UPDATE` that Diesel prepares once per connection; see [`update`].
///
/// ```
/// # include!("../doctest_setup.rs");
/// # use diesel::prelude::*;
/// # use diesel_lease::prelude::*;
/// # fn main() -> Result<(), diesel_lease::Error> {
/// # let conn = &mut jobs_connection()?;
/// let renew: diesel_lease::__private::sql::CachedUpdate<jobs::table, _, _> =
///     diesel_lease::update(jobs::table.filter(jobs::table.held_by("no-such-token"))).set(jobs::table.renewed());
/// assert_eq!(renew.execute(conn)?, 0);
/// # Ok(())
/// # }
/// ```
#[must_use = "an update does nothing until it is executed"]
pub struct CachedUpdate<T: Table, W, Changes: AsChangeset, Ret = NoReturning, Access = AnyIndex> {
    from_clause: T::FromClause,
    access: Access,
    where_clause: W,
    values: Changes::Changeset,
    returning: Ret,
}

/// How an [`CachedUpdate`] reaches its rows: by whatever index the server picks.
///
/// ```
/// let _any = diesel_lease::__private::sql::AnyIndex;
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct AnyIndex;

impl<DB: Backend> QueryFragment<DB> for AnyIndex {
    fn walk_ast<'b>(&'b self, _: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        Ok(())
    }
}

/// How an [`CachedUpdate`] of rows named by their keys reaches them: through the primary key, where a
/// backend can be told so ([`LeaseBackend::walk_primary_key_access`]), so that it locks no row
/// outside its list, whatever plan the table's size or indexes would suggest.
///
/// ```
/// let _by_key = diesel_lease::__private::sql::PrimaryKeyAccess;
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct PrimaryKeyAccess;

impl<DB: LeaseBackend> QueryFragment<DB> for PrimaryKeyAccess {
    fn walk_ast<'b>(&'b self, out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        DB::walk_primary_key_access(out)
    }
}

impl<T: Table, W, Changes: AsChangeset, Ret, Access> std::fmt::Debug
    for CachedUpdate<T, W, Changes, Ret, Access>
{
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(std::any::type_name::<Self>())
    }
}

/// The type of `update(target).set(changes)`, as `diesel::dsl::Update` names `diesel::update`'s.
///
/// ```
/// # include!("../doctest_setup.rs");
/// # use diesel::prelude::*;
/// # use diesel_lease::prelude::*;
/// fn renew(token: &str) -> diesel_lease::__private::sql::CachedUpdateOf<diesel::dsl::Filter<jobs::table, diesel_lease::dsl::HeldBy<'_, jobs::table>>, diesel_lease::dsl::Renewed<jobs::table>> {
///     diesel_lease::update(jobs::table.filter(jobs::table.held_by(token))).set(jobs::table.renewed())
/// }
/// # fn main() {}
/// ```
pub type CachedUpdateOf<Target, Changes> = CachedUpdate<
    <Target as diesel::associations::HasTable>::Table,
    <Target as IntoUpdateTarget>::WhereClause,
    Changes,
>;

/// No `RETURNING` clause: the update gives its matched-row count.
///
/// ```
/// let _nothing = diesel_lease::__private::sql::NoReturning;
/// ```
#[derive(Debug, Clone, Copy, QueryId)]
pub struct NoReturning;

/// `RETURNING` a selection: the update gives what it changed (PostgreSQL, SQLite).
///
/// ```
/// # include!("../doctest_setup.rs");
/// # use diesel::prelude::*;
/// # fn main() {
/// let _changed = diesel_lease::update(jobs::table).set(jobs::status.eq("done")).returning_all();
/// # }
/// ```
#[derive(Debug, Clone, Copy, QueryId)]
pub struct ReturningClause<Selection>(pub(crate) Selection);

/// ` WHERE ` and a condition: the filter of an update the library builds itself.
///
/// ```
/// # include!("../doctest_setup.rs");
/// # use diesel::prelude::*;
/// # fn main() {
/// let _where = diesel_lease::__private::sql::Where::new(jobs::id.eq(1));
/// # }
/// ```
#[derive(Debug, Clone, Copy, QueryId)]
pub struct Where<Condition>(Condition);

impl<Condition> Where<Condition> {
    /// `WHERE condition`.
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use diesel::prelude::*;
    /// # fn main() {
    /// let _where = diesel_lease::__private::sql::Where::new(jobs::status.eq("queued"));
    /// # }
    /// ```
    pub fn new(condition: Condition) -> Self {
        Self(condition)
    }
}

impl<DB: Backend, Condition: QueryFragment<DB>> QueryFragment<DB> for Where<Condition> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        out.push_sql(" WHERE ");
        self.0.walk_ast(out.reborrow())
    }
}

impl<DB: Backend> QueryFragment<DB> for NoReturning {
    fn walk_ast<'b>(&'b self, _: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        Ok(())
    }
}

impl<DB, Selection> QueryFragment<DB> for ReturningClause<Selection>
where
    DB: crate::backend::SupportsReturning,
    Selection: QueryFragment<DB>,
{
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        out.push_sql(" RETURNING ");
        self.0.walk_ast(out.reborrow())
    }
}

impl<T, W, Changes, Ret, Access, DB> QueryFragment<DB> for CachedUpdate<T, W, Changes, Ret, Access>
where
    DB: Backend,
    T: Table,
    T::FromClause: QueryFragment<DB>,
    Access: QueryFragment<DB>,
    W: QueryFragment<DB>,
    Changes: AsChangeset,
    Changes::Changeset: QueryFragment<DB>,
    Ret: QueryFragment<DB>,
{
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        if self.values.is_noop(out.backend())? {
            return Err(QueryBuilderError("an update with no changes".into()));
        }
        // Unlike diesel::update, no `unsafe_to_cache_prepared`: the query id below says when
        // the SQL is fixed by the type.
        out.push_sql("UPDATE ");
        self.from_clause.walk_ast(out.reborrow())?;
        self.access.walk_ast(out.reborrow())?;
        out.push_sql(" SET ");
        self.values.walk_ast(out.reborrow())?;
        self.where_clause.walk_ast(out.reborrow())?;
        self.returning.walk_ast(out.reborrow())
    }
}

/// An [`CachedUpdate`] has no static query id: its changeset's SQL may vary with its values (an
/// `Option` field drops its column when `None`), and Diesel keeps the types that would tell
/// private. Diesel then caches it by its SQL text, which can never run another statement's SQL.
impl<T: Table, W, Changes: AsChangeset, Ret, Access> QueryId
    for CachedUpdate<T, W, Changes, Ret, Access>
{
    type QueryId = ();
    const HAS_STATIC_QUERY_ID: bool = false;
}

impl<T: Table, W, Changes: AsChangeset> CachedUpdate<T, W, Changes> {
    /// The same update giving back the whole rows it changed (`RETURNING`, PostgreSQL and SQLite).
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use diesel::prelude::*;
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// # #[cfg(any(feature = "sqlite", feature = "postgres"))] { // RETURNING
    /// let jobs: Vec<Job> = diesel_lease::update(jobs::table).set(jobs::status.eq("done")).returning_all().load(conn)?;
    /// assert_eq!(jobs.len(), 1);
    /// # }
    /// # Ok(())
    /// # }
    /// ```
    pub fn returning_all(self) -> CachedUpdate<T, W, Changes, ReturningClause<T::AllColumns>> {
        self.returning(T::all_columns())
    }

    /// The same update giving back `selection` of the rows it changed (`RETURNING`, PostgreSQL
    /// and SQLite).
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use diesel::prelude::*;
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// # #[cfg(any(feature = "sqlite", feature = "postgres"))] { // RETURNING
    /// let ids: Vec<i64> = diesel_lease::update(jobs::table).set(jobs::status.eq("done")).returning(jobs::id).load(conn)?;
    /// assert_eq!(ids, [1]);
    /// # }
    /// # Ok(())
    /// # }
    /// ```
    pub fn returning<Selection>(
        self,
        selection: Selection,
    ) -> CachedUpdate<T, W, Changes, ReturningClause<Selection>> {
        self.returning_through(selection)
    }
}

impl<T: Table, W, Changes: AsChangeset, Access> CachedUpdate<T, W, Changes, NoReturning, Access> {
    /// The same update, reaching its rows the same way, giving back `selection`.
    fn returning_through<Selection>(
        self,
        selection: Selection,
    ) -> CachedUpdate<T, W, Changes, ReturningClause<Selection>, Access> {
        CachedUpdate {
            from_clause: self.from_clause,
            access: self.access,
            where_clause: self.where_clause,
            values: self.values,
            returning: ReturningClause(selection),
        }
    }
}

impl<T: Table, W, Changes: AsChangeset> CachedUpdate<T, W, Changes> {
    /// An update the library builds from its parts, where `where_clause` renders ` WHERE ..`.
    pub(crate) fn new(table: T, where_clause: W, changes: Changes) -> Self {
        CachedUpdate {
            from_clause: table.from_clause(),
            access: AnyIndex,
            where_clause,
            values: changes.as_changeset(),
            returning: NoReturning,
        }
    }
}

impl<T: Table, W, Changes: AsChangeset> CachedUpdate<T, W, Changes, NoReturning, PrimaryKeyAccess> {
    /// An update of rows named by their keys, in `where_clause`, reaching them through the
    /// primary key.
    pub(crate) fn by_keys(table: T, where_clause: W, changes: Changes) -> Self {
        CachedUpdate {
            from_clause: table.from_clause(),
            access: PrimaryKeyAccess,
            where_clause,
            values: changes.as_changeset(),
            returning: NoReturning,
        }
    }
}

impl<T, W, Changes, Selection, Access> Query
    for CachedUpdate<T, W, Changes, ReturningClause<Selection>, Access>
where
    T: Table,
    Changes: AsChangeset,
    Selection: Expression,
{
    type SqlType = SqlTypeOf<Selection>;
}

impl<T: Table, W, Changes: AsChangeset> AsQuery for CachedUpdate<T, W, Changes>
where
    CachedUpdate<T, W, Changes, ReturningClause<T::AllColumns>>: Query,
{
    type SqlType = <Self::Query as Query>::SqlType;
    type Query = CachedUpdate<T, W, Changes, ReturningClause<T::AllColumns>>;

    fn as_query(self) -> Self::Query {
        self.returning_all()
    }
}

impl<T: Table, W, Changes: AsChangeset, Ret, Access> RunQueryDslSupport
    for CachedUpdate<T, W, Changes, Ret, Access>
{
}

impl<T: Table, W, Changes: AsChangeset, Access, Selection>
    crate::backend::ReturnsSelection<Selection>
    for CachedUpdate<T, W, Changes, NoReturning, Access>
{
    type Returning = CachedUpdate<T, W, Changes, ReturningClause<Selection>, Access>;

    fn returning(self, selection: Selection) -> Self::Returning {
        self.returning_through(selection)
    }
}
