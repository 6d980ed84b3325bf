//! SQLite: its SQL as the library writes it, and its connections.
use diesel::connection::SimpleConnection;
use diesel::prelude::*;
use diesel_lease::prelude::*;

use super::{growth_namespace_name, Backend};
use crate::shared::Res;
use crate::tables::{bench_leases, LeaseRow};
use diesel::r2d2::CustomizeConnection;

/// SQLite.
#[derive(Debug)]
pub struct Sqlite;

impl Backend for Sqlite {
    type Conn = diesel::SqliteConnection;
    const NAME: &str = "SQLite";
    const DEFAULT_PORT: u16 = 0;
    const OVERHEAD_SECTION: u32 = crate::measurements::SQLITE;
    const KEPT_DDL: &str = "CREATE TABLE bench_kept (id BIGINT PRIMARY KEY NOT NULL, owner TEXT, \
        claim_token TEXT, claimed_at TEXT)";
    const GROWTH_DDL: &[&str] = &[
        "CREATE TABLE bench_growth (id BIGINT PRIMARY KEY NOT NULL, status TEXT NOT NULL, \
         owner TEXT, claim_token TEXT, claimed_at TEXT)",
        "CREATE INDEX bench_growth_token ON bench_growth (claim_token)",
        "CREATE INDEX bench_growth_claimable ON bench_growth (id) WHERE status = 'queued'",
    ];
    const GROWTH_SETTLE: &[&str] = &["ANALYZE bench_growth", "PRAGMA wal_checkpoint(TRUNCATE)"];
    const PLAN_COLUMNS: &[&str] = &["detail"];
    const EXPLAIN: &str = "EXPLAIN QUERY PLAN";
    const DDL: &str =
        "CREATE TABLE bench_leases (id BIGINT PRIMARY KEY NOT NULL, status TEXT NOT NULL, \
        owner TEXT, claim_token TEXT, claimed_at TEXT)";
    const CLAIM: &str = "UPDATE `bench_leases` SET `status` = ?, `owner` = ?, `claim_token` = ?, `claimed_at` = strftime('%Y-%m-%d %H:%M:%f', 'now') WHERE ((`bench_leases`.`id` = ?) AND ((`bench_leases`.`claim_token` IS NULL) OR (`bench_leases`.`claimed_at` < strftime('%Y-%m-%d %H:%M:%f', 'now', printf('%+.6f seconds', -(?) / 1000000.0))))) RETURNING `bench_leases`.`id`, `bench_leases`.`status`, `bench_leases`.`owner`, `bench_leases`.`claim_token`, `bench_leases`.`claimed_at`, NULL";
    const READ_BACK: Option<&str> = None;
    const RENEW: &str = "UPDATE `bench_leases` SET `claimed_at` = strftime('%Y-%m-%d %H:%M:%f', 'now') WHERE ((`bench_leases`.`id` = ?) AND (`bench_leases`.`claim_token` = ? AND `bench_leases`.`claim_token` COLLATE BINARY = ?))";
    const RELEASE: &str = "UPDATE `bench_leases` SET `owner` = NULL, `claim_token` = NULL, `claimed_at` = NULL, `status` = ? WHERE ((`bench_leases`.`id` = ?) AND (`bench_leases`.`claim_token` = ? AND `bench_leases`.`claim_token` COLLATE BINARY = ?))";
    const CLAIM_CHAT: &str = "UPDATE `conversations` SET `busy_owner` = ?, `busy_turn_ref` = ?, `busy_since` = strftime('%Y-%m-%d %H:%M:%f', 'now') WHERE (((`conversations`.`id` = ?) AND (`conversations`.`user_id` = ?)) AND ((`conversations`.`busy_turn_ref` IS NULL) OR (`conversations`.`busy_since` < strftime('%Y-%m-%d %H:%M:%f', 'now', printf('%+.6f seconds', -(?) / 1000000.0)))))";
    const CLAIM_USER: &str = "UPDATE `user_settings` SET `busy_owner` = ?, `busy_turn_ref` = ?, `busy_since` = strftime('%Y-%m-%d %H:%M:%f', 'now', printf('%+.6f seconds', -(?) / 1000000.0)) WHERE ((`user_settings`.`user_id` = ?) AND ((`user_settings`.`busy_turn_ref` IS NULL) OR (`user_settings`.`busy_since` < strftime('%Y-%m-%d %H:%M:%f', 'now', printf('%+.6f seconds', -(?) / 1000000.0)))))";
    const RELEASE_CHAT: &str = "UPDATE `conversations` SET `busy_owner` = NULL, `busy_turn_ref` = NULL, `busy_since` = NULL WHERE (((`conversations`.`id` = ?) AND (`conversations`.`busy_turn_ref` = ? AND `conversations`.`busy_turn_ref` COLLATE BINARY = ?)) AND (`conversations`.`busy_owner` = ? AND `conversations`.`busy_owner` COLLATE BINARY = ?))";
    const RELEASE_USER: &str = "UPDATE `user_settings` SET `busy_owner` = NULL, `busy_turn_ref` = NULL, `busy_since` = NULL WHERE (((`user_settings`.`user_id` = ?) AND (`user_settings`.`busy_turn_ref` = ? AND `user_settings`.`busy_turn_ref` COLLATE BINARY = ?)) AND (`user_settings`.`busy_owner` = ? AND `user_settings`.`busy_owner` COLLATE BINARY = ?))";
    const SETTINGS: &[(&str, &str)] = &[
        ("SQLite", "SELECT 'SQLite ' || sqlite_version() AS value"),
        (
            "SQLite journal_mode",
            "SELECT journal_mode AS value FROM pragma_journal_mode",
        ),
        (
            "SQLite synchronous (1 = NORMAL)",
            "SELECT CAST(synchronous AS TEXT) AS value FROM pragma_synchronous",
        ),
    ];
    const ADVISORY: Option<&str> = None;
    const NOWAIT: bool = false;

