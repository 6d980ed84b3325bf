//! A claim of one row on MySQL/MariaDB: its matched-row count, then the row read by its token.
use diesel::mysql::Mysql;
use diesel::query_dsl::methods::ExecuteDsl;
use diesel::query_dsl::LoadQuery;
use diesel::{Connection, QueryResult};

use crate::backend::{read_optional, ClaimsRow, RowClaim};

/// Diesel asks MySQL for matched, not changed, rows: a claim that matched its row won it, and
/// the row is read by its key and the claim's token. No transaction around the two: inside one,
/// InnoDB would keep the row lock of every refused claim until the COMMIT, queueing contenders.
/// Should the lease run out and another claim take the row in between, the read does not find
/// it: the claim has lost that row, and the token guards every later write of the loser. A
/// read-back that fails returns its error with the row held by the claim (`held_rows(&claim,
/// keys).release()` gives it back): a holder that does not know it won holds it until the lease runs out.
// Errors name the operation, not the bound inside it that failed.
#[diagnostic::do_not_recommend]
impl<'q, C, S, Selection, ReadBack, Row> ClaimsRow<'q, C, RowClaim<S, Selection, ReadBack>, Row>
    for Mysql
where
    C: Connection<Backend = Mysql>,
    S: ExecuteDsl<C>,
    ReadBack: LoadQuery<'q, C, Row>,
{
    fn claim_row(plan: RowClaim<S, Selection, ReadBack>, conn: &mut C) -> QueryResult<Option<Row>> {
        if S::execute(plan.statement, conn)? == 0 {
            return Ok(None);
        }
        read_optional(plan.read_back, conn)
    }
}
