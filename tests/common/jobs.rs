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
jobs_table!(
    /// `lease_jobs` again, whose owner and token columns ignore case, each with an index: MySQL's
    /// and MariaDB's default collation, SQLite's `NOCASE`, a nondeterministic ICU collation on
    /// PostgreSQL (tests/scenarios/exact.rs).
    case_jobs
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

/// The DDL of `case_jobs` on each backend: owner and token compared ignoring case by the column's
/// collation, and an index on each.
pub const POSTGRES_CASE_DDL: &str = "CREATE COLLATION IF NOT EXISTS lease_ignoring_case
    (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
    CREATE TABLE case_jobs (
    id VARCHAR(64) PRIMARY KEY,
    status VARCHAR(16) NOT NULL,
    worker VARCHAR(255) COLLATE lease_ignoring_case,
    lease_token VARCHAR(255) COLLATE lease_ignoring_case,
    leased_at TIMESTAMPTZ,
    fence BIGINT NOT NULL DEFAULT 0,
    previous_worker VARCHAR(255));
    CREATE INDEX case_jobs_worker ON case_jobs (worker);
    CREATE INDEX case_jobs_token ON case_jobs (lease_token)";
/// The server's default collation of utf8mb4: `utf8mb4_general_ci` on MariaDB (which also pads
/// with spaces), `utf8mb4_0900_ai_ci` on MySQL 8.
pub const MYSQL_CASE_DDL: &str = "CREATE TABLE case_jobs (
    id VARCHAR(64) PRIMARY KEY,
    status VARCHAR(16) NOT NULL,
    worker VARCHAR(255),
    lease_token VARCHAR(255),
    leased_at DATETIME(6),
    fence BIGINT NOT NULL DEFAULT 0,
    previous_worker VARCHAR(255),
    INDEX case_jobs_worker (worker),
    INDEX case_jobs_token (lease_token)) DEFAULT CHARSET = utf8mb4";
pub const SQLITE_CASE_DDL: &str = "CREATE TABLE case_jobs (
    id TEXT PRIMARY KEY,
    status TEXT NOT NULL,
    worker TEXT COLLATE NOCASE,
    lease_token TEXT COLLATE NOCASE,
    leased_at TEXT,
    fence BIGINT NOT NULL DEFAULT 0,
    previous_worker TEXT);
    CREATE INDEX case_jobs_worker ON case_jobs (worker);
    CREATE INDEX case_jobs_token ON case_jobs (lease_token)";
