//! `UPDATE` statements that Diesel prepares once per connection.
//!
//! Diesel marks every `diesel::update(..)` unsafe to cache, since the SQL of an arbitrary
//! changeset may vary with its values (an `Option` field skips its column). The changesets and
//! predicates of this crate never vary, and a statement whose SQL its type fixes can be cached by
//! type, as Diesel caches its `SELECT`s: the database then parses and plans a claim once per
//! connection instead of at every execution.
use diesel::backend::Backend;
use diesel::dsl::SqlTypeOf;
use diesel::expression::Expression;
use diesel::query_builder::{
    AsChangeset, AsQuery, AstPass, IntoUpdateTarget, Query, QueryFragment, QueryId,
};
use diesel::result::Error::QueryBuilderError;
use diesel::{QueryResult, RunQueryDsl, Table};

/// Starts an `UPDATE` of `target` (a table, or a table filtered) that Diesel prepares once per
/// connection: `diesel::update` for statements whose SQL their type fixes.
///
/// It takes what `diesel::update(..)` takes and gives what it gives (`.set(..)`, then
/// `.execute(..)` or [`get_if_won`](crate::GetIfWonDsl::get_if_won)). The statement is cached
/// only when every part of it has a static query id, as Diesel decides for its `SELECT`s: values
/// are bound and never change the SQL, so the changesets and predicates of [`ClaimLease`]
/// qualify. Anything whose SQL varies with its values (an `eq_any` list, say) is prepared at every
/// execution, as with `diesel::update`; changes that may skip a column (`Option`s,
/// `#[derive(AsChangeset)]` structs) have no query id and are for `diesel::update` alone.
///
/// [`ClaimLease`]: crate::ClaimLease
///
/// ```
/// # include!("doctest_setup.rs");
/// use diesel::prelude::*;
/// use diesel_lease::prelude::*;
///
/// # fn main() -> Result<(), diesel_lease::Error> {
/// # let conn = &mut jobs_connection()?;
/// let (lease, claim) = (Lease::from_secs(30)?, Claim::new("worker-1")?);
/// let job: Option<Job> = diesel_lease::update(jobs::table.find(1).filter(jobs::table.claimable(lease)))
///     .set((jobs::table.taken(&claim), jobs::status.eq("running")))
///     .get_if_won(&claim, conn)?;
/// assert!(job.is_some());
/// # Ok(())
/// # }
/// ```
pub fn update<T: IntoUpdateTarget>(target: T) -> IncompleteUpdate<T::Table, T::WhereClause> {
    let target = target.into_update_target();
    IncompleteUpdate {
        table: target.table,
        where_clause: target.where_clause,
    }
}

/// An [`update`] waiting for its `.set(..)`.
///
/// ```
/// # include!("doctest_setup.rs");
/// # use diesel_lease::prelude::*;
/// # fn main() {
/// let _incomplete = diesel_lease::update(jobs::table);
/// # }
/// ```
#[derive(Debug, Clone, Copy)]
pub struct IncompleteUpdate<T, W> {
    table: T,
    where_clause: W,
}

impl<T: Table, W> IncompleteUpdate<T, W> {
    /// The changes: anything `diesel::update(..).set(..)` takes.
    ///
    /// ```
    /// # include!("doctest_setup.rs");
    /// # use diesel::prelude::*;
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let done = diesel_lease::update(jobs::table.find(1)).set(jobs::status.eq("done")).execute(conn)?;
    /// assert_eq!(done, 1);
    /// # Ok(())
    /// # }
    /// ```
    pub fn set<Changes: AsChangeset<Target = T>>(self, changes: Changes) -> Update<T, W, Changes> {
        Update {
            from_clause: self.table.from_clause(),
            where_clause: self.where_clause,
            values: changes.as_changeset(),
            returning: NoReturning,
        }
    }
}

/// An `UPDATE` that Diesel prepares once per connection; see [`update`].
///
/// ```
/// # include!("doctest_setup.rs");
/// # use diesel::prelude::*;
/// # use diesel_lease::prelude::*;
/// # fn main() -> Result<(), diesel_lease::Error> {
/// # let conn = &mut jobs_connection()?;
/// let renew: diesel_lease::Update<jobs::table, _, _> =
///     diesel_lease::update(jobs::table.filter(jobs::table.held_by("no-such-token"))).set(jobs::table.renewed());
/// assert_eq!(renew.execute(conn)?, 0);
/// # Ok(())
/// # }
/// ```
#[must_use = "an update does nothing until it is executed"]
pub struct Update<T: Table, W, Changes: AsChangeset, Ret = NoReturning> {
    from_clause: T::FromClause,
    where_clause: W,
    values: Changes::Changeset,
    returning: Ret,
}

impl<T: Table, W, Changes: AsChangeset, Ret> std::fmt::Debug for Update<T, W, Changes, Ret> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(std::any::type_name::<Self>())
    }
}

/// What Diesel caches an [`Update`] by: its parts' types. The changes are known by the type
/// given to `.set(..)` (its assignments' query ids), which fixes the SQL of the changeset.
#[derive(Debug)]
pub struct UpdateId<T, W, Changes, Ret>(std::marker::PhantomData<(T, W, Changes, Ret)>);

