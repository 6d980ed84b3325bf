//! PostgreSQL through PgBouncer in transaction mode, at `PGBOUNCER_DATABASE_URL`, with the
//! library's pooler-safe setup on every connection.
server_backend!(
    diesel::PgConnection,
    "PgBouncer",
    "PGBOUNCER_DATABASE_URL",
    [
        ("lease_jobs", super::jobs::POSTGRES_DDL),
        ("indexed_jobs", super::jobs::POSTGRES_INDEXED_DDL),
        ("native_jobs", native::DDL),
        ("lease_items", super::items::POSTGRES_DDL),
        ("case_jobs", super::jobs::POSTGRES_CASE_DDL),
    ],
    "SET TIME ZONE 'Asia/Kathmandu'",
    Some(Box::new(diesel_lease::pg::PgTransactionPooling::default()))
);

pub use super::postgres::native;
// Used by the keeper and health scenarios only, and this module is compiled into every test
// binary.
#[allow(unused_imports)]
pub use super::postgres::{earlier, HEALTH_READINGS};
