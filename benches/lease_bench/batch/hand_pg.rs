//! PostgreSQL's batch statements.
use crate::batch::prelude::*;
use crate::batch::returning::returning_backend;

pub const NAME: &str = <crate::backend::Pg as crate::backend::Backend>::NAME;
pub type Conn = PgConnection;
pub const DDL: &[&str] = &[
    "CREATE TABLE bench_jobs (id BIGINT PRIMARY KEY, status VARCHAR(16) NOT NULL, \
     owner VARCHAR(255), claim_token VARCHAR(255), claimed_at TIMESTAMPTZ)",
    "CREATE INDEX bench_jobs_queue ON bench_jobs (status, id)",
];
pub const EMPTY: &str = "TRUNCATE bench_jobs";
/// After a fresh queue: statistics, so that every variant's plans see the same table.
pub const AFTER_FILL: Option<&str> = Some("ANALYZE bench_jobs");
/// After rows were claimed and freed again: their dead versions gone.
pub const AFTER_FREE: Option<&str> = Some("VACUUM bench_jobs");
/// Whether a batch claim locks its candidates in rounds, which the start-up check then also
/// compares past a first round that came back short.
pub const LOCKS_IN_ROUNDS: bool = false;
/// The key column, as key lists name it.
pub const KEY: &str = r#""bench_jobs"."id""#;
pub const CLAIM: &str = r#"WITH candidates AS MATERIALIZED (SELECT "bench_jobs"."id" FROM "bench_jobs" WHERE ((("bench_jobs"."claim_token" IS NULL) OR ("bench_jobs"."claimed_at" < (statement_timestamp() - $1 * INTERVAL '1 microsecond'))) AND ("bench_jobs"."status" = $2)) ORDER BY "bench_jobs"."id" LIMIT $3 FOR UPDATE SKIP LOCKED) UPDATE "bench_jobs" SET "status" = $4, "owner" = $5, "claim_token" = $6, "claimed_at" = statement_timestamp() WHERE ("bench_jobs"."id") IN (SELECT * FROM candidates) AND ((("bench_jobs"."claim_token" IS NULL) OR ("bench_jobs"."claimed_at" < (statement_timestamp() - $7 * INTERVAL '1 microsecond'))) AND ("bench_jobs"."status" = $8)) RETURNING "bench_jobs"."id", "bench_jobs"."id", NULL"#;
pub const RELEASE: &str = r#"UPDATE "bench_jobs" SET "status" = $1, "owner" = NULL, "claim_token" = NULL, "claimed_at" = NULL WHERE ({keys} AND ("bench_jobs"."claim_token" = $2 AND ("bench_jobs"."claim_token")::text COLLATE "C" = $3)) RETURNING "bench_jobs"."id""#;
/// The release of one key: its matched count says whether the token still held the row.
pub const RELEASE_ONE: &str = r#"UPDATE "bench_jobs" SET "status" = $1, "owner" = NULL, "claim_token" = NULL, "claimed_at" = NULL WHERE ({keys} AND ("bench_jobs"."claim_token" = $2 AND ("bench_jobs"."claim_token")::text COLLATE "C" = $3))"#;

fn claim_binds<'a>(n: i64, owner: &'a str, token: &'a str) -> [Bind<'a>; 8] {
    [
        Bind::BigInt(LEASE_MICROS),
        Bind::Text("queued"),
        Bind::BigInt(n),
        Bind::Text("running"),
        Bind::Text(owner),
        Bind::Text(token),
        Bind::BigInt(LEASE_MICROS),
        Bind::Text("queued"),
    ]
}

returning_backend!();
