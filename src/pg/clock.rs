//! PostgreSQL's clock, `statement_timestamp()`, its lists of row values, and its exact text.
use diesel::pg::Pg;
use diesel::query_builder::{AstPass, QueryFragment};
use diesel::sql_types::BigInt;
use diesel::QueryResult;

use crate::backend::LeaseBackend;

impl LeaseBackend for Pg {
    const ROW_LIST_OPEN: &'static str = "(VALUES ";
    // The lock an UPDATE that changes no key takes: it blocks no foreign key check.
    const LOCK_PASSING_LOCKED: Option<&'static str> = Some(" FOR NO KEY UPDATE SKIP LOCKED");
    const MOST_BOUND_VALUES: usize = 65_535;

    fn walk_now(mut out: AstPass<'_, '_, Self>) -> QueryResult<()> {
        out.push_sql("statement_timestamp()");
        Ok(())
    }

    fn walk_ago<'b>(micros: &'b i64, mut out: AstPass<'_, 'b, Self>) -> QueryResult<()> {
        out.push_sql("(statement_timestamp() - ");
        out.push_bind_param::<BigInt, _>(micros)?;
        out.push_sql(" * INTERVAL '1 microsecond')");
        Ok(())
    }

    fn walk_micros_since<'b, T: QueryFragment<Self>>(
        timestamp: &'b T,
        mut out: AstPass<'_, 'b, Self>,
    ) -> QueryResult<()> {
        out.push_sql("CAST(EXTRACT(EPOCH FROM (statement_timestamp() - ");
        timestamp.walk_ast(out.reborrow())?;
        out.push_sql(")) * 1000000 AS BIGINT)");
        Ok(())
    }

    fn walk_exact_text<'b, T: QueryFragment<Self>>(
        text: &'b T,
        mut out: AstPass<'_, 'b, Self>,
    ) -> QueryResult<()> {
        out.push_sql("(");
        text.walk_ast(out.reborrow())?;
        out.push_sql(")::text COLLATE \"C\"");
        Ok(())
    }

    fn walk_clock_micros(mut out: AstPass<'_, '_, Self>) -> QueryResult<()> {
        // EXTRACT(EPOCH ..) of a timestamptz counts from 1970 UTC, whatever the session's zone.
        out.push_sql("CAST(EXTRACT(EPOCH FROM statement_timestamp()) * 1000000 AS BIGINT)");
        Ok(())
    }
}
