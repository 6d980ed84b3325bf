//! `UtcTimestamp` on MySQL/MariaDB, a `DATETIME(6)` holding UTC, and the unsigned key types.
use chrono::{DateTime, NaiveDateTime, Utc};
use diesel::deserialize::{self, FromSql};
use diesel::mysql::{Mysql, MysqlType, MysqlValue};
use diesel::sql_types::{BigInt, Datetime, HasSqlType, Integer, SmallInt, Unsigned};

use crate::backend::TimestampOn;
use crate::sql_types::UtcTimestamp;

impl TimestampOn<Mysql> for Datetime {}
impl TimestampOn<Mysql> for UtcTimestamp {}
impl crate::ClaimedAtType for diesel::sql_types::Nullable<Datetime> {}

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

crate::table::single_column_keys!(
    Unsigned<BigInt> => u64: [u64, u32, u16, u8],
    Unsigned<Integer> => u32: [u32, u16, u8],
    Unsigned<SmallInt> => u16: [u16, u8],
);
