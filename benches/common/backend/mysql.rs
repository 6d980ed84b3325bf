//! MySQL/MariaDB: its SQL as the library writes it, and its connections.
use diesel::prelude::*;
use diesel::sql_types::BigInt;
use diesel_lease::prelude::*;

use super::{growth_namespace_name, run_alone, Backend, IntFlag};
use crate::shared::Res;
use crate::tables::{bench_leases, LeaseRow};

/// MySQL/MariaDB.
#[derive(Debug)]
pub struct Mysql;

impl Backend for Mysql {
    type Conn = diesel::MysqlConnection;
    const NAME: &str = "MariaDB";
    const DEFAULT_PORT: u16 = 3306;
    const KEPT_DDL: &str = "CREATE TABLE bench_kept (id BIGINT PRIMARY KEY, owner VARCHAR(255), \
        claim_token VARCHAR(255), claimed_at DATETIME(6), \
        INDEX bench_kept_token (claim_token)) ENGINE = InnoDB";
    const GROWTH_DDL: &[&str] = &[
        "CREATE TABLE bench_growth (id BIGINT PRIMARY KEY, status VARCHAR(16) NOT NULL, \
         owner VARCHAR(255), claim_token VARCHAR(255) COLLATE utf8mb4_bin, \
         claimed_at DATETIME(6)) ENGINE = InnoDB",
        "CREATE INDEX bench_growth_token ON bench_growth (claim_token)",
        // No partial indexes: the status leads, so that the queued rows are one range in key order.
        "CREATE INDEX bench_growth_claimable ON bench_growth (status, id)",
    ];
    const GROWTH_SETTLE: &[&str] = &["ANALYZE TABLE bench_growth"];
    const PLAN_COLUMNS: &[&str] = &["table", "type", "key", "Extra"];
    const EXPLAIN: &str = "EXPLAIN";
    const DDL: &str =
        "CREATE TABLE bench_leases (id BIGINT PRIMARY KEY, status VARCHAR(16) NOT NULL, \
        owner VARCHAR(255), claim_token VARCHAR(255), claimed_at DATETIME(6), \
        INDEX bench_leases_token (claim_token)) ENGINE = InnoDB";
    const CLAIM: &str = "UPDATE `bench_leases` SET `status` = ?, `owner` = ?, `claim_token` = ?, `claimed_at` = UTC_TIMESTAMP(6) WHERE ((`bench_leases`.`id` = ?) AND ((`bench_leases`.`claim_token` IS NULL) OR (`bench_leases`.`claimed_at` < (UTC_TIMESTAMP(6) - INTERVAL ? MICROSECOND))))";
    const READ_BACK: Option<&str> = Some("SELECT `bench_leases`.`id`, `bench_leases`.`status`, `bench_leases`.`owner`, `bench_leases`.`claim_token`, `bench_leases`.`claimed_at`, NULL FROM `bench_leases` WHERE ((`bench_leases`.`id` = ?) AND (`bench_leases`.`claim_token` = ? AND CAST(CONVERT(`bench_leases`.`claim_token` USING utf8mb4) AS BINARY) = ?))");
    const RENEW: &str = "UPDATE `bench_leases` SET `claimed_at` = UTC_TIMESTAMP(6) WHERE ((`bench_leases`.`id` = ?) AND (`bench_leases`.`claim_token` = ? AND CAST(CONVERT(`bench_leases`.`claim_token` USING utf8mb4) AS BINARY) = ?))";
    const RELEASE: &str = "UPDATE `bench_leases` SET `owner` = NULL, `claim_token` = NULL, `claimed_at` = NULL, `status` = ? WHERE ((`bench_leases`.`id` = ?) AND (`bench_leases`.`claim_token` = ? AND CAST(CONVERT(`bench_leases`.`claim_token` USING utf8mb4) AS BINARY) = ?))";
    const CLAIM_CHAT: &str = "UPDATE `conversations` SET `busy_owner` = ?, `busy_turn_ref` = ?, `busy_since` = UTC_TIMESTAMP(6) WHERE (((`conversations`.`id` = ?) AND (`conversations`.`user_id` = ?)) AND ((`conversations`.`busy_turn_ref` IS NULL) OR (`conversations`.`busy_since` < (UTC_TIMESTAMP(6) - INTERVAL ? MICROSECOND))))";
    const CLAIM_USER: &str = "UPDATE `user_settings` SET `busy_owner` = ?, `busy_turn_ref` = ?, `busy_since` = (UTC_TIMESTAMP(6) - INTERVAL ? MICROSECOND) WHERE ((`user_settings`.`user_id` = ?) AND ((`user_settings`.`busy_turn_ref` IS NULL) OR (`user_settings`.`busy_since` < (UTC_TIMESTAMP(6) - INTERVAL ? MICROSECOND))))";
    const RELEASE_CHAT: &str = "UPDATE `conversations` SET `busy_owner` = NULL, `busy_turn_ref` = NULL, `busy_since` = NULL WHERE (((`conversations`.`id` = ?) AND (`conversations`.`busy_turn_ref` = ? AND CAST(CONVERT(`conversations`.`busy_turn_ref` USING utf8mb4) AS BINARY) = ?)) AND (`conversations`.`busy_owner` = ? AND CAST(CONVERT(`conversations`.`busy_owner` USING utf8mb4) AS BINARY) = ?))";
    const RELEASE_USER: &str = "UPDATE `user_settings` SET `busy_owner` = NULL, `busy_turn_ref` = NULL, `busy_since` = NULL WHERE (((`user_settings`.`user_id` = ?) AND (`user_settings`.`busy_turn_ref` = ? AND CAST(CONVERT(`user_settings`.`busy_turn_ref` USING utf8mb4) AS BINARY) = ?)) AND (`user_settings`.`busy_owner` = ? AND CAST(CONVERT(`user_settings`.`busy_owner` USING utf8mb4) AS BINARY) = ?))";
    const ACQUIRE_BOTH: Option<&str> = Some("UPDATE `conversations` STRAIGHT_JOIN `user_settings` ON (`user_settings`.`user_id` = `conversations`.`user_id`) SET `conversations`.`busy_owner` = ?, `conversations`.`busy_turn_ref` = ?, `conversations`.`busy_since` = UTC_TIMESTAMP(6), `user_settings`.`busy_owner` = ?, `user_settings`.`busy_turn_ref` = ?, `user_settings`.`busy_since` = UTC_TIMESTAMP(6) WHERE ((((`conversations`.`id` = ?) AND (`conversations`.`user_id` = ?)) AND (`user_settings`.`user_id` = ?)) AND (((`conversations`.`busy_turn_ref` IS NULL) OR (`conversations`.`busy_since` < (UTC_TIMESTAMP(6) - INTERVAL ? MICROSECOND))) AND ((`user_settings`.`busy_turn_ref` IS NULL) OR (`user_settings`.`busy_since` < (UTC_TIMESTAMP(6) - INTERVAL ? MICROSECOND)))))");
    const RELEASE_BOTH: Option<&str> = Some("UPDATE `conversations` STRAIGHT_JOIN `user_settings` ON (`user_settings`.`user_id` = `conversations`.`user_id`) SET `conversations`.`busy_owner` = NULL, `conversations`.`busy_turn_ref` = NULL, `conversations`.`busy_since` = NULL, `user_settings`.`busy_owner` = NULL, `user_settings`.`busy_turn_ref` = NULL, `user_settings`.`busy_since` = NULL WHERE ((((`conversations`.`id` = ?) AND (`conversations`.`user_id` = ?)) AND (`user_settings`.`user_id` = ?)) AND (((`conversations`.`busy_turn_ref` = ? AND CAST(CONVERT(`conversations`.`busy_turn_ref` USING utf8mb4) AS BINARY) = ?) AND (`conversations`.`busy_owner` = ? AND CAST(CONVERT(`conversations`.`busy_owner` USING utf8mb4) AS BINARY) = ?)) AND ((`user_settings`.`busy_turn_ref` = ? AND CAST(CONVERT(`user_settings`.`busy_turn_ref` USING utf8mb4) AS BINARY) = ?) AND (`user_settings`.`busy_owner` = ? AND CAST(CONVERT(`user_settings`.`busy_owner` USING utf8mb4) AS BINARY) = ?))))");
    const SETTINGS: &[(&str, &str)] = &[
        ("MariaDB", "SELECT CAST(version() AS CHAR) AS value"),
        (
            "MariaDB innodb_flush_log_at_trx_commit",
            "SELECT CAST(@@innodb_flush_log_at_trx_commit AS CHAR) AS value",
        ),
        (
            "MariaDB isolation",
            "SELECT CAST(@@tx_isolation AS CHAR) AS value",
        ),
    ];
    const ADVISORY: Option<&str> = Some("GET_LOCK(name, 0)");
    const NOWAIT: bool = true;

