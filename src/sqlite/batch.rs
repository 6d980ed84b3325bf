//! A batch on SQLite: `UPDATE .. WHERE key IN (SELECT key .. LIMIT n)`, one writer at a time.
use diesel::query_builder::AstPass;
use diesel::sqlite::Sqlite;
use diesel::QueryResult;

use crate::backend::{BatchInOneStatement, BatchParts};

/// SQLite runs one writer at a time, so the statement that picks the candidates also claims
/// them; SQLite evaluates the `IN (SELECT ..)` once, and the filter is repeated for clarity of
/// what the `UPDATE` changes.
impl BatchInOneStatement for Sqlite {
    fn walk_batch_update<'b>(
        batch: BatchParts<'b, Self>,
        mut out: AstPass<'_, 'b, Self>,
    ) -> QueryResult<()> {
        batch.walk_update_set(out.reborrow())?;
        out.push_sql(" WHERE (");
        batch.primary_key.walk_ast(out.reborrow())?;
        out.push_sql(") IN (SELECT ");
        batch.primary_key.walk_ast(out.reborrow())?;
        out.push_sql(" FROM ");
        batch.table.walk_ast(out.reborrow())?;
        batch.walk_filter_order_limit(out.reborrow())?;
        out.push_sql(") AND ");
        batch.filter.walk_ast(out.reborrow())
    }
}
