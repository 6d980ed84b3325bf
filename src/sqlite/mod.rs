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
use diesel::query_builder::AstPass;
use diesel::sql_types::{BigInt, HasSqlType, Timestamp};
use diesel::sqlite::{Sqlite, SqliteType, SqliteValue};
use diesel::QueryResult;

use crate::get_if_won::returned_row;
use crate::sql_types::UtcTimestamp;
use crate::{Claim, DatabaseClock, Error, ReportsWinner, TimestampOn};

impl DatabaseClock for Sqlite {
    fn walk_now(mut out: AstPass<'_, '_, Self>) -> QueryResult<()> {
        out.push_sql("strftime('%Y-%m-%d %H:%M:%f', 'now')");
        Ok(())
    }

    fn walk_ago<'b>(micros: &'b i64, mut out: AstPass<'_, 'b, Self>) -> QueryResult<()> {
        out.push_sql("strftime('%Y-%m-%d %H:%M:%f', 'now', printf('-%.6f seconds', ");
        out.push_bind_param::<BigInt, _>(micros)?;
        out.push_sql(" / 1000000.0))");
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

impl crate::SupportsReturning for Sqlite {}

impl<'q, S, C, R> ReportsWinner<'q, S, C, R> for Sqlite
where
    C: diesel::Connection<Backend = Sqlite>,
    S: diesel::query_dsl::LoadQuery<'q, C, R>,
{
    fn report_winner(statement: S, _claim: &Claim, conn: &mut C) -> Result<Option<R>, Error> {
        returned_row(statement, conn)
    }
}

impl crate::agent::AgentMigrations for Sqlite {
    const MIGRATIONS: diesel_migrations::EmbeddedMigrations =
        diesel_migrations::embed_migrations!("migrations/sqlite");
}
