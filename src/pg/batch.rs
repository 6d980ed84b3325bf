//! A batch on PostgreSQL: the candidates picked and locked in a `MATERIALIZED` CTE with
//! `FOR UPDATE SKIP LOCKED`, and changed by the `UPDATE` that names them.
use diesel::pg::Pg;
use diesel::query_builder::AstPass;
use diesel::QueryResult;

use crate::backend::{BatchInOneStatement, BatchParts};

/// The candidates are picked, and locked, once: a `MATERIALIZED` CTE cannot be run again by a
/// plan that rescans it, which could claim more rows than the limit. `SKIP LOCKED` passes over
/// rows another batch is taking, and `FOR UPDATE` re-checks the filter against the newest
/// version of each row it locks. The filter is repeated in the `UPDATE`'s own `WHERE` all the
/// same, so that the `UPDATE` states by itself which rows it may change.
impl BatchInOneStatement for Pg {
    fn walk_batch_update<'b>(
        batch: BatchParts<'b, Self>,
        mut out: AstPass<'_, 'b, Self>,
    ) -> QueryResult<()> {
        out.push_sql("WITH candidates AS MATERIALIZED (SELECT ");
        batch.primary_key.walk_ast(out.reborrow())?;
        out.push_sql(" FROM ");
        batch.table.walk_ast(out.reborrow())?;
        batch.walk_filter_order_limit(out.reborrow())?;
        out.push_sql(" FOR UPDATE SKIP LOCKED) ");
        batch.walk_update_set(out.reborrow())?;
        out.push_sql(" WHERE (");
        batch.primary_key.walk_ast(out.reborrow())?;
        out.push_sql(") IN (SELECT * FROM candidates) AND ");
        batch.filter.walk_ast(out.reborrow())
    }
}
