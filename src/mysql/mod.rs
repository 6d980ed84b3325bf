//! MySQL/MariaDB: `DATETIME(6)` columns holding UTC, and `UTC_TIMESTAMP(6)`.
//!
//! `NOW()` and `CURRENT_TIMESTAMP` follow the session's `time_zone` and `TIMESTAMP` columns are
//! shifted by it; `UTC_TIMESTAMP(6)` into `DATETIME(6)` is the same whatever a session sets.
//! MySQL has no `RETURNING`: a claim's matched-row count (Diesel always asks for matched, not
//! changed, rows) says whether it won, then the row is read by the claim's token.
//!
//! Give the token column a binary collation (`VARCHAR(255) COLLATE utf8mb4_bin`): the default
//! collations compare text ignoring case, so `T1` would hold a row claimed by `t1`.
//!
//! ```
//! # fn main() {}
//! fn clock<ST: diesel_lease::TimestampOn<diesel::mysql::Mysql>>() {}
//! ```
use chrono::{DateTime, NaiveDateTime, Utc};
use diesel::deserialize::{self, FromSql};
use diesel::mysql::{Mysql, MysqlType, MysqlValue};
use diesel::query_builder::{AstPass, QueryFragment};
use diesel::query_dsl::methods::ExecuteDsl;
use diesel::query_dsl::LoadQuery;
use diesel::sql_types::{BigInt, Datetime, HasSqlType};
use diesel::QueryResult;

use crate::sql_types::UtcTimestamp;
use crate::strategy::{BatchParts, ClaimsBatches};
use crate::{DatabaseClock, ReleasesRows, ReportsWinners, TimestampOn};

impl DatabaseClock for Mysql {
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
}

impl TimestampOn<Mysql> for Datetime {}
impl TimestampOn<Mysql> for UtcTimestamp {}

impl HasSqlType<UtcTimestamp> for Mysql {
    fn metadata(_lookup: &mut ()) -> MysqlType {
        MysqlType::DateTime
    }
}

impl FromSql<UtcTimestamp, Mysql> for DateTime<Utc> {
    fn from_sql(value: MysqlValue<'_>) -> deserialize::Result<Self> {
        <NaiveDateTime as FromSql<Datetime, Mysql>>::from_sql(value).map(|utc| utc.and_utc())
    }
}

impl<'q, S, Selection, ReadBack, C, R> ReportsWinners<'q, S, Selection, ReadBack, C, R> for Mysql
where
    C: diesel::Connection<Backend = Mysql>,
    S: ExecuteDsl<C>,
    ReadBack: LoadQuery<'q, C, R>,
{
    /// No transaction around the two: inside one, InnoDB would keep the row lock of every
    /// refused claim until the COMMIT, queueing contenders. Should the lease run out and another
    /// claim take a row in between, the read does not find it: the claim has lost that row, and
    /// the token guards every later write of the loser.
    fn winners(
        statement: S,
        _: Selection,
        read_back: ReadBack,
        conn: &mut C,
    ) -> QueryResult<Vec<R>> {
        if S::execute(statement, conn)? == 0 {
            return Ok(Vec::new());
        }
        read_back.load(conn)
    }
}

impl<'q, S, Keys, Locking, C, Key> ReleasesRows<'q, S, Keys, Locking, C, Key> for Mysql
where
    C: diesel::Connection<Backend = Mysql>,
    S: ExecuteDsl<C>,
    Locking: LoadQuery<'q, C, Key>,
{
    /// The rows the token still holds are locked first, so the `UPDATE` changes exactly those,
    /// and their keys are the answer.
    fn released(statement: S, _: Keys, locking: Locking, conn: &mut C) -> QueryResult<Vec<Key>> {
        conn.transaction(|conn| {
            let held: Vec<Key> = locking.load(conn)?;
            if !held.is_empty() {
                S::execute(statement, conn)?;
            }
            Ok(held)
        })
    }
}

/// One single-table `UPDATE .. ORDER BY .. LIMIT`: MariaDB refuses `LIMIT` in an `IN` subquery,
/// and MySQL an `UPDATE` that selects from its own table. InnoDB locks the rows it scans in
/// index order, so concurrent batches queue on each other briefly rather than deadlock; a
/// deadlock all the same claims nothing.
impl ClaimsBatches for Mysql {
    fn walk_batch_claim<'b>(
        batch: BatchParts<'b, Self>,
        mut out: AstPass<'_, 'b, Self>,
    ) -> QueryResult<()> {
        batch.walk_update_set(out.reborrow())?;
        batch.walk_filter_order_limit(out.reborrow())
    }
}
