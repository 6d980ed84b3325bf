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
use diesel::query_builder::AstPass;
use diesel::sql_types::{BigInt, Datetime, HasSqlType};
use diesel::QueryResult;

use crate::get_if_won::matched_row;
use crate::sql_types::UtcTimestamp;
use crate::{
    Claim, ClaimLease, ClaimingStatement, DatabaseClock, Error, ReportsWinner, TimestampOn,
};

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

impl<'q, S, C, R> ReportsWinner<'q, S, C, R> for Mysql
where
    S: ClaimingStatement + diesel::query_dsl::methods::ExecuteDsl<C>,
    C: diesel::Connection<Backend = Mysql>,
    for<'a> <S::Table as ClaimLease>::RowsHeldBy<'a>: diesel::query_dsl::LoadQuery<'a, C, R>,
{
    fn report_winner(statement: S, claim: &Claim, conn: &mut C) -> Result<Option<R>, Error> {
        matched_row(statement, claim, conn)
    }
}

impl crate::agent::AgentMigrations for Mysql {
    const MIGRATIONS: diesel_migrations::EmbeddedMigrations =
        diesel_migrations::embed_migrations!("migrations/mysql");
}
