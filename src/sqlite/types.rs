//! `UtcTimestamp` on SQLite: TEXT in the one format the library writes.
use chrono::{DateTime, NaiveDateTime, Utc};
use diesel::deserialize::{self, FromSql};
use diesel::sql_types::{HasSqlType, Timestamp};
use diesel::sqlite::{Sqlite, SqliteType, SqliteValue};

use crate::backend::TimestampOn;
use crate::sql_types::UtcTimestamp;

impl TimestampOn<Sqlite> for Timestamp {}
impl TimestampOn<Sqlite> for UtcTimestamp {}
impl crate::ClaimedAtType for diesel::sql_types::Nullable<Timestamp> {}

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
