//! The agent's own reads: Diesel's, followed by what the connection needs after a failed read.
use diesel::connection::Connection;
use diesel::query_dsl::LoadQuery;
use diesel::result::Error as DieselError;
use diesel::{OptionalExtension, QueryResult};
use diesel_lease::backend::LeaseBackend;

/// `query`'s first row, if any, as Diesel's `get_result` reads it; after a database error, the
/// connection gets what its backend needs before the statement may run again (on MySQL/MariaDB,
/// a cached statement whose result failed past its header never answers again).
pub(super) fn read_optional<'q, C, Q, U>(query: Q, conn: &mut C) -> QueryResult<Option<U>>
where
    C: Connection,
    C::Backend: LeaseBackend,
    Q: LoadQuery<'q, C, U>,
{
    let row = query.get_result(conn).optional();
    if let Err(DieselError::DatabaseError(..)) = row {
        C::Backend::after_failed_read(conn);
    }
    row
}
