//! A write guarded by tokens on MySQL/MariaDB: which rows it changed, without `RETURNING`.
use diesel::mysql::Mysql;
use diesel::query_dsl::methods::ExecuteDsl;
use diesel::query_dsl::LoadQuery;
use diesel::{Connection, QueryResult};

use super::transaction::short_transaction;
use crate::backend::{read, write_one, HeldWrite, WritesHeld};

/// One row needs no more than the `UPDATE`: whether it matched is the answer. Several rows:
/// a write that keeps their tokens (a renewal, a holder's write) is read back by key and token
/// right after, with no transaction around the two, since a row that carries the token after the
/// write is one the write changed (only its claim ever wrote that token, and a row released
/// behind the claim's back in between is read as lost, as it is); a write that clears the tokens
/// (a release) locks the rows the tokens still hold first, in a short transaction, so that the
/// `UPDATE` changes exactly those and their keys are the answer. The rows are found by key, so
/// InnoDB locks those rows alone.
// Errors name the operation, not the bound inside it that failed.
#[diagnostic::do_not_recommend]
impl<'q, C, S, Returned, Locking, ReadBack, Row>
    WritesHeld<'q, C, HeldWrite<S, Returned, Locking, ReadBack, Row>, Row> for Mysql
where
    C: Connection<Backend = Mysql>,
    S: ExecuteDsl<C>,
    Locking: LoadQuery<'q, C, Row>,
    ReadBack: LoadQuery<'q, C, Row>,
{
    fn write_held(
        plan: HeldWrite<S, Returned, Locking, ReadBack, Row>,
        conn: &mut C,
    ) -> QueryResult<Vec<Row>> {
        if let Some(row) = plan.only {
            return write_one(plan.statement, row, conn);
        }
        if plan.keeps_token {
            if S::execute(plan.statement, conn)? == 0 {
                return Ok(Vec::new());
            }
            return read(plan.read_back, conn);
        }
        short_transaction(conn, |conn| {
            let held: Vec<Row> = read(plan.locking, conn)?;
            if !held.is_empty() {
                S::execute(plan.statement, conn)?;
            }
            Ok(held)
        })
    }
}
