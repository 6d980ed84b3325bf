//! A table author's job queue: worker threads claim due jobs in batches and keep their leases
//! with a keeper while they work; one worker dies holding a batch, which another reclaims once
//! its lease is outlived; an operator frees a job from its worker midway, and the worker, told by
//! its keeper, stops working on it. Every job is completed exactly once.
//!
//! ```text
//! cargo run --example job_queue                      # embedded SQLite, no server
//! DATABASE_URL=postgres://postgres@127.0.0.1/test cargo run --example job_queue --features postgres
//! DATABASE_URL=mysql://root@127.0.0.1/test cargo run --example job_queue --features mysql
//! ```
//!
//! The queue's code (queue.rs) is written once, generic over the connection, with one bound per
//! statement it runs, and called with a pool of the backend `DATABASE_URL` names.
//!
//! Exits non-zero if a job was lost or done twice.
use std::process::ExitCode;

#[path = "../support/mod.rs"]
#[macro_use]
mod support;
mod queue;

diesel::table! {
    use diesel::sql_types::*;
    use diesel_lease::sql_types::UtcTimestamp;

    example_jobs (id) {
        id -> BigInt,
        payload -> Text,
        status -> Text,
        due_at -> UtcTimestamp,
        attempts -> Integer,
        completed_by -> Nullable<Text>,
        owner -> Nullable<Text>,
        claim_token -> Nullable<Text>,
        claimed_at -> Nullable<UtcTimestamp>,
    }
}

// The table's lease columns carry the default names.
diesel_lease::claim_lease!(example_jobs);

/// The table, per backend, without its lease columns: `LeaseColumns` adds those (see queue.rs).
const POSTGRES_DDL: &[&str] = &[
    "DROP TABLE IF EXISTS example_jobs",
    "CREATE TABLE example_jobs (id BIGINT PRIMARY KEY, payload TEXT NOT NULL,
        status VARCHAR(16) NOT NULL CHECK (status IN ('queued', 'running', 'done')),
        due_at TIMESTAMPTZ NOT NULL DEFAULT statement_timestamp(), attempts INTEGER NOT NULL DEFAULT 0,
        completed_by VARCHAR(255))",
];
const MYSQL_DDL: &[&str] = &[
    "DROP TABLE IF EXISTS example_jobs",
    "CREATE TABLE example_jobs (id BIGINT PRIMARY KEY, payload TEXT NOT NULL,
        status VARCHAR(16) NOT NULL CHECK (status IN ('queued', 'running', 'done')),
        due_at DATETIME(6) NOT NULL DEFAULT (UTC_TIMESTAMP(6)), attempts INTEGER NOT NULL DEFAULT 0,
        completed_by VARCHAR(255))",
];
const SQLITE_DDL: &[&str] = &[
    "DROP TABLE IF EXISTS example_jobs",
    "CREATE TABLE example_jobs (id BIGINT PRIMARY KEY, payload TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('queued', 'running', 'done')),
        due_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')), attempts INTEGER NOT NULL DEFAULT 0,
        completed_by TEXT)",
];

/// The queue, its code generic over the connection, on the backend named.
fn run(backend: &support::Backend) -> support::Outcome {
    let ddl = match backend {
        support::Backend::Sqlite(_) => SQLITE_DDL,
        support::Backend::Postgres(_) => POSTGRES_DDL,
        support::Backend::Mysql(_) => MYSQL_DDL,
    };
    // A connection per worker, one for the operator, one for the keeper's renewals.
    let size = queue::WORKERS as u32 + 2;
    on_backend!(backend, size, |pool| Ok(queue::Queue::run(pool, ddl)?))
}

fn main() -> ExitCode {
    support::main("job_queue", run)
}
