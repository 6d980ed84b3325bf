//! A table author's jobs table: the schema the generic-layer scenarios claim rows of.
use chrono::{DateTime, Utc};
use diesel::prelude::*;

/// A jobs table named `$table`, whose lease columns have names other than the defaults, so that
/// the explicit mapping is what every scenario runs through.
macro_rules! jobs_table {
    ($(#[$doc:meta])* $table:ident) => {
        diesel::table! {
            use diesel::sql_types::*;
            use diesel_lease::sql_types::UtcTimestamp;

            $(#[$doc])*
            $table (id) {
                id -> Text,
                status -> Text,
                worker -> Nullable<Text>,
                lease_token -> Nullable<Text>,
                leased_at -> Nullable<UtcTimestamp>,
                fence -> BigInt,
                previous_worker -> Nullable<Text>,
            }
        }

        diesel_lease::claim_lease!($table {
            owner: worker,
            claim_token: lease_token,
            claimed_at: leased_at,
            fence: fence,
        });
    };
}

jobs_table!(lease_jobs);
jobs_table!(
    /// `lease_jobs` again, with an index on its status column, as many queue tables have: the
    /// batch claims under contention run on both (tests/scenarios/contention.rs).
    indexed_jobs
);
jobs_table!(
    /// `lease_jobs` under another Rust name: what the library reports of it must be the SQL name
    /// (tests/scenarios/draining.rs).
    #[sql_name = "lease_jobs"]
    renamed_jobs
);

#[derive(Debug, Clone, PartialEq, Queryable, Selectable)]
#[diesel(table_name = lease_jobs)]
pub struct Job {
    pub id: String,
    pub status: String,
    pub worker: Option<String>,
    pub lease_token: Option<String>,
    pub leased_at: Option<DateTime<Utc>>,
    pub fence: i64,
    pub previous_worker: Option<String>,
}

/// The DDL of `lease_jobs` on each backend; the CHECK lets a test make the caller's part fail.
pub const POSTGRES_DDL: &str = "CREATE TABLE lease_jobs (
    id VARCHAR(64) PRIMARY KEY,
    status VARCHAR(16) NOT NULL CHECK (status IN ('queued', 'running', 'done')),
    worker VARCHAR(255),
    lease_token VARCHAR(255),
    leased_at TIMESTAMPTZ,
    fence BIGINT NOT NULL DEFAULT 0,
    previous_worker VARCHAR(255))";
pub const MYSQL_DDL: &str = "CREATE TABLE lease_jobs (
    id VARCHAR(64) PRIMARY KEY,
    status VARCHAR(16) NOT NULL CHECK (status IN ('queued', 'running', 'done')),
    worker VARCHAR(255),
    lease_token VARCHAR(255) COLLATE utf8mb4_bin,
    leased_at DATETIME(6),
    fence BIGINT NOT NULL DEFAULT 0,
    previous_worker VARCHAR(255),
    INDEX lease_jobs_token (lease_token))";
pub const SQLITE_DDL: &str = "CREATE TABLE lease_jobs (
    id TEXT PRIMARY KEY,
    status TEXT NOT NULL CHECK (status IN ('queued', 'running', 'done')),
    worker TEXT,
    lease_token TEXT,
    leased_at TEXT,
    fence BIGINT NOT NULL DEFAULT 0,
    previous_worker TEXT)";

/// The DDL of `indexed_jobs` on each backend: `lease_jobs`'s, and an index on `status`.
pub const POSTGRES_INDEXED_DDL: &str = "CREATE TABLE indexed_jobs (
    id VARCHAR(64) PRIMARY KEY,
    status VARCHAR(16) NOT NULL,
    worker VARCHAR(255),
    lease_token VARCHAR(255),
    leased_at TIMESTAMPTZ,
    fence BIGINT NOT NULL DEFAULT 0,
    previous_worker VARCHAR(255));
    CREATE INDEX indexed_jobs_status ON indexed_jobs (status)";
pub const MYSQL_INDEXED_DDL: &str = "CREATE TABLE indexed_jobs (
    id VARCHAR(64) PRIMARY KEY,
    status VARCHAR(16) NOT NULL,
    worker VARCHAR(255),
    lease_token VARCHAR(255) COLLATE utf8mb4_bin,
    leased_at DATETIME(6),
    fence BIGINT NOT NULL DEFAULT 0,
    previous_worker VARCHAR(255),
    INDEX indexed_jobs_token (lease_token),
    INDEX indexed_jobs_status (status))";
pub const SQLITE_INDEXED_DDL: &str = "CREATE TABLE indexed_jobs (
    id TEXT PRIMARY KEY,
    status TEXT NOT NULL,
    worker TEXT,
    lease_token TEXT,
    leased_at TEXT,
    fence BIGINT NOT NULL DEFAULT 0,
    previous_worker TEXT);
    CREATE INDEX indexed_jobs_status ON indexed_jobs (status)";