    /// A database: the URL's path names it.
    fn growth_namespace(url: &str, rows: i64) -> Res<String> {
        let database = growth_namespace_name(rows);
        run_alone::<Self>(url, format!("CREATE DATABASE IF NOT EXISTS {database}"))?;
        let (path, query) = url
            .split_once('?')
            .map_or((url, String::new()), |(path, query)| {
                (path, format!("?{query}"))
            });
        let (server, _) = path.rsplit_once('/').ok_or("a database in the URL")?;
        Ok(format!("{server}/{database}{query}"))
    }

    fn drop_growth_namespace(url: &str, rows: i64) -> Res<()> {
        let database = growth_namespace_name(rows);
        run_alone::<Self>(url, format!("DROP DATABASE IF EXISTS {database}"))
    }

    /// The claim of the cycle through `diesel::update`, its row read back as the library reads
    /// it: by its key and the claim's token.
    fn diesel_update_claim(
        conn: &mut Self::Conn,
        id: i64,
        claim: &Claim,
        lease: Lease,
    ) -> QueryResult<Option<LeaseRow>> {
        let t = bench_leases::table;
        let claimed = diesel::update(t.find(id).filter(t.claimable(lease)))
            .set((bench_leases::status.eq("running"), t.taken(claim)))
            .execute(conn)?;
        if claimed == 0 {
            return Ok(None);
        }
        let read_back = t
            .find(id)
            .filter(t.held_by(claim.token()))
            .select((bench_leases::all_columns, crate::tables::no_fence()));
        crate::hand_sql::read_one::<_, _, (LeaseRow, Option<i64>)>(read_back, conn)
            .optional()
            .map(|won| won.map(|(row, _)| row))
    }

