//! PostgreSQL: `timestamptz` columns and `statement_timestamp()`.
//!
//! `now()` and `CURRENT_TIMESTAMP` are the transaction's start: a claim taken late in a long
//! transaction would be dated back and expire early. `statement_timestamp()` is the time the
//! statement arrived, the same for every row and comparison in it.
//!
//! ```
//! # include!("../doctest_setup.rs");
//! # fn main() {}
//! #[cfg(feature = "postgres")]
//! fn clock<ST: diesel_lease::TimestampOn<diesel::pg::Pg>>() {}
//! ```
use chrono::{DateTime, Utc};
use diesel::deserialize::{self, FromSql};
use diesel::pg::{Pg, PgTypeMetadata, PgValue};
use diesel::query_builder::{AstPass, QueryFragment};
use diesel::sql_types::{BigInt, HasSqlType, Timestamptz};
use diesel::QueryResult;

use crate::sql_types::UtcTimestamp;
use crate::strategy::{BatchParts, ClaimsBatches};
use crate::{DatabaseClock, TimestampOn};

impl crate::ListsRowValues for Pg {
    const ROW_LIST_OPEN: &'static str = "(VALUES ";
}

impl DatabaseClock for Pg {
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
}

impl TimestampOn<Pg> for Timestamptz {}
impl TimestampOn<Pg> for UtcTimestamp {}

impl HasSqlType<UtcTimestamp> for Pg {
    fn metadata(lookup: &mut Self::MetadataLookup) -> PgTypeMetadata {
        <Pg as HasSqlType<Timestamptz>>::metadata(lookup)
    }
}

impl FromSql<UtcTimestamp, Pg> for DateTime<Utc> {
    fn from_sql(value: PgValue<'_>) -> deserialize::Result<Self> {
        <Self as FromSql<Timestamptz, Pg>>::from_sql(value)
    }
}

crate::strategy::reports_by_returning!(Pg);

/// The candidates are picked, and locked, once: a `MATERIALIZED` CTE cannot be run again by a
/// plan that rescans it, which could claim more rows than the limit. `SKIP LOCKED` passes over
/// rows another batch is taking, and `FOR UPDATE` re-checks the filter against the newest
/// version of each row it locks. The filter is repeated in the `UPDATE`'s own `WHERE` all the
/// same, so that the `UPDATE` states by itself which rows it may change.
impl ClaimsBatches for Pg {
    fn walk_batch_claim<'b>(
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

/// `TEXT` owner and token, a `TIMESTAMPTZ` claimed_at; several columns per `ALTER TABLE`.
impl crate::LeaseDdl for Pg {
    const OWNER_TYPE: &'static str = "TEXT";
    const CLAIM_TOKEN_TYPE: &'static str = "TEXT";
    const CLAIMED_AT_TYPE: &'static str = "TIMESTAMPTZ";
    const QUOTE: char = '"';
    const ONE_COLUMN_PER_ALTER: bool = false;
    const DROP_INDEX_NAMES_TABLE: bool = false;

    fn advice(table: &str, claimed_at: &str) -> String {
        format!(
            "-- PostgreSQL: keep {claimed_at}, the one column a renewal writes, out of every index, so\n\
             -- that a renewal stays a HOT update, writing no index entry, while the row's page has\n\
             -- room. With frequent renewals, leave room on each page:\n\
             --     ALTER TABLE {table} SET (fillfactor = 90);\n\
             -- On a large table in use, build the index CONCURRENTLY instead, outside a transaction\n\
             -- (run_in_transaction = false in this migration's metadata.toml).\n"
        )
    }
}
