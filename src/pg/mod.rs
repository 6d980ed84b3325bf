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

    fn walk_clock_micros(mut out: AstPass<'_, '_, Self>) -> QueryResult<()> {
        // EXTRACT(EPOCH ..) of a timestamptz counts from 1970 UTC, whatever the session's zone.
        out.push_sql("CAST(EXTRACT(EPOCH FROM statement_timestamp()) * 1000000 AS BIGINT)");
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

/// A statement that failed leaves nothing behind on the connection: the next runs as usual, and
/// a statement cache that `PgTransactionPooling` turned off stays off.
impl crate::RecoversFailedReads for Pg {
    fn after_failed_read<C: diesel::Connection<Backend = Self>>(_: &mut C) {}
}

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

/// The setting a pool of PostgreSQL connections needs behind a pooler in transaction mode
/// (PgBouncer's `pool_mode = transaction`), for an r2d2 pool's `connection_customizer`: Diesel's
/// prepared-statement cache turned off.
///
/// Such a pooler hands each transaction (each statement, outside one) to whichever server
/// connection is free. Diesel's cache prepares a statement once under a name
/// (`__diesel_stmt_N`) and runs it by that name later, which the pooler may send to a server
/// connection where the name is missing, taken, or (worst) prepared by another client for other
/// SQL. With the cache off, Diesel sends each statement's SQL and its binds in one round trip,
/// which a pooler passes through whole. r2d2's checkout test is one such statement too, which is
/// why the setting belongs on the pool rather than on the connections a caller happens to use.
///
/// Nothing else is needed: the library holds no session state between statements (no advisory
/// lock, no `LISTEN`, no `SET` beyond the session settings PgBouncer itself carries from one
/// server connection to the next, no temporary table), and every transaction it opens is ended
/// by the call that opened it. PgBouncer 1.21 or later with `max_prepared_statements` set keeps
/// the cache usable instead; see the README for both, and for what the setting costs a claim.
///
/// ```
/// use diesel::r2d2::{ConnectionManager, Pool};
/// use diesel::PgConnection;
/// use diesel_lease::pg::PgTransactionPooling;
///
/// // PgBouncer in transaction mode on port 6432; no connection is opened until one is needed.
/// let pool = Pool::builder()
///     .max_size(8)
///     .connection_customizer(Box::new(PgTransactionPooling::default()))
///     .build_unchecked(ConnectionManager::<PgConnection>::new(
///         "postgres://app@127.0.0.1:6432/app",
///     ));
/// # let _ = pool;
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PgTransactionPooling {
    // Room for settings to come, without a breaking change.
    _private: (),
}

impl PgTransactionPooling {
    /// Turns off the statement cache of one connection, for a connection outside any pool.
    ///
    /// ```
    /// use diesel::{Connection, ConnectionResult, PgConnection};
    /// use diesel_lease::pg::PgTransactionPooling;
    ///
    /// fn connect_through_the_pooler(url: &str) -> ConnectionResult<PgConnection> {
    ///     let mut conn = PgConnection::establish(url)?;
    ///     PgTransactionPooling::default().apply(&mut conn);
    ///     Ok(conn)
    /// }
    /// # let _ = connect_through_the_pooler;
    /// ```
    pub fn apply(&self, conn: &mut diesel::PgConnection) {
        use diesel::connection::{CacheSize, Connection};
        conn.set_prepared_statement_cache_size(CacheSize::Disabled);
    }
}

impl diesel::r2d2::CustomizeConnection<diesel::PgConnection, diesel::r2d2::Error>
    for PgTransactionPooling
{
    fn on_acquire(&self, conn: &mut diesel::PgConnection) -> Result<(), diesel::r2d2::Error> {
        self.apply(conn);
        Ok(())
    }
}
