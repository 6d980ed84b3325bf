//! The reads the library makes: Diesel's, followed by what the connection needs after a failed
//! read; and whether a connection is inside a transaction of the caller's.
use diesel::connection::{Connection, TransactionManager};
use diesel::query_dsl::LoadQuery;
use diesel::{OptionalExtension, QueryResult};

use super::LeaseBackend;
use diesel::result::Error as DieselError;

/// Loads `query`'s rows on `conn`, as Diesel's `load` does; after a database error, gives the
/// connection what its backend needs before the statement may run again
/// ([`LeaseBackend::after_failed_read`]). Every read the library makes goes through here.
///
/// ```
/// # include!("../doctest_setup.rs");
/// use diesel::prelude::*;
///
/// # fn main() -> Result<(), diesel_lease::Error> {
/// # let conn = &mut jobs_connection()?;
/// let ids: Vec<i64> = diesel_lease::__private::backend::read(jobs::table.select(jobs::id), conn)?;
/// assert_eq!(ids, [1]);
/// # Ok(())
/// # }
/// ```
pub fn read<'q, C, Q, U>(query: Q, conn: &mut C) -> QueryResult<Vec<U>>
where
    C: Connection,
    C::Backend: LeaseBackend,
    Q: LoadQuery<'q, C, U>,
{
    let rows = query.load(conn);
    recovered(rows, conn)
}

/// [`read`] of at most one row: the first, if any. It stops at the first row, as Diesel's
/// `get_result` does: on SQLite, stepping an `UPDATE .. RETURNING` of one row on to its end
/// costs a claim half again as much as the statement itself.
///
/// ```
/// # include!("../doctest_setup.rs");
/// use diesel::prelude::*;
///
/// # fn main() -> Result<(), diesel_lease::Error> {
/// # let conn = &mut jobs_connection()?;
/// let status: Option<String> = diesel_lease::__private::backend::read_optional(jobs::table.find(7).select(jobs::status), conn)?;
/// assert_eq!(status, None, "there is no job 7");
/// # Ok(())
/// # }
/// ```
pub fn read_optional<'q, C, Q, U>(query: Q, conn: &mut C) -> QueryResult<Option<U>>
where
    C: Connection,
    C::Backend: LeaseBackend,
    Q: LoadQuery<'q, C, U>,
{
    let row = query.get_result(conn).optional();
    recovered(row, conn)
}

/// The outcome `read` of a read on `conn`, passed through; on a database error, `conn` first gets
/// what its backend needs before the failed statement may run again.
fn recovered<C, R>(read: QueryResult<R>, conn: &mut C) -> QueryResult<R>
where
    C: Connection,
    C::Backend: LeaseBackend,
{
    if let Err(DieselError::DatabaseError(..)) = read {
        C::Backend::after_failed_read(conn);
    }
    read
}

/// Whether `conn` is outside any transaction of the caller's: where a statement that loses a
/// write conflict was rolled back alone, and is a lost race like any other.
///
/// ```
/// # include!("../doctest_setup.rs");
/// use diesel::Connection;
///
/// # fn main() -> Result<(), diesel_lease::Error> {
/// # let conn = &mut jobs_connection()?;
/// assert!(diesel_lease::__private::backend::in_no_transaction(conn));
/// conn.transaction(|conn| {
///     assert!(!diesel_lease::__private::backend::in_no_transaction(conn));
///     diesel::QueryResult::Ok(())
/// })?;
/// # Ok(())
/// # }
/// ```
pub fn in_no_transaction<C: Connection>(conn: &mut C) -> bool {
    matches!(
        C::TransactionManager::transaction_manager_status_mut(conn).transaction_depth(),
        Ok(None)
    )
}