    /// A database file beside the benchmark's.
    fn growth_namespace(url: &str, rows: i64) -> Res<String> {
        Ok(format!("{url}-{}", growth_namespace_name(rows)))
    }

    fn drop_growth_namespace(url: &str, rows: i64) -> Res<()> {
        remove_database(&Self::growth_namespace(url, rows)?);
        Ok(())
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

    /// A production SQLite setup: wait for the writer, WAL, synchronous=NORMAL.
    fn configure(conn: &mut Self::Conn) -> QueryResult<()> {
        conn.batch_execute(
            "PRAGMA busy_timeout = 30000; PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;",
        )
    }

    fn customizer() -> Option<Box<dyn CustomizeConnection<Self::Conn, diesel::r2d2::Error>>> {
        Some(Box::new(Pragmas))
    }

    fn nowait_busy(_conn: &mut Self::Conn, _id: i64, _micros: i64) -> QueryResult<bool> {
        Err(diesel::result::Error::NotFound)
    }

    fn advisory_lock(_conn: &mut Self::Conn, _key: i64) -> QueryResult<bool> {
        Ok(false)
    }

    fn advisory_unlock_all(_conn: &mut Self::Conn) -> QueryResult<()> {
        Ok(())
    }
}

/// Removes the database at `path` with its WAL and shared-memory files, whichever exist.
pub fn remove_database(path: &str) {
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{path}{suffix}"));
    }
}

/// Sets SQLite's pragmas on each pooled connection.
#[derive(Debug)]
struct Pragmas;

impl CustomizeConnection<diesel::SqliteConnection, diesel::r2d2::Error> for Pragmas {
    fn on_acquire(&self, conn: &mut diesel::SqliteConnection) -> Result<(), diesel::r2d2::Error> {
        Sqlite::configure(conn).map_err(diesel::r2d2::Error::QueryError)
    }
}

mod ops {
    type B = super::Sqlite;
    type Conn = diesel::SqliteConnection;
    include!("ops.rs");
    include!("fixtures.rs");
}
