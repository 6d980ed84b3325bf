//! MySQL's and MariaDB's clock, `UTC_TIMESTAMP(6)`, their lists of row values, their exact text,
//! and what a connection needs after a failed read.
use diesel::connection::{CacheSize, Connection};
use diesel::mysql::Mysql;
use diesel::query_builder::{AstPass, QueryFragment};
use diesel::sql_types::BigInt;
use diesel::QueryResult;

use crate::backend::LeaseBackend;

impl LeaseBackend for Mysql {
    // MySQL spells `VALUES` in a row list differently from MariaDB: plain row values serve both.
    const ROW_LIST_OPEN: &'static str = "(";
    const LOCK_PASSING_LOCKED: Option<&'static str> = Some(" FOR UPDATE SKIP LOCKED");
    const MOST_BOUND_VALUES: usize = 65_535;
    // Half of MariaDB's default `optimizer_max_sel_arg_weight`: a key list read by key, never a
    // scan of the whole index.
    const MOST_KEY_VALUES: usize = 16_384;

    fn all_or_nothing<C, R>(
        conn: &mut C,
        body: impl FnOnce(&mut C) -> QueryResult<R>,
    ) -> QueryResult<R>
    where
        C: Connection<Backend = Self>,
    {
        super::transaction::short_transaction(conn, body)
    }

    fn walk_now(mut out: AstPass<'_, '_, Self>) -> QueryResult<()> {
        out.push_sql("UTC_TIMESTAMP(6)");
        Ok(())
    }

    fn walk_ago<'b>(micros: &'b i64, mut out: AstPass<'_, 'b, Self>) -> QueryResult<()> {
        out.push_sql("(UTC_TIMESTAMP(6) - INTERVAL ");
        out.push_bind_param::<BigInt, _>(micros)?;
        out.push_sql(" MICROSECOND)");
        Ok(())
    }

    fn walk_micros_since<'b, T: QueryFragment<Self>>(
        timestamp: &'b T,
        mut out: AstPass<'_, 'b, Self>,
    ) -> QueryResult<()> {
        out.push_sql("TIMESTAMPDIFF(MICROSECOND, ");
        timestamp.walk_ast(out.reborrow())?;
        out.push_sql(", UTC_TIMESTAMP(6))");
        Ok(())
    }

    fn walk_exact_text<'b, T: QueryFragment<Self>>(
        text: &'b T,
        mut out: AstPass<'_, 'b, Self>,
    ) -> QueryResult<()> {
        out.push_sql("CAST(CONVERT(");
        text.walk_ast(out.reborrow())?;
        out.push_sql(" USING utf8mb4) AS BINARY)");
        Ok(())
    }

    fn walk_clock_micros(mut out: AstPass<'_, '_, Self>) -> QueryResult<()> {
        // Two DATETIMEs in UTC: no session time zone takes part.
        out.push_sql("TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6))");
        Ok(())
    }

    /// On a small or freshly filled table MariaDB may plan an `UPDATE` by key list as a scan of
    /// the primary key, waiting on (and locking) rows outside the list, which deadlocks
    /// concurrent batches.
    fn walk_primary_key_access(mut out: AstPass<'_, '_, Self>) -> QueryResult<()> {
        out.push_sql(" FORCE INDEX (PRIMARY)");
        Ok(())
    }

    /// A prepared statement whose execution failed after the server sent its result's header
    /// (a lock wait timeout, a deadlock, an expression error) is left by Connector/C in a state
    /// in which its next execution waits for ever for the rest of a result that already ended
    /// (docs/upstream/mysql-statement-hang.md). Diesel keeps that statement in its cache, and has
    /// no way to evict one statement: the whole cache goes, closing each statement with a message
    /// that gets no reply, and later statements are prepared anew on first use. A cache the
    /// caller had turned off is on again afterwards.
    fn after_failed_read<C: Connection<Backend = Self>>(conn: &mut C) {
        conn.set_prepared_statement_cache_size(CacheSize::Disabled);
        conn.set_prepared_statement_cache_size(CacheSize::Unbounded);
    }
}
