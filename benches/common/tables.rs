//! The harness's own tables (measurements 1 to 6, 9 and 11) and the row the claim cycle reads.
use chrono::{DateTime, Utc};
use diesel::prelude::*;

diesel::table! {
    use diesel::sql_types::*;
    use diesel_lease::sql_types::UtcTimestamp;

    /// The benchmark's own leased rows.
    bench_leases (id) {
        id -> BigInt,
        status -> Text,
        owner -> Nullable<Text>,
        claim_token -> Nullable<Text>,
        claimed_at -> Nullable<UtcTimestamp>,
    }
}

diesel_lease::claim_lease!(bench_leases);

diesel::table! {
    use diesel::sql_types::*;
    use diesel_lease::sql_types::UtcTimestamp;

    /// The rows a keeper keeps in measurement 9.
    bench_kept (id) {
        id -> BigInt,
        owner -> Nullable<Text>,
        claim_token -> Nullable<Text>,
        claimed_at -> Nullable<UtcTimestamp>,
    }
}

diesel_lease::claim_lease!(bench_kept);

diesel::table! {
    use diesel::sql_types::*;
    use diesel_lease::sql_types::UtcTimestamp;

    /// The queue of measurement 11: most of its jobs done and kept, as real queues keep them.
    bench_growth (id) {
        id -> BigInt,
        status -> Text,
        owner -> Nullable<Text>,
        claim_token -> Nullable<Text>,
        claimed_at -> Nullable<UtcTimestamp>,
    }
}

diesel_lease::claim_lease!(bench_growth);

/// A row of `bench_leases`, read by the library (`Queryable`) and by `sql_query` (`QueryableByName`).
#[derive(Debug, Queryable, QueryableByName)]
#[diesel(table_name = bench_leases)]
#[allow(dead_code)] // read back to be decoded, as a caller would
pub struct LeaseRow {
    pub id: i64,
    pub status: String,
    pub owner: Option<String>,
    pub claim_token: Option<String>,
    pub claimed_at: Option<DateTime<Utc>>,
}

/// The fence the library reads back beside a claimed row: `NULL` on a table without one.
pub fn no_fence() -> diesel_lease::dsl::Null<diesel::sql_types::Nullable<diesel::sql_types::BigInt>>
{
    diesel_lease::dsl::Null::default()
}
