//! PostgreSQL: its SQL as the library writes it, and its connections.
use diesel::prelude::*;
use diesel::sql_types::BigInt;
use diesel_lease::prelude::*;

use super::{growth_namespace_name, run_alone, Backend, Flag};
use crate::shared::Res;
use crate::tables::{bench_leases, LeaseRow};

/// PostgreSQL.
#[derive(Debug)]
pub struct Pg;

impl Backend for Pg {
    type Conn = diesel::PgConnection;
    const NAME: &str = "PostgreSQL";
    const DEFAULT_PORT: u16 = 5432;
    const KEPT_DDL: &str = "CREATE TABLE bench_kept (id BIGINT PRIMARY KEY, owner VARCHAR(255), \
        claim_token VARCHAR(255), claimed_at TIMESTAMPTZ)";
    const GROWTH_DDL: &[&str] = &[
        "CREATE TABLE bench_growth (id BIGINT PRIMARY KEY, status VARCHAR(16) NOT NULL, \
         owner TEXT, claim_token TEXT, claimed_at TIMESTAMPTZ) WITH (fillfactor = 90)",
        "CREATE INDEX bench_growth_token ON bench_growth (claim_token)",
        "CREATE INDEX bench_growth_claimable ON bench_growth (id) WHERE status = 'queued'",
    ];
    const GROWTH_SETTLE: &[&str] = &["ANALYZE bench_growth", "CHECKPOINT"];
    const PLAN_COLUMNS: &[&str] = &["QUERY PLAN"];
    const EXPLAIN: &str = "EXPLAIN";
    const DDL: &str =
        "CREATE TABLE bench_leases (id BIGINT PRIMARY KEY, status VARCHAR(16) NOT NULL, \
        owner VARCHAR(255), claim_token VARCHAR(255), claimed_at TIMESTAMPTZ)";
    const CLAIM: &str = r#"UPDATE "bench_leases" SET "status" = $1, "owner" = $2, "claim_token" = $3, "claimed_at" = statement_timestamp() WHERE (("bench_leases"."id" = $4) AND (("bench_leases"."claim_token" IS NULL) OR ("bench_leases"."claimed_at" < (statement_timestamp() - $5 * INTERVAL '1 microsecond')))) RETURNING "bench_leases"."id", "bench_leases"."status", "bench_leases"."owner", "bench_leases"."claim_token", "bench_leases"."claimed_at", NULL"#;
    const READ_BACK: Option<&str> = None;
    const RENEW: &str = r#"UPDATE "bench_leases" SET "claimed_at" = statement_timestamp() WHERE (("bench_leases"."id" = $1) AND ("bench_leases"."claim_token" = $2 AND ("bench_leases"."claim_token")::text COLLATE "C" = $3))"#;
    const RELEASE: &str = r#"UPDATE "bench_leases" SET "owner" = NULL, "claim_token" = NULL, "claimed_at" = NULL, "status" = $1 WHERE (("bench_leases"."id" = $2) AND ("bench_leases"."claim_token" = $3 AND ("bench_leases"."claim_token")::text COLLATE "C" = $4))"#;
    const CLAIM_CHAT: &str = r#"UPDATE "conversations" SET "busy_owner" = $1, "busy_turn_ref" = $2, "busy_since" = statement_timestamp() WHERE ((("conversations"."id" = $3) AND ("conversations"."user_id" = $4)) AND (("conversations"."busy_turn_ref" IS NULL) OR ("conversations"."busy_since" < (statement_timestamp() - $5 * INTERVAL '1 microsecond'))))"#;
    const CLAIM_USER: &str = r#"UPDATE "user_settings" SET "busy_owner" = $1, "busy_turn_ref" = $2, "busy_since" = (statement_timestamp() - $3 * INTERVAL '1 microsecond') WHERE (("user_settings"."user_id" = $4) AND (("user_settings"."busy_turn_ref" IS NULL) OR ("user_settings"."busy_since" < (statement_timestamp() - $5 * INTERVAL '1 microsecond'))))"#;
    const RELEASE_CHAT: &str = r#"UPDATE "conversations" SET "busy_owner" = NULL, "busy_turn_ref" = NULL, "busy_since" = NULL WHERE ((("conversations"."id" = $1) AND ("conversations"."busy_turn_ref" = $2 AND ("conversations"."busy_turn_ref")::text COLLATE "C" = $3)) AND ("conversations"."busy_owner" = $4 AND ("conversations"."busy_owner")::text COLLATE "C" = $5))"#;
    const RELEASE_USER: &str = r#"UPDATE "user_settings" SET "busy_owner" = NULL, "busy_turn_ref" = NULL, "busy_since" = NULL WHERE ((("user_settings"."user_id" = $1) AND ("user_settings"."busy_turn_ref" = $2 AND ("user_settings"."busy_turn_ref")::text COLLATE "C" = $3)) AND ("user_settings"."busy_owner" = $4 AND ("user_settings"."busy_owner")::text COLLATE "C" = $5))"#;
    const SETTINGS: &[(&str, &str)] = &[
        ("PostgreSQL", "SELECT version() AS value"),
        (
            "PostgreSQL fsync",
            "SELECT current_setting('fsync') AS value",
        ),
        (
            "PostgreSQL synchronous_commit",
            "SELECT current_setting('synchronous_commit') AS value",
        ),
        (
            "PostgreSQL shared_buffers",
            "SELECT current_setting('shared_buffers') AS value",
        ),
    ];
    const ADVISORY: Option<&str> = Some("pg_try_advisory_lock");
    const NOWAIT: bool = true;

