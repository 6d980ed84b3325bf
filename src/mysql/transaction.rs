//! The library's own short transactions on MySQL/MariaDB, at READ COMMITTED.
use diesel::mysql::Mysql;
use diesel::result::{DatabaseErrorKind, Error as DieselError};
use diesel::{Connection, QueryResult};

use crate::backend::in_no_transaction;

/// `body` in a short transaction of the library's own, at READ COMMITTED: its locking reads take
/// no gap locks and keep no lock on rows they pass over. Inside a transaction of the caller's,
/// `body` runs in a savepoint and the caller's isolation stands.
///
/// A COMMIT that loses a write conflict (a Galera certification failure, error 1213) is a
/// serialization failure, as the same error of any statement is: Diesel sends COMMIT as plain
/// text, and reports an error of plain text as `Unknown`, so it is told by its message.
pub(super) fn short_transaction<C, T>(
    conn: &mut C,
    body: impl FnOnce(&mut C) -> QueryResult<T>,
) -> QueryResult<T>
where
    C: Connection<Backend = Mysql>,
{
    if in_no_transaction(conn) {
        conn.batch_execute("SET TRANSACTION ISOLATION LEVEL READ COMMITTED")?;
    }
    conn.transaction(body).map_err(|error| match error {
        DieselError::DatabaseError(DatabaseErrorKind::Unknown, info)
            if info.message().starts_with(LOST_CONFLICT) =>
        {
            DieselError::DatabaseError(DatabaseErrorKind::SerializationFailure, info)
        }
        other => other,
    })
}

/// The message of MySQL's and MariaDB's error 1213 (`ER_LOCK_DEADLOCK`), in the servers' default
/// language; under another `lc_messages` the error stays `Unknown`, as Diesel reports it.
const LOST_CONFLICT: &str = "Deadlock found when trying to get lock";
