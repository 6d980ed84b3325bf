//! SQLite's clock, `strftime('%Y-%m-%d %H:%M:%f', 'now')`, its lists of row values, and its
//! exact text.
use diesel::query_builder::{AstPass, QueryFragment};
use diesel::sql_types::BigInt;
use diesel::sqlite::Sqlite;
use diesel::QueryResult;

use crate::backend::LeaseBackend;

impl LeaseBackend for Sqlite {
    const ROW_LIST_OPEN: &'static str = "(VALUES ";
    const LOCK_PASSING_LOCKED: Option<&'static str> = None;
    const MOST_BOUND_VALUES: usize = 32_766;

    fn walk_now(mut out: AstPass<'_, '_, Self>) -> QueryResult<()> {
        out.push_sql("strftime('%Y-%m-%d %H:%M:%f', 'now')");
        Ok(())
    }

    fn walk_ago<'b>(micros: &'b i64, mut out: AstPass<'_, 'b, Self>) -> QueryResult<()> {
        // Signed, so that a negative age (a time to come) is a valid modifier too: an invalid
        // one would make the whole timestamp NULL.
        out.push_sql("strftime('%Y-%m-%d %H:%M:%f', 'now', printf('%+.6f seconds', -(");
        out.push_bind_param::<BigInt, _>(micros)?;
        out.push_sql(") / 1000000.0))");
        Ok(())
    }

    fn walk_micros_since<'b, T: QueryFragment<Self>>(
        timestamp: &'b T,
        mut out: AstPass<'_, 'b, Self>,
    ) -> QueryResult<()> {
        // Milliseconds, SQLite's clock resolution, from Julian days (a double's precision).
        out.push_sql("(CAST(ROUND((julianday('now') - julianday(");
        timestamp.walk_ast(out.reborrow())?;
        out.push_sql(")) * 86400000.0) AS INTEGER) * 1000)");
        Ok(())
    }

    fn walk_exact_text<'b, T: QueryFragment<Self>>(
        text: &'b T,
        mut out: AstPass<'_, 'b, Self>,
    ) -> QueryResult<()> {
        text.walk_ast(out.reborrow())?;
        out.push_sql(" COLLATE BINARY");
        Ok(())
    }

    fn walk_clock_micros(mut out: AstPass<'_, '_, Self>) -> QueryResult<()> {
        // 2440587.5 is the Julian day of 1970-01-01 00:00 UTC; milliseconds, as above.
        out.push_sql(
            "(CAST(ROUND((julianday('now') - 2440587.5) * 86400000.0) AS INTEGER) * 1000)",
        );
        Ok(())
    }
}