    /// A schema, made the connection's `search_path` through libpq's `options`.
    fn growth_namespace(url: &str, rows: i64) -> Res<String> {
        let schema = growth_namespace_name(rows);
        run_alone::<Self>(url, format!("CREATE SCHEMA IF NOT EXISTS {schema}"))?;
        let separator = if url.contains('?') { '&' } else { '?' };
        Ok(format!("{url}{separator}options=-csearch_path%3D{schema}"))
    }

    fn drop_growth_namespace(url: &str, rows: i64) -> Res<()> {
        let schema = growth_namespace_name(rows);
        run_alone::<Self>(url, format!("DROP SCHEMA IF EXISTS {schema} CASCADE"))
    }

    /// The claim of the cycle through `diesel::update`, its row read back as the library reads
    /// it: `RETURNING`.
    fn diesel_update_claim(
        conn: &mut Self::Conn,
        id: i64,
        claim: &Claim,
        lease: Lease,
    ) -> QueryResult<Option<LeaseRow>> {
        let t = bench_leases::table;
        // The library also reads the fence: NULL for a table without one.
        diesel::update(t.find(id).filter(t.claimable(lease)))
            .set((bench_leases::status.eq("running"), t.taken(claim)))
            .returning((bench_leases::all_columns, crate::tables::no_fence()))
            .get_result::<(LeaseRow, Option<i64>)>(conn)
            .optional()
            .map(|won| won.map(|(row, _)| row))
    }

    /// The first of `SELECT .. FOR UPDATE NOWAIT`: is the row held and fresh?
    fn nowait_busy(conn: &mut Self::Conn, id: i64, micros: i64) -> QueryResult<bool> {
        diesel::sql_query(
            "SELECT (claim_token IS NOT NULL AND claimed_at >= statement_timestamp() - $2 * INTERVAL '1 microsecond') AS flag \
             FROM bench_leases WHERE id = $1 FOR UPDATE NOWAIT",
        )
        .bind::<BigInt, _>(id)
        .bind::<BigInt, _>(micros)
        .get_result::<Flag>(conn)
        .map(|row| row.flag)
    }

    fn advisory_lock(conn: &mut Self::Conn, key: i64) -> QueryResult<bool> {
        diesel::sql_query("SELECT pg_try_advisory_lock($1) AS flag")
            .bind::<BigInt, _>(key)
            .get_result::<Flag>(conn)
            .map(|row| row.flag)
    }

    fn advisory_unlock_all(conn: &mut Self::Conn) -> QueryResult<()> {
        diesel::sql_query("SELECT pg_advisory_unlock_all()")
            .execute(conn)
            .map(drop)
    }
}

mod ops {
    type B = super::Pg;
    type Conn = diesel::PgConnection;
    include!("ops.rs");
    include!("fixtures.rs");
}
