//! The library's own short transactions on MySQL/MariaDB, at READ COMMITTED.
use diesel::connection::{TransactionDepthChange, TransactionManager, TransactionManagerStatus};
use diesel::mysql::Mysql;
use diesel::query_builder::{AstPass, QueryFragment, QueryId};
use diesel::result::Error as DieselError;
use diesel::{Connection, QueryResult, RunQueryDsl};

use crate::backend::in_no_transaction;

/// `body` in a short transaction of the library's own, at READ COMMITTED: its locking reads take
/// no gap locks and keep no lock on rows they pass over. Inside a transaction of the caller's,
/// `body` runs in a savepoint and the caller's isolation stands.
///
/// The COMMIT is a prepared statement of the library's, not Diesel's plain-text one: a COMMIT
/// that loses a write conflict (a Galera certification failure, error 1213) then arrives with its
/// error number, and is a serialization failure as the same error of any statement is, whatever
/// the server's language (`lc_messages`). Diesel reports an error of plain text as `Unknown`,
/// with only its message (MariaDB words a deadlock in the server's language, not the session's).
/// Cached like the library's other statements, it is one round trip; Diesel's plain text was
/// three, with the multi-statement option switched on before it and off after.
pub(super) fn short_transaction<C, T>(
    conn: &mut C,
    body: impl FnOnce(&mut C) -> QueryResult<T>,
) -> QueryResult<T>
where
    C: Connection<Backend = Mysql>,
{
    if !in_no_transaction(conn) {
        // A savepoint's release cannot lose a conflict: the caller's COMMIT is where it would.
        return conn.transaction(body);
    }
    conn.batch_execute("SET TRANSACTION ISOLATION LEVEL READ COMMITTED")?;
    C::TransactionManager::begin_transaction(conn)?;
    match body(conn).and_then(|done| commit(conn).map(|()| done)) {
        Ok(done) => Ok(done),
        // As Diesel's `transaction` does, after a failed body or COMMIT.
        Err(error) => match C::TransactionManager::rollback_transaction(conn) {
            Ok(()) | Err(DieselError::BrokenTransactionManager) => Err(error),
            Err(rollback_error) => Err(rollback_error),
        },
    }
}

/// Commits the transaction `short_transaction` began, by the prepared [`Commit`], and tells
/// Diesel's transaction manager it has ended.
fn commit<C: Connection<Backend = Mysql>>(conn: &mut C) -> QueryResult<()> {
    Commit.execute(conn)?;
    match C::TransactionManager::transaction_manager_status_mut(conn) {
        TransactionManagerStatus::Valid(status) => {
            status.change_transaction_depth(TransactionDepthChange::DecreaseDepth)
        }
        TransactionManagerStatus::InError => Err(DieselError::BrokenTransactionManager),
    }
}

/// `COMMIT`, as a prepared statement: an error there carries its number.
#[derive(Debug, Clone, Copy, QueryId)]
struct Commit;

impl QueryFragment<Mysql> for Commit {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Mysql>) -> QueryResult<()> {
        out.push_sql("COMMIT");
        Ok(())
    }
}

impl diesel::query_dsl::RunQueryDslSupport for Commit {}