    fn nowait_busy(conn: &mut Self::Conn, id: i64, micros: i64) -> QueryResult<bool> {
        diesel::sql_query(
            "SELECT CAST(claim_token IS NOT NULL AND claimed_at >= UTC_TIMESTAMP(6) - INTERVAL ? MICROSECOND AS SIGNED) AS flag \
             FROM bench_leases WHERE id = ? FOR UPDATE NOWAIT",
        )
        .bind::<BigInt, _>(micros)
        .bind::<BigInt, _>(id)
        .get_result::<IntFlag>(conn)
        .map(|row| row.flag != 0)
    }

    fn advisory_lock(conn: &mut Self::Conn, key: i64) -> QueryResult<bool> {
        diesel::sql_query(
            "SELECT CAST(COALESCE(GET_LOCK(CONCAT('bench-', ?), 0), 0) AS SIGNED) AS flag",
        )
        .bind::<BigInt, _>(key)
        .get_result::<IntFlag>(conn)
        .map(|row| row.flag == 1)
    }

    fn advisory_unlock_all(conn: &mut Self::Conn) -> QueryResult<()> {
        diesel::sql_query("SELECT RELEASE_ALL_LOCKS()")
            .execute(conn)
            .map(drop)
    }
}

mod ops {
    type B = super::Mysql;
    type Conn = diesel::MysqlConnection;
    include!("ops.rs");
    include!("fixtures.rs");
}
