//! SQLite: TEXT timestamps in one format, written only from SQLite's clock.
//!
//! SQLite compares timestamps as text, and text mis-orders mixed formats
//! (`'12:00:00' < '12:00:00.000'`), so the library writes `claimed_at` always as
//! `YYYY-MM-DD HH:MM:SS.SSS` in UTC and compares it with values of that same format. SQLite's
//! `'now'` is fixed for the whole of one statement.
//!
//! ```
//! fn clock<ST: diesel_lease::TimestampOn<diesel::sqlite::Sqlite>>() {}
//! clock::<diesel_lease::sql_types::UtcTimestamp>();
//! ```
use chrono::{DateTime, NaiveDateTime, Utc};
use diesel::deserialize::{self, FromSql};
use diesel::query_builder::{AstPass, QueryFragment};
use diesel::sql_types::{BigInt, HasSqlType, Timestamp};
use diesel::sqlite::{Sqlite, SqliteType, SqliteValue};
use diesel::QueryResult;

use crate::sql_types::UtcTimestamp;
use crate::strategy::{BatchParts, ClaimsBatches};
use crate::{DatabaseClock, TimestampOn};

impl crate::ListsRowValues for Sqlite {
    const ROW_LIST_OPEN: &'static str = "(VALUES ";
}

impl DatabaseClock for Sqlite {
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

    fn walk_clock_micros(mut out: AstPass<'_, '_, Self>) -> QueryResult<()> {
        // 2440587.5 is the Julian day of 1970-01-01 00:00 UTC; milliseconds, as above.
        out.push_sql(
            "(CAST(ROUND((julianday('now') - 2440587.5) * 86400000.0) AS INTEGER) * 1000)",
        );
        Ok(())
    }
}

impl TimestampOn<Sqlite> for Timestamp {}
impl TimestampOn<Sqlite> for UtcTimestamp {}

impl HasSqlType<UtcTimestamp> for Sqlite {
    fn metadata(_lookup: &mut ()) -> SqliteType {
        SqliteType::Text
    }
}

impl FromSql<UtcTimestamp, Sqlite> for DateTime<Utc> {
    fn from_sql(value: SqliteValue<'_, '_, '_>) -> deserialize::Result<Self> {
        <NaiveDateTime as FromSql<Timestamp, Sqlite>>::from_sql(value).map(|utc| utc.and_utc())
    }
}

crate::strategy::reports_by_returning!(Sqlite);

/// A statement that failed leaves nothing behind on the connection: the next runs as usual.
impl crate::RecoversFailedReads for Sqlite {
    fn after_failed_read<C: diesel::Connection<Backend = Self>>(_: &mut C) {}
}

/// SQLite runs one writer at a time, so the statement that picks the candidates also claims
/// them; SQLite evaluates the `IN (SELECT ..)` once, and the filter is repeated for clarity of
/// what the `UPDATE` changes.
impl ClaimsBatches for Sqlite {
    fn walk_batch_claim<'b>(
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

/// The settings a pool of SQLite connections needs, for an r2d2 pool's
/// `connection_customizer`: write-ahead logging, so that readers never block the writer, and a
/// `busy_timeout`, so that a writer waits for another rather than failing at once.
///
/// A claim that still finds the database locked when the timeout runs out is
/// [`Error::Busy`](crate::Error::Busy): nothing was written, and it may be tried again.
///
/// ```
/// use std::time::Duration;
/// use diesel::r2d2::{ConnectionManager, Pool};
/// use diesel::SqliteConnection;
/// use diesel_lease::sqlite::SqlitePragmas;
///
/// let file = std::env::temp_dir().join(format!("pragmas-{}.db", std::process::id()));
/// let pool = Pool::builder()
///     .max_size(4)
///     .connection_customizer(Box::new(SqlitePragmas::default().busy_timeout(Duration::from_secs(5))))
///     .build(ConnectionManager::<SqliteConnection>::new(file.to_string_lossy()))?;
/// # let _ = pool.get()?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SqlitePragmas {
    busy_timeout: std::time::Duration,
}

impl Default for SqlitePragmas {
    /// WAL, and a writer waits up to 5 seconds for another.
    fn default() -> Self {
        Self {
            busy_timeout: std::time::Duration::from_secs(5),
        }
    }
}

impl SqlitePragmas {
    /// How long a writer waits for another before [`Error::Busy`](crate::Error::Busy).
    ///
    /// ```
    /// let pragmas = diesel_lease::sqlite::SqlitePragmas::default()
    ///     .busy_timeout(std::time::Duration::from_secs(30));
    /// # let _ = pragmas;
    /// ```
    pub fn busy_timeout(self, busy_timeout: std::time::Duration) -> Self {
        Self { busy_timeout }
    }

    /// Sets the pragmas on one connection.
    ///
    /// ```
    /// use diesel::Connection;
    ///
    /// let conn = &mut diesel::SqliteConnection::establish(":memory:")?;
    /// diesel_lease::sqlite::SqlitePragmas::default().apply(conn)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn apply(&self, conn: &mut diesel::SqliteConnection) -> QueryResult<()> {
        use diesel::connection::SimpleConnection;
        conn.batch_execute(&format!(
            "PRAGMA busy_timeout = {}; PRAGMA journal_mode = WAL;",
            self.busy_timeout.as_millis()
        ))
    }
}

impl diesel::r2d2::CustomizeConnection<diesel::SqliteConnection, diesel::r2d2::Error>
    for SqlitePragmas
{
    fn on_acquire(&self, conn: &mut diesel::SqliteConnection) -> Result<(), diesel::r2d2::Error> {
        self.apply(conn).map_err(diesel::r2d2::Error::QueryError)
    }
}

/// `TEXT` for all three, claimed_at in the one format the library writes; one column per
/// `ALTER TABLE`, as SQLite allows.
impl crate::LeaseDdl for Sqlite {
    const OWNER_TYPE: &'static str = "TEXT";
    const CLAIM_TOKEN_TYPE: &'static str = "TEXT";
    const CLAIMED_AT_TYPE: &'static str = "TEXT";
    const QUOTE: char = '"';
    const ONE_COLUMN_PER_ALTER: bool = true;
    const DROP_INDEX_NAMES_TABLE: bool = false;

    fn advice(_table: &str, claimed_at: &str) -> String {
        format!(
            "-- SQLite: {claimed_at} is TEXT as the library writes it, YYYY-MM-DD HH:MM:SS.SSS in UTC, so\n\
             -- that timestamps compare as text.\n"
        )
    }
}
