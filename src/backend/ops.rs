//! How a backend runs each operation, and the plans the generic layer hands it: the statements it
//! may run, built from backend-neutral SQL nodes. A backend picks the ones its strategy needs:
//! `RETURNING` on PostgreSQL and SQLite; matched-row counts, locking reads and reads by token
//! on MySQL/MariaDB.
use diesel::query_builder::AstPass;
use diesel::QueryResult;

use super::LeaseBackend;

/// A statement that can give back `Selection` of the rows it changes (`RETURNING`).
///
/// ```
/// # include!("../doctest_setup.rs");
/// # use diesel::prelude::*;
/// use diesel_lease::__private::backend::ReturnsSelection;
///
/// # fn main() {
/// let update = diesel_lease::update(jobs::table).set(jobs::status.eq("done"));
/// let _returning = ReturnsSelection::returning(update, jobs::id);
/// # }
/// ```
pub trait ReturnsSelection<Selection> {
    /// The statement with its `RETURNING` clause.
    type Returning;

    /// Adds `RETURNING selection`.
    fn returning(self, selection: Selection) -> Self::Returning;
}

/// A claim of one row: the claiming `UPDATE` (without `RETURNING`), the selection to give back
/// of the row it won, and the read of that row by its key and the claim's token.
///
/// ```
/// fn plan<S, Sel, R>(plan: &diesel_lease::__private::backend::RowClaim<S, Sel, R>) -> &diesel_lease::__private::backend::RowClaim<S, Sel, R> {
///     plan
/// }
/// ```
#[derive(Debug)]
pub struct RowClaim<Statement, Selection, ReadBack> {
    pub(crate) statement: Statement,
    #[cfg_attr(not(any(feature = "postgres", feature = "sqlite")), allow(dead_code))]
    pub(crate) selection: Selection,
    #[cfg_attr(not(feature = "mysql"), allow(dead_code))]
    pub(crate) read_back: ReadBack,
}

/// How a backend claims one row and learns whether it won, from the claiming statement itself:
/// its `RETURNING` row, or its matched-row count and then the row read by the claim's token.
///
/// ```
/// # include!("../doctest_setup.rs");
/// fn claims<'q, C, P, Row>()
/// where
///     DocBackend: diesel_lease::__private::backend::ClaimsRow<'q, C, P, Row>,
/// {
/// }
/// # fn main() {}
/// ```
#[diagnostic::on_unimplemented(
    message = "this claim cannot run on `{Self}` giving back `{Row}`: its row type does not fit `.returning(..)`, or diesel-lease's feature for `{Self}` is off",
    label = "cannot run on `{Self}`",
    note = "the selection given to `.returning(..)` (all columns by default) must load as the row type asked for, the first of `{Row}`",
    note = "the caller's filter and changes must be valid on this backend, and diesel-lease's Cargo feature for it (`postgres`, `mysql` or `sqlite`) on"
)]
pub trait ClaimsRow<'q, C, Plan, Row>: LeaseBackend {
    /// Runs the claim; the row it won, if it won one.
    fn claim_row(plan: Plan, conn: &mut C) -> QueryResult<Option<Row>>;
}

/// A bounded batch `UPDATE` (a claim, a reap): at most `limit` rows of `table` that match
/// `filter`, in `order`, changed by `set`, each given back as `selection`. `changed` is what the
/// `UPDATE` leaves on each row it changed (a claim's token, a reap's `NULL`): how a read after it
/// tells the rows it changed from the rows it passed over, on a backend without `RETURNING`.
///
/// ```
/// fn plan<T, F, O, S, Sel, Ch>(plan: &diesel_lease::__private::backend::BatchPlan<T, F, O, S, Sel, Ch>) -> &diesel_lease::__private::backend::BatchPlan<T, F, O, S, Sel, Ch> {
///     plan
/// }
/// ```
#[derive(Debug)]
pub struct BatchPlan<T, F, O, Set, Selection, Changed> {
    pub(crate) table: T,
    pub(crate) filter: F,
    pub(crate) order: O,
    pub(crate) limit: i64,
    pub(crate) set: Set,
    pub(crate) selection: Selection,
    #[cfg_attr(not(feature = "mysql"), allow(dead_code))]
    pub(crate) changed: Changed,
}