/// The type of `update(target).set(changes)`, as `diesel::dsl::Update` names `diesel::update`'s.
///
/// ```
/// # include!("doctest_setup.rs");
/// # use diesel::prelude::*;
/// # use diesel_lease::prelude::*;
/// fn renew(token: &str) -> diesel_lease::UpdateOf<diesel::dsl::Filter<jobs::table, diesel_lease::HeldBy<'_, jobs::table>>, diesel_lease::Renewed<jobs::table>> {
///     diesel_lease::update(jobs::table.filter(jobs::table.held_by(token))).set(jobs::table.renewed())
/// }
/// # fn main() {}
/// ```
pub type UpdateOf<Target, Changes> = Update<
    <Target as diesel::associations::HasTable>::Table,
    <Target as IntoUpdateTarget>::WhereClause,
    Changes,
>;

/// No `RETURNING` clause: the update gives its matched-row count.
///
/// ```
/// let _nothing = diesel_lease::NoReturning;
/// ```
#[derive(Debug, Clone, Copy, QueryId)]
pub struct NoReturning;

/// `RETURNING` the table's columns: the update gives the rows it changed (PostgreSQL, SQLite).
///
/// ```
/// # include!("doctest_setup.rs");
/// # use diesel::prelude::*;
/// # fn main() {
/// let _changed = diesel_lease::update(jobs::table).set(jobs::status.eq("done")).returning_all();
/// # }
/// ```
#[derive(Debug, Clone, Copy, QueryId)]
pub struct ReturningAll<Columns>(Columns);

/// A backend with `RETURNING`: PostgreSQL, and SQLite (3.35 and later).
///
/// ```
/// fn returns<DB: diesel_lease::SupportsReturning>() {}
/// returns::<diesel::sqlite::Sqlite>();
/// ```
pub trait SupportsReturning: Backend {}

impl<DB: Backend> QueryFragment<DB> for NoReturning {
    fn walk_ast<'b>(&'b self, _: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        Ok(())
    }
}

impl<DB, Columns> QueryFragment<DB> for ReturningAll<Columns>
where
    DB: SupportsReturning,
    Columns: QueryFragment<DB>,
{
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        out.push_sql(" RETURNING ");
        self.0.walk_ast(out.reborrow())
    }
}

impl<T, W, Changes, Ret, DB> QueryFragment<DB> for Update<T, W, Changes, Ret>
where
    DB: Backend,
    T: Table,
    T::FromClause: QueryFragment<DB>,
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
        out.push_sql(" SET ");
        self.values.walk_ast(out.reborrow())?;
        self.where_clause.walk_ast(out.reborrow())?;
        self.returning.walk_ast(out.reborrow())
    }
}

impl<T, W, Changes, Ret> QueryId for Update<T, W, Changes, Ret>
where
    T: Table + QueryId,
    W: QueryId,
    Changes: AsChangeset + QueryId,
    Ret: QueryId,
{
    type QueryId = UpdateId<T::QueryId, W::QueryId, Changes::QueryId, Ret::QueryId>;
    const HAS_STATIC_QUERY_ID: bool = T::HAS_STATIC_QUERY_ID
        && W::HAS_STATIC_QUERY_ID
        && Changes::HAS_STATIC_QUERY_ID
        && Ret::HAS_STATIC_QUERY_ID;
}

impl<T: Table, W, Changes: AsChangeset> Update<T, W, Changes> {
    /// The same update giving back the whole rows it changed (`RETURNING`, PostgreSQL and SQLite).
    ///
    /// ```
    /// # include!("doctest_setup.rs");
    /// # use diesel::prelude::*;
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let jobs: Vec<Job> = diesel_lease::update(jobs::table).set(jobs::status.eq("done")).returning_all().load(conn)?;
    /// assert_eq!(jobs.len(), 1);
    /// # Ok(())
    /// # }
    /// ```
    pub fn returning_all(self) -> Update<T, W, Changes, ReturningAll<T::AllColumns>> {
        Update {
            from_clause: self.from_clause,
            where_clause: self.where_clause,
            values: self.values,
            returning: ReturningAll(T::all_columns()),
        }
    }
}

impl<T, W, Changes, Columns> Query for Update<T, W, Changes, ReturningAll<Columns>>
where
    T: Table,
    Changes: AsChangeset,
    Columns: Expression,
{
    type SqlType = SqlTypeOf<Columns>;
}

impl<T: Table, W, Changes: AsChangeset> AsQuery for Update<T, W, Changes>
where
    Update<T, W, Changes, ReturningAll<T::AllColumns>>: Query,
{
    type SqlType = <Self::Query as Query>::SqlType;
    type Query = Update<T, W, Changes, ReturningAll<T::AllColumns>>;

    fn as_query(self) -> Self::Query {
        self.returning_all()
    }
}

impl<T: Table, W, Changes: AsChangeset, Ret, C> RunQueryDsl<C> for Update<T, W, Changes, Ret> {}
