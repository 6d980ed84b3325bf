//! `UtcTimestamp` on PostgreSQL: a `timestamptz`.
use chrono::{DateTime, Utc};
use diesel::deserialize::{self, FromSql};
use diesel::pg::{Pg, PgTypeMetadata, PgValue};
use diesel::sql_types::{HasSqlType, Timestamptz, Uuid};

use crate::backend::TimestampOn;
use crate::sql_types::UtcTimestamp;

impl TimestampOn<Pg> for Timestamptz {}
impl TimestampOn<Pg> for UtcTimestamp {}
impl crate::ClaimedAtType for diesel::sql_types::Nullable<Timestamptz> {}

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

crate::table::single_column_keys!(Uuid => uuid::Uuid: [uuid::Uuid]);