/// How a backend runs a batch `UPDATE` that concurrent batches cannot both win, and learns which
/// rows it changed.
///
/// ```
/// # include!("../doctest_setup.rs");
/// fn claims<'q, C, P, Row>()
/// where
///     DocBackend: diesel_lease::__private::backend::ClaimsBatch<'q, C, P, Row>,
/// {
/// }
/// # fn main() {}
/// ```
#[diagnostic::on_unimplemented(
    message = "this batch cannot run on `{Self}` giving back `{Row}`: its row type does not fit `.returning(..)`, or diesel-lease's feature for `{Self}` is off",
    label = "cannot run on `{Self}`",
    note = "the selection given to `.returning(..)` (all columns by default) must load as the row type asked for, the first of `{Row}`",
    note = "the caller's filter, order and changes must be valid on this backend, and diesel-lease's Cargo feature for it (`postgres`, `mysql` or `sqlite`) on"
)]
pub trait ClaimsBatch<'q, C, Plan, Row>: LeaseBackend {
    /// Runs the batch; the rows it changed.
    fn claim_batch(plan: Plan, conn: &mut C) -> QueryResult<Vec<Row>>;
}

/// A write guarded by claims' tokens: the `UPDATE` of the rows named, each only while its claim
/// holds it; what to give back of each row changed (`RETURNING`); the locking read of the rows
/// held, for a write that clears the token (a release) on a backend without `RETURNING`; the read
/// of the rows by their tokens after the write, for one that keeps it (a renewal, a holder's
/// write); and, when the write names one row, the row to give back if it matched.
///
/// ```
/// fn plan<S, Ret, L, R, Row>(plan: &diesel_lease::__private::backend::HeldWrite<S, Ret, L, R, Row>) -> &diesel_lease::__private::backend::HeldWrite<S, Ret, L, R, Row> {
///     plan
/// }
/// ```
#[derive(Debug)]
pub struct HeldWrite<Statement, Returned, Locking, ReadBack, Row> {
    pub(crate) statement: Statement,
    #[cfg_attr(not(any(feature = "postgres", feature = "sqlite")), allow(dead_code))]
    pub(crate) returned: Returned,
    #[cfg_attr(not(feature = "mysql"), allow(dead_code))]
    pub(crate) locking: Locking,
    #[cfg_attr(not(feature = "mysql"), allow(dead_code))]
    pub(crate) read_back: ReadBack,
    #[cfg_attr(not(feature = "mysql"), allow(dead_code))]
    pub(crate) keeps_token: bool,
    pub(crate) only: Option<Row>,
}

/// How a backend runs a write guarded by tokens and learns which rows it changed.
///
/// ```
/// # include!("../doctest_setup.rs");
/// fn writes<'q, C, P, Row>()
/// where
///     DocBackend: diesel_lease::__private::backend::WritesHeld<'q, C, P, Row>,
/// {
/// }
/// # fn main() {}
/// ```
#[diagnostic::on_unimplemented(
    message = "this write to held rows cannot run on `{Self}`: its changes are not valid there, or diesel-lease's feature for `{Self}` is off",
    label = "cannot run on `{Self}`",
    note = "the caller's changes must be valid on this backend, and diesel-lease's Cargo feature for it (`postgres`, `mysql` or `sqlite`) on"
)]
pub trait WritesHeld<'q, C, Plan, Row>: LeaseBackend {
    /// Runs the write; what it gives back of each row it changed.
    fn write_held(plan: Plan, conn: &mut C) -> QueryResult<Vec<Row>>;
}

/// The parts of a batch `UPDATE` in one statement, each rendered by the generic layer, put
/// together by a backend: see [`BatchUpdate`](crate::sql::batch::BatchUpdate).
#[allow(missing_debug_implementations)] // references to SQL nodes
pub struct BatchParts<'b, DB: diesel::backend::Backend> {
    /// The table, as in `FROM`.
    pub table: &'b dyn diesel::query_builder::QueryFragment<DB>,
    /// The primary key's columns, comma-separated.
    pub primary_key: &'b dyn diesel::query_builder::QueryFragment<DB>,
    /// The assignments of the `SET` list.
    pub set: &'b dyn diesel::query_builder::QueryFragment<DB>,
    /// Which rows may be changed: the caller's filter and the lease's.
    pub filter: &'b dyn diesel::query_builder::QueryFragment<DB>,
    /// The caller's order, or `None`.
    pub order: Option<&'b dyn diesel::query_builder::QueryFragment<DB>>,
    /// The most rows to change.
    pub limit: &'b i64,
}

/// A backend that writes a batch `UPDATE` as one statement (PostgreSQL, SQLite): at most
/// `limit` rows, in the caller's order, that no two concurrent batches can both change.
///
/// ```
/// fn one_statement<DB: diesel_lease::__private::backend::BatchInOneStatement>() {}
/// # #[cfg(feature = "sqlite")]
/// one_statement::<diesel::sqlite::Sqlite>();
/// ```
pub trait BatchInOneStatement: LeaseBackend {
    /// Writes the whole `UPDATE`, without its `RETURNING` clause.
    fn walk_batch_update<'b>(
        parts: BatchParts<'b, Self>,
        out: AstPass<'_, 'b, Self>,
    ) -> QueryResult<()>;
}
