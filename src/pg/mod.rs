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
use diesel::query_builder::AstPass;
use diesel::sql_types::{BigInt, HasSqlType, Timestamptz};
use diesel::QueryResult;

use crate::get_if_won::returned_row;
use crate::sql_types::UtcTimestamp;
use crate::{Claim, DatabaseClock, Error, ReportsWinner, TimestampOn};

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

impl crate::SupportsReturning for Pg {}

impl<'q, S, C, R> ReportsWinner<'q, S, C, R> for Pg
where
    C: diesel::Connection<Backend = Pg>,
    S: diesel::query_dsl::LoadQuery<'q, C, R>,
{
    fn report_winner(statement: S, _claim: &Claim, conn: &mut C) -> Result<Option<R>, Error> {
        returned_row(statement, conn)
    }
}

impl crate::agent::AgentMigrations for Pg {
    const MIGRATIONS: diesel_migrations::EmbeddedMigrations =
        diesel_migrations::embed_migrations!("migrations/postgres");
}
