//! The measurements, written once and instantiated for each backend's connection type.
//!
//! Every hand-written statement is checked at start-up to be the very SQL (and binds) the
//! library sends, as recorded by Diesel's instrumentation.
use std::cell::RefCell;
use std::sync::Barrier;
use std::time::{Duration, Instant};

use diesel::prelude::*;
use diesel::r2d2::{ConnectionManager, CustomizeConnection, Pool};
use diesel::sql_types::{BigInt, Bool, Text};
use diesel_lease::agent::{AgentLocks, TurnRef};
use diesel_lease::prelude::*;

use crate::measure::{
    self, interleave, median, micros_per_op, paired_ratio, Plan, StatementLog, Variant,
};
use crate::report::{Better, Goal, Results, Row};
use crate::{bench_leases, check, hand_statement, Bind, LeaseRow, Options, PreparedSql, Res};

/// Who the benchmark's claims are by.
pub const OWNER: &str = "bench-worker";
/// The lease of the cycle's claims: 30 s, in microseconds as the hand-written SQL binds it.
pub const LEASE_MICROS: i64 = 30_000_000;
/// The TTL of the agent locks, in microseconds.
pub const TTL_MICROS: i64 = 120_000_000;
/// The row of the contention measurement.
pub const HOT: i64 = 100;
/// Connections of measurement 4's pool.
const HOLDER_POOL: u32 = 4;
/// The thread counts of measurements 2 and 3.
const THREADS: [usize; 3] = [1, 4, 16];

/// A fresh claim token, as a hand-written caller would make one.
pub fn new_token() -> String {
    uuid::Uuid::new_v4().to_string()
}

#[derive(QueryableByName)]
struct Count {
    #[diesel(sql_type = BigInt)]
    n: i64,
}

#[derive(QueryableByName)]
struct Setting {
    #[diesel(sql_type = Text)]
    value: String,
}

#[derive(QueryableByName)]
struct Flag {
    #[diesel(sql_type = Bool)]
    flag: bool,
}

#[derive(QueryableByName)]
struct IntFlag {
    #[diesel(sql_type = BigInt)]
    flag: i64,
}

/// Sets SQLite's pragmas on each pooled connection (the other backends need none).
#[derive(Debug)]
struct Pragmas;

impl CustomizeConnection<SqliteConnection, diesel::r2d2::Error> for Pragmas {
    fn on_acquire(&self, conn: &mut SqliteConnection) -> Result<(), diesel::r2d2::Error> {
        sqlite_sql::configure(conn).map_err(diesel::r2d2::Error::QueryError)
    }
}

/// PostgreSQL's statements, as the library writes them.
pub mod pg_sql {
    use super::*;

    pub type Conn = PgConnection;
    pub const NAME: &str = "PostgreSQL";
    pub const DEFAULT_PORT: u16 = 5432;
    pub const DDL: &str =
        "CREATE TABLE bench_leases (id BIGINT PRIMARY KEY, status VARCHAR(16) NOT NULL, \
        owner VARCHAR(255), claim_token VARCHAR(255), claimed_at TIMESTAMPTZ)";
    pub const CLAIM: &str = r#"UPDATE "bench_leases" SET "owner" = $1, "claim_token" = $2, "claimed_at" = statement_timestamp(), "status" = $3 WHERE (("bench_leases"."id" = $4) AND (("bench_leases"."claim_token" IS NULL) OR ("bench_leases"."claimed_at" < (statement_timestamp() - $5 * INTERVAL '1 microsecond')))) RETURNING "bench_leases"."id", "bench_leases"."status", "bench_leases"."owner", "bench_leases"."claim_token", "bench_leases"."claimed_at", NULL"#;
    pub const READ_BACK: Option<&str> = None;
    pub const RENEW: &str = r#"UPDATE "bench_leases" SET "claimed_at" = statement_timestamp() WHERE (("bench_leases"."id" = $1) AND ("bench_leases"."claim_token" = $2))"#;
    pub const RELEASE: &str = r#"UPDATE "bench_leases" SET "owner" = NULL, "claim_token" = NULL, "claimed_at" = NULL, "status" = $1 WHERE (("bench_leases"."id" = $2) AND ("bench_leases"."claim_token" = $3))"#;
    pub const CLAIM_CHAT: &str = r#"UPDATE "conversations" SET "busy_owner" = $1, "busy_turn_ref" = $2, "busy_since" = statement_timestamp() WHERE ((("conversations"."id" = $3) AND ("conversations"."user_id" = $4)) AND (("conversations"."busy_turn_ref" IS NULL) OR ("conversations"."busy_since" < (statement_timestamp() - $5 * INTERVAL '1 microsecond'))))"#;
    pub const CLAIM_USER: &str = r#"UPDATE "user_settings" SET "busy_owner" = $1, "busy_turn_ref" = $2, "busy_since" = (statement_timestamp() - $3 * INTERVAL '1 microsecond') WHERE (("user_settings"."user_id" = $4) AND (("user_settings"."busy_turn_ref" IS NULL) OR ("user_settings"."busy_since" < (statement_timestamp() - $5 * INTERVAL '1 microsecond'))))"#;
    pub const RELEASE_CHAT: &str = r#"UPDATE "conversations" SET "busy_owner" = NULL, "busy_turn_ref" = NULL, "busy_since" = NULL WHERE (("conversations"."id" = $1) AND ("conversations"."busy_turn_ref" = $2))"#;
    pub const RELEASE_USER: &str = r#"UPDATE "user_settings" SET "busy_owner" = NULL, "busy_turn_ref" = NULL, "busy_since" = NULL WHERE (("user_settings"."user_id" = $1) AND ("user_settings"."busy_turn_ref" = $2))"#;
    pub const SETTINGS: &[(&str, &str)] = &[
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
    pub const ADVISORY: Option<&str> = Some("pg_try_advisory_lock");
    pub const NOWAIT: bool = true;

    /// The claim of the cycle through `diesel::update`, its row read back as the library reads
    /// it: `RETURNING`.
    pub fn diesel_update_claim(
        conn: &mut Conn,
        id: i64,
        claim: &Claim,
        lease: Lease,
    ) -> QueryResult<Option<LeaseRow>> {
        let t = bench_leases::table;
        // The library also reads the fence: NULL for a table without one.
        diesel::update(t.find(id).filter(t.claimable(lease)))
            .set((t.taken(claim), bench_leases::status.eq("running")))
            .returning((bench_leases::all_columns, crate::batch::no_fence()))
            .get_result::<(LeaseRow, Option<i64>)>(conn)
            .optional()
            .map(|won| won.map(|(row, _)| row))
    }

    pub fn configure(_conn: &mut Conn) -> QueryResult<()> {
        Ok(())
    }

    /// The first of `SELECT .. FOR UPDATE NOWAIT`: is the row held and fresh?
    pub fn nowait_busy(conn: &mut Conn, id: i64, micros: i64) -> QueryResult<bool> {
        diesel::sql_query(
            "SELECT (claim_token IS NOT NULL AND claimed_at >= statement_timestamp() - $2 * INTERVAL '1 microsecond') AS flag \
             FROM bench_leases WHERE id = $1 FOR UPDATE NOWAIT",
        )
        .bind::<BigInt, _>(id)
        .bind::<BigInt, _>(micros)
        .get_result::<Flag>(conn)
        .map(|row| row.flag)
    }

    pub fn advisory_lock(conn: &mut Conn, key: i64) -> QueryResult<bool> {
        diesel::sql_query("SELECT pg_try_advisory_lock($1) AS flag")
            .bind::<BigInt, _>(key)
            .get_result::<Flag>(conn)
            .map(|row| row.flag)
    }

    pub fn advisory_unlock_all(conn: &mut Conn) -> QueryResult<()> {
        diesel::sql_query("SELECT pg_advisory_unlock_all()")
            .execute(conn)
            .map(drop)
    }
}

/// MySQL/MariaDB's statements, as the library writes them.
pub mod mysql_sql {
    use super::*;

    pub type Conn = MysqlConnection;
    pub const NAME: &str = "MariaDB";
    pub const DEFAULT_PORT: u16 = 3306;
    pub const DDL: &str =
        "CREATE TABLE bench_leases (id BIGINT PRIMARY KEY, status VARCHAR(16) NOT NULL, \
        owner VARCHAR(255), claim_token VARCHAR(255), claimed_at DATETIME(6), \
        INDEX bench_leases_token (claim_token)) ENGINE = InnoDB";
    pub const CLAIM: &str = "UPDATE `bench_leases` SET `owner` = ?, `claim_token` = ?, `claimed_at` = UTC_TIMESTAMP(6), `status` = ? WHERE ((`bench_leases`.`id` = ?) AND ((`bench_leases`.`claim_token` IS NULL) OR (`bench_leases`.`claimed_at` < (UTC_TIMESTAMP(6) - INTERVAL ? MICROSECOND))))";
    pub const READ_BACK: Option<&str> = Some("SELECT `bench_leases`.`id`, `bench_leases`.`status`, `bench_leases`.`owner`, `bench_leases`.`claim_token`, `bench_leases`.`claimed_at`, NULL FROM `bench_leases` WHERE ((`bench_leases`.`id` = ?) AND (`bench_leases`.`claim_token` = ?))");
    pub const RENEW: &str = "UPDATE `bench_leases` SET `claimed_at` = UTC_TIMESTAMP(6) WHERE ((`bench_leases`.`id` = ?) AND (`bench_leases`.`claim_token` = ?))";
    pub const RELEASE: &str = "UPDATE `bench_leases` SET `owner` = NULL, `claim_token` = NULL, `claimed_at` = NULL, `status` = ? WHERE ((`bench_leases`.`id` = ?) AND (`bench_leases`.`claim_token` = ?))";
    pub const CLAIM_CHAT: &str = "UPDATE `conversations` SET `busy_owner` = ?, `busy_turn_ref` = ?, `busy_since` = UTC_TIMESTAMP(6) WHERE (((`conversations`.`id` = ?) AND (`conversations`.`user_id` = ?)) AND ((`conversations`.`busy_turn_ref` IS NULL) OR (`conversations`.`busy_since` < (UTC_TIMESTAMP(6) - INTERVAL ? MICROSECOND))))";
    pub const CLAIM_USER: &str = "UPDATE `user_settings` SET `busy_owner` = ?, `busy_turn_ref` = ?, `busy_since` = (UTC_TIMESTAMP(6) - INTERVAL ? MICROSECOND) WHERE ((`user_settings`.`user_id` = ?) AND ((`user_settings`.`busy_turn_ref` IS NULL) OR (`user_settings`.`busy_since` < (UTC_TIMESTAMP(6) - INTERVAL ? MICROSECOND))))";
    pub const RELEASE_CHAT: &str = "UPDATE `conversations` SET `busy_owner` = NULL, `busy_turn_ref` = NULL, `busy_since` = NULL WHERE ((`conversations`.`id` = ?) AND (`conversations`.`busy_turn_ref` = ?))";
    pub const RELEASE_USER: &str = "UPDATE `user_settings` SET `busy_owner` = NULL, `busy_turn_ref` = NULL, `busy_since` = NULL WHERE ((`user_settings`.`user_id` = ?) AND (`user_settings`.`busy_turn_ref` = ?))";
    pub const SETTINGS: &[(&str, &str)] = &[
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
    pub const ADVISORY: Option<&str> = Some("GET_LOCK(name, 0)");
    pub const NOWAIT: bool = true;

    /// The claim of the cycle through `diesel::update`, its row read back as the library reads
    /// it: by its key and the claim's token.
    pub fn diesel_update_claim(
        conn: &mut Conn,
        id: i64,
        claim: &Claim,
        lease: Lease,
    ) -> QueryResult<Option<LeaseRow>> {
        let t = bench_leases::table;
        let claimed = diesel::update(t.find(id).filter(t.claimable(lease)))
            .set((t.taken(claim), bench_leases::status.eq("running")))
            .execute(conn)?;
        if claimed == 0 {
            return Ok(None);
        }
        t.find(id)
            .filter(t.held_by(claim.token()))
            .select((bench_leases::all_columns, crate::batch::no_fence()))
            .get_result::<(LeaseRow, Option<i64>)>(conn)
            .optional()
            .map(|won| won.map(|(row, _)| row))
    }

    pub fn configure(_conn: &mut Conn) -> QueryResult<()> {
        Ok(())
    }

    pub fn nowait_busy(conn: &mut Conn, id: i64, micros: i64) -> QueryResult<bool> {
        diesel::sql_query(
            "SELECT CAST(claim_token IS NOT NULL AND claimed_at >= UTC_TIMESTAMP(6) - INTERVAL ? MICROSECOND AS SIGNED) AS flag \
             FROM bench_leases WHERE id = ? FOR UPDATE NOWAIT",
        )
        .bind::<BigInt, _>(micros)
        .bind::<BigInt, _>(id)
        .get_result::<IntFlag>(conn)
        .map(|row| row.flag != 0)
    }

    pub fn advisory_lock(conn: &mut Conn, key: i64) -> QueryResult<bool> {
        diesel::sql_query(
            "SELECT CAST(COALESCE(GET_LOCK(CONCAT('bench-', ?), 0), 0) AS SIGNED) AS flag",
        )
        .bind::<BigInt, _>(key)
        .get_result::<IntFlag>(conn)
        .map(|row| row.flag == 1)
    }

    pub fn advisory_unlock_all(conn: &mut Conn) -> QueryResult<()> {
        diesel::sql_query("SELECT RELEASE_ALL_LOCKS()")
            .execute(conn)
            .map(drop)
    }
}

/// SQLite's statements, as the library writes them.
pub mod sqlite_sql {
    use diesel::connection::SimpleConnection;

    use super::*;

    pub type Conn = SqliteConnection;
    pub const NAME: &str = "SQLite";
    pub const DEFAULT_PORT: u16 = 0;
    pub const DDL: &str =
        "CREATE TABLE bench_leases (id BIGINT PRIMARY KEY NOT NULL, status TEXT NOT NULL, \
        owner TEXT, claim_token TEXT, claimed_at TEXT)";
    pub const CLAIM: &str = "UPDATE `bench_leases` SET `owner` = ?, `claim_token` = ?, `claimed_at` = strftime('%Y-%m-%d %H:%M:%f', 'now'), `status` = ? WHERE ((`bench_leases`.`id` = ?) AND ((`bench_leases`.`claim_token` IS NULL) OR (`bench_leases`.`claimed_at` < strftime('%Y-%m-%d %H:%M:%f', 'now', printf('-%.6f seconds', ? / 1000000.0))))) RETURNING `bench_leases`.`id`, `bench_leases`.`status`, `bench_leases`.`owner`, `bench_leases`.`claim_token`, `bench_leases`.`claimed_at`, NULL";
    pub const READ_BACK: Option<&str> = None;
    pub const RENEW: &str = "UPDATE `bench_leases` SET `claimed_at` = strftime('%Y-%m-%d %H:%M:%f', 'now') WHERE ((`bench_leases`.`id` = ?) AND (`bench_leases`.`claim_token` = ?))";
    pub const RELEASE: &str = "UPDATE `bench_leases` SET `owner` = NULL, `claim_token` = NULL, `claimed_at` = NULL, `status` = ? WHERE ((`bench_leases`.`id` = ?) AND (`bench_leases`.`claim_token` = ?))";
    pub const CLAIM_CHAT: &str = "UPDATE `conversations` SET `busy_owner` = ?, `busy_turn_ref` = ?, `busy_since` = strftime('%Y-%m-%d %H:%M:%f', 'now') WHERE (((`conversations`.`id` = ?) AND (`conversations`.`user_id` = ?)) AND ((`conversations`.`busy_turn_ref` IS NULL) OR (`conversations`.`busy_since` < strftime('%Y-%m-%d %H:%M:%f', 'now', printf('-%.6f seconds', ? / 1000000.0)))))";
    pub const CLAIM_USER: &str = "UPDATE `user_settings` SET `busy_owner` = ?, `busy_turn_ref` = ?, `busy_since` = strftime('%Y-%m-%d %H:%M:%f', 'now', printf('-%.6f seconds', ? / 1000000.0)) WHERE ((`user_settings`.`user_id` = ?) AND ((`user_settings`.`busy_turn_ref` IS NULL) OR (`user_settings`.`busy_since` < strftime('%Y-%m-%d %H:%M:%f', 'now', printf('-%.6f seconds', ? / 1000000.0)))))";
    pub const RELEASE_CHAT: &str = "UPDATE `conversations` SET `busy_owner` = NULL, `busy_turn_ref` = NULL, `busy_since` = NULL WHERE ((`conversations`.`id` = ?) AND (`conversations`.`busy_turn_ref` = ?))";
    pub const RELEASE_USER: &str = "UPDATE `user_settings` SET `busy_owner` = NULL, `busy_turn_ref` = NULL, `busy_since` = NULL WHERE ((`user_settings`.`user_id` = ?) AND (`user_settings`.`busy_turn_ref` = ?))";
    pub const SETTINGS: &[(&str, &str)] = &[
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
    pub const ADVISORY: Option<&str> = None;
    pub const NOWAIT: bool = false;

    /// The claim of the cycle through `diesel::update`, its row read back as the library reads
    /// it: `RETURNING`.
    pub fn diesel_update_claim(
        conn: &mut Conn,
        id: i64,
        claim: &Claim,
        lease: Lease,
    ) -> QueryResult<Option<LeaseRow>> {
        let t = bench_leases::table;
        // The library also reads the fence: NULL for a table without one.
        diesel::update(t.find(id).filter(t.claimable(lease)))
            .set((t.taken(claim), bench_leases::status.eq("running")))
            .returning((bench_leases::all_columns, crate::batch::no_fence()))
            .get_result::<(LeaseRow, Option<i64>)>(conn)
            .optional()
            .map(|won| won.map(|(row, _)| row))
    }

    /// A production SQLite setup: wait for the writer, WAL, synchronous=NORMAL.
    pub fn configure(conn: &mut Conn) -> QueryResult<()> {
        conn.batch_execute(
            "PRAGMA busy_timeout = 30000; PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;",
        )
    }

    pub fn nowait_busy(_conn: &mut Conn, _id: i64, _micros: i64) -> QueryResult<bool> {
        Err(diesel::result::Error::NotFound)
    }

    pub fn advisory_lock(_conn: &mut Conn, _key: i64) -> QueryResult<bool> {
        Ok(false)
    }

    pub fn advisory_unlock_all(_conn: &mut Conn) -> QueryResult<()> {
        Ok(())
    }
}

macro_rules! backend_suite {
    ($module:ident, $sql:ident, $customize:expr) => {
        pub mod $module {
            use super::*;
            pub use super::$sql::Conn;
            use super::$sql as sql;

            pub type ConnPool = Pool<ConnectionManager<Conn>>;

            pub fn connect(url: &str) -> Res<Conn> {
                let mut conn = Conn::establish(url)?;
                sql::configure(&mut conn)?;
                Ok(conn)
            }

            /// A pool of `size` connections, all open; `test_on_check_out` is r2d2's `SELECT 1` per checkout.
            pub fn pool(url: &str, size: u32, test_on_check_out: bool) -> Res<ConnPool> {
                let builder = Pool::builder()
                    .max_size(size)
                    .min_idle(Some(size))
                    .test_on_check_out(test_on_check_out)
                    .connection_timeout(Duration::from_secs(30));
                let customize: Option<Box<dyn CustomizeConnection<Conn, diesel::r2d2::Error>>> = $customize;
                let builder = match customize {
                    Some(customizer) => builder.connection_customizer(customizer),
                    None => builder,
                };
                Ok(builder.build(ConnectionManager::new(url))?)
            }

            /// The benchmark's table, fresh, with free rows 1..=32 and the hot row.
            pub fn setup(conn: &mut Conn) -> Res<()> {
                diesel::sql_query("DROP TABLE IF EXISTS bench_leases").execute(conn)?;
                diesel::sql_query(sql::DDL).execute(conn)?;
                let values: Vec<String> = (1..=32).chain([HOT]).map(|id| format!("({id}, 'queued')")).collect();
                diesel::sql_query(format!("INSERT INTO bench_leases (id, status) VALUES {}", values.join(", ")))
                    .execute(conn)?;
                diesel_lease::agent::run_migrations(conn)?;
                cleanup_agent_rows(conn)
            }

            fn cleanup_agent_rows(conn: &mut Conn) -> Res<()> {
                diesel::sql_query("DELETE FROM conversations WHERE id LIKE 'bench-%'").execute(conn)?;
                diesel::sql_query("DELETE FROM user_settings WHERE user_id LIKE 'bench-%'").execute(conn)?;
                Ok(())
            }

            pub fn teardown(conn: &mut Conn) -> Res<()> {
                cleanup_agent_rows(conn)?;
                diesel::sql_query("DROP TABLE IF EXISTS bench_leases").execute(conn)?;
                Ok(())
            }

            /// Frees rows 1..=32.
            pub fn free_rows(conn: &mut Conn) -> Res<()> {
                diesel::sql_query(
                    "UPDATE bench_leases SET owner = NULL, claim_token = NULL, claimed_at = NULL, status = 'queued' WHERE id <= 32",
                )
                .execute(conn)?;
                Ok(())
            }

            // ---- The claim cycle: library, hand-written, and each prepared once ----

            /// Claim (getting the row back), renew, release: through the library, with
            /// `diesel_lease::update`, which Diesel prepares once per connection.
            pub fn lib_cycle(conn: &mut Conn, id: i64, claim: &Claim, lease: Lease) -> Res<()> {
                let t = bench_leases::table;
                let won: Claimed<LeaseRow, _, _> = t
                    .claim_row(id, lease)
                    .set(bench_leases::status.eq("running"))
                    .by(claim.clone(), conn)?;
                check(won.is_won(), "the library's claim lost")?;
                let renewed = diesel_lease::update(t.find(id).filter(t.held_by(claim.token())))
                    .set(t.renewed())
                    .execute(conn)?;
                check(renewed == 1, "the library's renewal changed no row")?;
                let released = diesel_lease::update(t.find(id).filter(t.held_by(claim.token())))
                    .set((t.released(), bench_leases::status.eq("queued")))
                    .execute(conn)?;
                check(released == 1, "the library's release changed no row")
            }

            /// The same through `diesel::update`, which Diesel prepares at every execution: what the
            /// library's own statements were before `diesel_lease::update`, and what a caller who
            /// builds claims with `diesel::update` still gets.
            pub fn lib_cycle_diesel_update(conn: &mut Conn, id: i64, claim: &Claim, lease: Lease) -> Res<()> {
                let t = bench_leases::table;
                let won = sql::diesel_update_claim(conn, id, claim, lease)?;
                check(won.is_some(), "the claim through diesel::update lost")?;
                let renewed = diesel::update(t.find(id).filter(t.held_by(claim.token())))
                    .set(t.renewed())
                    .execute(conn)?;
                check(renewed == 1, "the renewal through diesel::update changed no row")?;
                let released = diesel::update(t.find(id).filter(t.held_by(claim.token())))
                    .set((t.released(), bench_leases::status.eq("queued")))
                    .execute(conn)?;
                check(released == 1, "the release through diesel::update changed no row")
            }

            hand_statement!(HandClaim, sql::CLAIM);
            hand_statement!(HandReadBack, match sql::READ_BACK { Some(sql) => sql, None => "" });
            hand_statement!(HandRenew, sql::RENEW);
            hand_statement!(HandRelease, sql::RELEASE);
            hand_statement!(HandClaimChat, sql::CLAIM_CHAT);
            hand_statement!(HandClaimUser, sql::CLAIM_USER);
            hand_statement!(HandReleaseChat, sql::RELEASE_CHAT);
            hand_statement!(HandReleaseUser, sql::RELEASE_USER);

            /// The claim by hand: the same SQL and binds, through `sql_query` (or prepared once).
            pub fn hand_claim<const CACHED: bool>(
                conn: &mut Conn,
                id: i64,
                owner: &str,
                token: &str,
                micros: i64,
            ) -> QueryResult<Option<LeaseRow>> {
                if CACHED {
                    let claim = PreparedSql::<HandClaim, 5>::new([
                        Bind::Text(owner),
                        Bind::Text(token),
                        Bind::Text("running"),
                        Bind::BigInt(id),
                        Bind::BigInt(micros),
                    ]);
                    if sql::READ_BACK.is_none() {
                        return claim.get_result(conn).optional();
                    }
                    if claim.execute(conn)? == 0 {
                        return Ok(None);
                    }
                    return PreparedSql::<HandReadBack, 2>::new([Bind::BigInt(id), Bind::Text(token)]).get_result(conn).optional();
                }
                let claim = diesel::sql_query(sql::CLAIM)
                    .bind::<Text, _>(owner)
                    .bind::<Text, _>(token)
                    .bind::<Text, _>("running")
                    .bind::<BigInt, _>(id)
                    .bind::<BigInt, _>(micros);
                match sql::READ_BACK {
                    None => claim.get_result(conn).optional(),
                    Some(read_back) => {
                        if claim.execute(conn)? == 0 {
                            return Ok(None);
                        }
                        diesel::sql_query(read_back).bind::<BigInt, _>(id).bind::<Text, _>(token).get_result(conn).optional()
                    }
                }
            }

            /// Claim, renew, release by hand.
            pub fn hand_cycle<const CACHED: bool>(conn: &mut Conn, id: i64, owner: &str, token: &str, micros: i64) -> Res<()> {
                let won = hand_claim::<CACHED>(conn, id, owner, token, micros)?;
                check(won.is_some(), "the hand-written claim lost")?;
                let renewed = if CACHED {
                    PreparedSql::<HandRenew, 2>::new([Bind::BigInt(id), Bind::Text(token)]).execute(conn)?
                } else {
                    diesel::sql_query(sql::RENEW).bind::<BigInt, _>(id).bind::<Text, _>(token).execute(conn)?
                };
                check(renewed == 1, "the hand-written renewal changed no row")?;
                let released = if CACHED {
                    PreparedSql::<HandRelease, 3>::new([Bind::Text("queued"), Bind::BigInt(id), Bind::Text(token)])
                        .execute(conn)?
                } else {
                    diesel::sql_query(sql::RELEASE)
                        .bind::<Text, _>("queued")
                        .bind::<BigInt, _>(id)
                        .bind::<Text, _>(token)
                        .execute(conn)?
                };
                check(released == 1, "the hand-written release changed no row")
            }

            // ---- The agent turn: library and hand-written ----

            pub fn locks() -> Res<AgentLocks> {
                Ok(AgentLocks::new(OWNER, Lease::from_secs((TTL_MICROS / 1_000_000) as u64)?)?)
            }

            /// Acquire by hand: one transaction, the chat's lock, then the user's.
            pub fn hand_acquire<const CACHED: bool>(
                conn: &mut Conn,
                chat: &str,
                user: &str,
                token: &str,
            ) -> Res<()> {
                conn.transaction::<_, diesel::result::Error, _>(|conn| {
                    let chat_claimed = if CACHED {
                        PreparedSql::<HandClaimChat, 5>::new([
                            Bind::Text(OWNER),
                            Bind::Text(token),
                            Bind::Text(chat),
                            Bind::Text(user),
                            Bind::BigInt(TTL_MICROS),
                        ])
                        .execute(conn)?
                    } else {
                        diesel::sql_query(sql::CLAIM_CHAT)
                            .bind::<Text, _>(OWNER)
                            .bind::<Text, _>(token)
                            .bind::<Text, _>(chat)
                            .bind::<Text, _>(user)
                            .bind::<BigInt, _>(TTL_MICROS)
                            .execute(conn)?
                    };
                    if chat_claimed == 0 {
                        return Err(diesel::result::Error::RollbackTransaction);
                    }
                    let user_claimed = if CACHED {
                        PreparedSql::<HandClaimUser, 5>::new([
                            Bind::Text(OWNER),
                            Bind::Text(token),
                            Bind::BigInt(0),
                            Bind::Text(user),
                            Bind::BigInt(TTL_MICROS),
                        ])
                        .execute(conn)?
                    } else {
                        diesel::sql_query(sql::CLAIM_USER)
                            .bind::<Text, _>(OWNER)
                            .bind::<Text, _>(token)
                            .bind::<BigInt, _>(0i64)
                            .bind::<Text, _>(user)
                            .bind::<BigInt, _>(TTL_MICROS)
                            .execute(conn)?
                    };
                    if user_claimed == 0 {
                        return Err(diesel::result::Error::RollbackTransaction);
                    }
                    Ok(())
                })?;
                Ok(())
            }

            /// Release by hand: one transaction, both locks.
            pub fn hand_release<const CACHED: bool>(conn: &mut Conn, chat: &str, user: &str, token: &str) -> Res<()> {
                let released = conn.transaction::<_, diesel::result::Error, _>(|conn| {
                    let (chat, user) = if CACHED {
                        (
                            PreparedSql::<HandReleaseChat, 2>::new([Bind::Text(chat), Bind::Text(token)]).execute(conn)?,
                            PreparedSql::<HandReleaseUser, 2>::new([Bind::Text(user), Bind::Text(token)]).execute(conn)?,
                        )
                    } else {
                        (
                            diesel::sql_query(sql::RELEASE_CHAT).bind::<Text, _>(chat).bind::<Text, _>(token).execute(conn)?,
                            diesel::sql_query(sql::RELEASE_USER).bind::<Text, _>(user).bind::<Text, _>(token).execute(conn)?,
                        )
                    };
                    Ok(chat == 1 && user == 1)
                })?;
                check(released, "the hand-written release found the locks gone")
            }

            pub fn lib_turn(conn: &mut Conn, locks: &AgentLocks, chat: &str, user: &str, token: &str) -> Res<()> {
                let turn = TurnRef::new(token)?;
                locks.acquire(conn, chat, user, &turn)?;
                check(locks.release(conn, chat, user, &turn)?, "the library's release found the locks gone")
            }

            pub fn hand_turn<const CACHED: bool>(conn: &mut Conn, chat: &str, user: &str, token: &str) -> Res<()> {
                hand_acquire::<CACHED>(conn, chat, user, token)?;
                hand_release::<CACHED>(conn, chat, user, token)
            }

            /// Chats `{prefix}-chat-{n}` of users `{prefix}-user-{n}`, both rows created, for n < count.
            fn agent_rows(conn: &mut Conn, prefix: &str, count: usize) -> Res<Vec<(String, String)>> {
                use diesel_lease::agent::schema::{conversations, user_settings};
                let ids: Vec<(String, String)> =
                    (0..count).map(|n| (format!("{prefix}-chat-{n}"), format!("{prefix}-user-{n}"))).collect();
                for chunk in ids.chunks(500) {
                    let chats: Vec<_> = chunk
                        .iter()
                        .map(|(chat, user)| (conversations::id.eq(chat), conversations::user_id.eq(user)))
                        .collect();
                    diesel::insert_into(conversations::table).values(&chats).execute(conn)?;
                    let users: Vec<_> = chunk.iter().map(|(_, user)| user_settings::user_id.eq(user)).collect();
                    diesel::insert_into(user_settings::table).values(&users).execute(conn)?;
                }
                Ok(ids)
            }

            // ---- Checks that the hand-written SQL is the library's ----

            pub fn same_statements(what: &str, library: Vec<String>, hand: Vec<String>) -> Res<()> {
                if library == hand {
                    return Ok(());
                }
                eprintln!("{}: the hand-written {what} differs from the library's:", sql::NAME);
                for n in 0..library.len().max(hand.len()) {
                    let (l, h) = (library.get(n), hand.get(n));
                    if l != h {
                        eprintln!("  library: {}\n  hand:    {}", l.map_or("(none)", |s| s), h.map_or("(none)", |s| s));
                    }
                }
                Err(format!("{}: the hand-written {what} is not the library's SQL", sql::NAME).into())
            }

            pub fn verify(conn: &mut Conn) -> Res<()> {
                let lease = Lease::new(Duration::from_micros(LEASE_MICROS as u64))?;
                let token = "bench-verify-token";
                let claim = Claim::with_token(OWNER, token)?;
                let library = StatementLog::texts_of(conn, |c| lib_cycle(c, 1, &claim, lease))?;
                let hand = StatementLog::texts_of(conn, |c| hand_cycle::<false>(c, 1, OWNER, token, LEASE_MICROS))?;
                same_statements("claim cycle", library.clone(), hand)?;
                // diesel::update writes SQLite's RETURNING columns unqualified, diesel_lease::update
                // qualifies them; the statements are otherwise the same.
                let unqualified = |texts: Vec<String>| -> Vec<String> {
                    texts
                        .into_iter()
                        .map(|text| match text.split_once(" RETURNING ") {
                            Some((head, tail)) => format!("{head} RETURNING {}", tail.replace("`bench_leases`.", "")),
                            None => text,
                        })
                        .collect()
                };
                let through_diesel = StatementLog::texts_of(conn, |c| lib_cycle_diesel_update(c, 1, &claim, lease))?;
                same_statements("claim cycle (through diesel::update)", unqualified(library.clone()), unqualified(through_diesel))?;
                let hand_cached =
                    StatementLog::texts_of(conn, |c| hand_cycle::<true>(c, 1, OWNER, token, LEASE_MICROS))?;
                same_statements("claim cycle (prepared once)", library, hand_cached)?;

                let ids = agent_rows(conn, "bench-verify", 1)?;
                let (chat, user) = &ids[0];
                let locks = locks()?;
                let turn = TurnRef::new(token)?;
                let library = StatementLog::texts_of(conn, |c| {
                    locks.acquire(c, chat, user, &turn)?;
                    locks.release(c, chat, user, &turn)?;
                    Ok(())
                })?;
                let hand = StatementLog::texts_of(conn, |c| hand_turn::<false>(c, chat, user, token))?;
                same_statements("agent turn", library.clone(), hand)?;
                let hand_cached = StatementLog::texts_of(conn, |c| hand_turn::<true>(c, chat, user, token))?;
                same_statements("agent turn (prepared once)", library, hand_cached)?;
                println!("  the hand-written statements are the library's, binds included");
                Ok(())
            }

            // ---- 1 and 6: overhead of the claim cycle ----

            pub fn overhead(conn: &mut Conn, section: u32, plan: &Plan, results: &mut Results) -> Res<()> {
                let lease = Lease::new(Duration::from_micros(LEASE_MICROS as u64))?;
                free_rows(conn)?;
                let conn = RefCell::new(conn);
                let slice = plan.slice;
                let mut variants = [
                    Variant::new("hand", || {
                        let c = &mut **conn.borrow_mut();
                        micros_per_op(slice, || hand_cycle::<false>(c, 1, OWNER, &new_token(), LEASE_MICROS))
                    }),
                    Variant::new("library", || {
                        let c = &mut **conn.borrow_mut();
                        micros_per_op(slice, || lib_cycle(c, 1, &Claim::new(OWNER)?, lease))
                    }),
                    Variant::new("hand, prepared once", || {
                        let c = &mut **conn.borrow_mut();
                        micros_per_op(slice, || hand_cycle::<true>(c, 1, OWNER, &new_token(), LEASE_MICROS))
                    }),
                    Variant::new("library via diesel::update", || {
                        let c = &mut **conn.borrow_mut();
                        micros_per_op(slice, || lib_cycle_diesel_update(c, 1, &Claim::new(OWNER)?, lease))
                    }),
                ];
                let samples = interleave(plan.rounds, &mut variants)?;
                let [hand, library, hand_cached, via_diesel] = [0, 1, 2, 3].map(|k| &samples[k]);
                let figures = [
                    ("claim, renew, release of one row", "sql_query", hand, "library", library, Some(Goal::RatioAtMost(1.05))),
                    ("the same cycle", "hand, prepared once", hand_cached, "library", library, None),
                    ("the same cycle", "sql_query", hand, "library via diesel::update", via_diesel, None),
                ];
                for (figure, baseline_name, baseline, library_name, library, goal) in figures {
                    let (ratio, min, max) = paired_ratio(library, baseline);
                    results.push(Row {
                        section,
                        backend: sql::NAME,
                        figure: figure.into(),
                        baseline_name: baseline_name.into(),
                        baseline: median(baseline),
                        library_name: library_name.into(),
                        library: median(library),
                        unit: "µs/cycle",
                        ratio,
                        range: Some((min, max)),
                        better: Better::Lower,
                        goal,
                    });
                }
                Ok(())
            }

            // ---- Throughput of many threads through a pool ----

            /// Runs `op` on `threads` threads for `slice`, each checking a connection out of `pool`
            /// per call (`hold` keeps one per thread instead); calls per second, and every call's
            /// latency when `latencies` is given.
            pub fn throughput(
                pool: &ConnPool,
                threads: usize,
                slice: Duration,
                hold: bool,
                latencies: Option<&mut Vec<f64>>,
                op: &(dyn Fn(&mut Conn, usize) -> Res<()> + Sync),
            ) -> Res<f64> {
                let barrier = Barrier::new(threads);
                let record = latencies.is_some();
                let outcomes: Vec<Res<(u64, f64, Vec<f64>)>> = std::thread::scope(|scope| {
                    let handles: Vec<_> = (0..threads)
                        .map(|thread| {
                            let barrier = &barrier;
                            scope.spawn(move || -> Res<(u64, f64, Vec<f64>)> {
                                let mut held = if hold { Some(pool.get()?) } else { None };
                                let mut times = Vec::new();
                                barrier.wait();
                                let start = Instant::now();
                                let mut calls = 0u64;
                                while start.elapsed() < slice {
                                    let began = Instant::now();
                                    match held.as_mut() {
                                        Some(conn) => op(conn, thread)?,
                                        None => op(&mut *pool.get()?, thread)?,
                                    }
                                    if record {
                                        times.push(began.elapsed().as_secs_f64() * 1e6);
                                    }
                                    calls += 1;
                                }
                                Ok((calls, start.elapsed().as_secs_f64(), times))
                            })
                        })
                        .collect();
                    handles
                        .into_iter()
                        .map(|handle| handle.join().unwrap_or_else(|_| Err("a thread panicked".into())))
                        .collect()
                });
                let (mut calls, mut seconds) = (0u64, 0f64);
                let mut all = Vec::new();
                for outcome in outcomes {
                    let (c, s, times) = outcome?;
                    calls += c;
                    seconds = seconds.max(s);
                    all.extend(times);
                }
                if let Some(latencies) = latencies {
                    latencies.extend(all);
                }
                Ok(calls as f64 / seconds)
            }

            // ---- 3: agent turns ----

            pub fn turns(url: &str, conn: &mut Conn, plan: &Plan, results: &mut Results) -> Res<()> {
                let ids = agent_rows(conn, "bench-turn", 16)?;
                let locks = locks()?;
                for threads in THREADS {
                    let pool = pool(url, threads as u32, false)?;
                    let (pool, ids, locks) = (&pool, &ids, &locks);
                    let slice = plan.thread_slice;
                    let mut variants = [
                        Variant::new("hand", || {
                            throughput(pool, threads, slice, false, None, &|c, t| {
                                hand_turn::<false>(c, &ids[t].0, &ids[t].1, &new_token())
                            })
                        }),
                        Variant::new("library", || {
                            throughput(pool, threads, slice, false, None, &|c, t| {
                                lib_turn(c, locks, &ids[t].0, &ids[t].1, &new_token())
                            })
                        }),
                    ];
                    let samples = interleave(plan.thread_rounds, &mut variants)?;
                    let (ratio, min, max) = paired_ratio(&samples[1], &samples[0]);
                    results.push(Row {
                        section: 3,
                        backend: sql::NAME,
                        figure: format!("turns/s (acquire + release), {threads} thread(s)"),
                        baseline_name: "sql_query".into(),
                        baseline: median(&samples[0]),
                        library_name: "library".into(),
                        library: median(&samples[1]),
                        unit: "turns/s",
                        ratio,
                        range: Some((min, max)),
                        better: Better::Higher,
                        goal: None,
                    });
                }
                Ok(())
            }

            /// Round trips and statements of one acquire and one release, on a connection that goes
            /// through a counting proxy (SQLite: statements only; it has no network).
            /// A connection through a round-trip counting proxy (none for SQLite, which has no network).
            fn proxied(url: &str) -> Res<(Conn, Option<measure::RoundTripProxy>)> {
                let proxy = match measure::reroute(url, 0, sql::DEFAULT_PORT) {
                    Some((_, upstream)) if sql::DEFAULT_PORT != 0 => Some(measure::RoundTripProxy::start(upstream)?),
                    _ => None,
                };
                let conn = match &proxy {
                    Some(proxy) => {
                        let (proxied, _) = measure::reroute(url, proxy.port, sql::DEFAULT_PORT).ok_or("no TCP URL")?;
                        connect(&proxied)?
                    }
                    None => connect(url)?,
                };
                Ok((conn, proxy))
            }

            /// Round trips and statements of one claim cycle: library, sql_query, via diesel::update.
            pub fn cycle_round_trips(url: &str, section: u32, results: &mut Results) -> Res<()> {
                let (mut conn, proxy) = proxied(url)?;
                free_rows(&mut conn)?;
                let lease = Lease::new(Duration::from_micros(LEASE_MICROS as u64))?;
                let log = StatementLog::default();
                log.attach(&mut conn);
                let mut count = |cycle: &mut dyn FnMut(&mut Conn) -> Res<()>| -> Res<(f64, f64)> {
                    cycle(&mut conn)?; // warm: whatever is cached is cached now
                    let rt = proxy.as_ref().map_or(0, |p| p.round_trips());
                    let st = log.statements.load(std::sync::atomic::Ordering::SeqCst);
                    cycle(&mut conn)?;
                    let statements = (log.statements.load(std::sync::atomic::Ordering::SeqCst) - st) as f64;
                    let round_trips = proxy.as_ref().map_or(statements, |p| (p.round_trips() - rt) as f64);
                    Ok((round_trips, statements))
                };
                let library = count(&mut |c| lib_cycle(c, 1, &Claim::new(OWNER)?, lease))?;
                let hand = count(&mut |c| hand_cycle::<false>(c, 1, OWNER, &new_token(), LEASE_MICROS))?;
                let via_diesel = count(&mut |c| lib_cycle_diesel_update(c, 1, &Claim::new(OWNER)?, lease))?;
                let kind = if proxy.is_some() { "network round trips" } else { "in-process round trips" };
                for (figure, baseline_name, baseline, library_name, library) in [
                    (format!("{kind} per cycle"), "sql_query", hand.0, "library", library.0),
                    ("statements per cycle".to_owned(), "sql_query", hand.1, "library", library.1),
                    (format!("{kind} per cycle"), "sql_query", hand.0, "library via diesel::update", via_diesel.0),
                ] {
                    results.push(Row {
                        section,
                        backend: sql::NAME,
                        figure,
                        baseline_name: baseline_name.into(),
                        baseline,
                        library_name: library_name.into(),
                        library,
                        unit: "",
                        ratio: library / baseline,
                        range: None,
                        better: Better::Lower,
                        goal: None,
                    });
                }
                Ok(())
            }

            pub fn round_trips(url: &str, results: &mut Results) -> Res<()> {
                let (mut conn, proxy) = proxied(url)?;
                let ids = agent_rows(&mut conn, "bench-rt", 1)?;
                let (chat, user) = (&ids[0].0, &ids[0].1);
                let locks = locks()?;
                let log = StatementLog::default();
                log.attach(&mut conn);
                const TIMES: u64 = 5;
                // (acquire round trips, acquire statements, release round trips, release statements)
                let mut measure_turns = |acquire: &mut dyn FnMut(&mut Conn, &str) -> Res<()>,
                                         release: &mut dyn FnMut(&mut Conn, &str) -> Res<()>|
                 -> Res<[f64; 4]> {
                    let mut counts = [0u64; 4];
                    for n in 0..TIMES + 2 {
                        let token = new_token();
                        let (rt0, st0) = (proxy.as_ref().map_or(0, |p| p.round_trips()), log.statements.load(std::sync::atomic::Ordering::SeqCst));
                        acquire(&mut conn, &token)?;
                        let (rt1, st1) = (proxy.as_ref().map_or(0, |p| p.round_trips()), log.statements.load(std::sync::atomic::Ordering::SeqCst));
                        release(&mut conn, &token)?;
                        let (rt2, st2) = (proxy.as_ref().map_or(0, |p| p.round_trips()), log.statements.load(std::sync::atomic::Ordering::SeqCst));
                        if n >= 2 {
                            // the first two turns prepare what is cached
                            for (k, d) in [rt1 - rt0, st1 - st0, rt2 - rt1, st2 - st1].into_iter().enumerate() {
                                counts[k] += d;
                            }
                        }
                    }
                    let mut per = counts.map(|c| c as f64 / TIMES as f64);
                    if proxy.is_none() {
                        per[0] = per[1];
                        per[2] = per[3];
                    }
                    Ok(per)
                };
                let library = measure_turns(
                    &mut |c, token| Ok(locks.acquire(c, chat, user, &TurnRef::new(token)?)?),
                    &mut |c, token| check(locks.release(c, chat, user, &TurnRef::new(token)?)?, "release"),
                )?;
                let hand = measure_turns(
                    &mut |c, token| hand_acquire::<false>(c, chat, user, token),
                    &mut |c, token| hand_release::<false>(c, chat, user, token),
                )?;
                let prepared = measure_turns(
                    &mut |c, token| hand_acquire::<true>(c, chat, user, token),
                    &mut |c, token| hand_release::<true>(c, chat, user, token),
                )?;
                StatementLog::detach(&mut conn);
                if let Some(proxy) = &proxy {
                    // Where the round trips go: one statement of each kind, alone.
                    let mut probe = |f: &mut dyn FnMut(&mut Conn) -> Res<()>| -> Res<u64> {
                        f(&mut conn)?; // warm: whatever is cached is cached now
                        let before = proxy.round_trips();
                        f(&mut conn)?;
                        Ok(proxy.round_trips() - before)
                    };
                    use diesel::connection::SimpleConnection;
                    let begin = probe(&mut |c| Ok(c.batch_execute("BEGIN")?))?;
                    let commit = probe(&mut |c| Ok(c.batch_execute("COMMIT")?))?;
                    let uncached = probe(&mut |c| {
                        let update = diesel::sql_query(sql::RELEASE_CHAT).bind::<Text, _>(chat.as_str()).bind::<Text, _>("none");
                        Ok(update.execute(c).map(drop)?)
                    })?;
                    let cached = probe(&mut |c| {
                        let update = PreparedSql::<HandReleaseChat, 2>::new([Bind::Text(chat), Bind::Text("none")]);
                        Ok(update.execute(c).map(drop)?)
                    })?;
                    results.note(format!(
                        "{}: network round trips of one statement alone: BEGIN {begin}, COMMIT {commit} (Diesel's transaction manager sends both through batch_execute), \
                         an UPDATE prepared at every execution (diesel::update, sql_query) {uncached}, the same UPDATE prepared once (diesel_lease::update) {cached}",
                        sql::NAME
                    ));
                }
                let kind = if proxy.is_some() { "network round trips" } else { "in-process round trips" };
                let rows = [
                    (format!("{kind} per acquire"), "sql_query", hand[0], "library", library[0], Some(Goal::LibraryAtMost(4.0))),
                    (format!("{kind} per release"), "sql_query", hand[2], "library", library[2], None),
                    ("statements per acquire".to_owned(), "sql_query", hand[1], "library", library[1], None),
                    ("statements per release".to_owned(), "sql_query", hand[3], "library", library[3], None),
                    (format!("{kind} per acquire"), "hand, prepared once", prepared[0], "library", library[0], None),
                ];
                for (figure, baseline_name, baseline, library_name, library, goal) in rows {
                    results.push(Row {
                        section: 3,
                        backend: sql::NAME,
                        figure,
                        baseline_name: baseline_name.into(),
                        baseline,
                        library_name: library_name.into(),
                        library,
                        unit: "",
                        ratio: library / baseline,
                        range: None,
                        better: Better::Lower,
                        goal,
                    });
                }
                Ok(())
            }

            // ---- 4: holders at once through a pool of 4 ----

            pub fn holders(url: &str, conn: &mut Conn, plan: &Plan, results: &mut Results) -> Res<()> {
                let count = plan.holders;
                let ids = agent_rows(conn, "bench-h", count)?;
                let pool = pool(url, HOLDER_POOL, false)?;
                let locks = locks()?;
                let started = Instant::now();
                std::thread::scope(|scope| -> Res<()> {
                    let handles: Vec<_> = (0..HOLDER_POOL as usize)
                        .map(|worker| {
                            let (pool, ids, locks) = (&pool, &ids, &locks);
                            scope.spawn(move || -> Res<()> {
                                for n in (worker..ids.len()).step_by(HOLDER_POOL as usize) {
                                    let turn = TurnRef::new(&format!("bench-h-turn-{n}"))?;
                                    locks.acquire(&mut *pool.get()?, &ids[n].0, &ids[n].1, &turn)?;
                                }
                                Ok(())
                            })
                        })
                        .collect();
                    for handle in handles {
                        handle.join().unwrap_or_else(|_| Err("a holder thread panicked".into()))?;
                    }
                    Ok(())
                })?;
                let took = started.elapsed();
                let state = pool.state();
                let pinned = state.connections - state.idle_connections;
                let held = diesel::sql_query(
                    "SELECT COUNT(*) AS n FROM conversations c JOIN user_settings u ON u.user_id = c.user_id \
                     WHERE c.id LIKE 'bench-h-%' AND c.busy_turn_ref LIKE 'bench-h-turn-%' AND u.busy_turn_ref = c.busy_turn_ref",
                )
                .get_result::<Count>(conn)?
                .n as f64;
                results.note(format!(
                    "{}: {count} turns acquired through a pool of {HOLDER_POOL} in {:.1} s ({:.0} acquires/s); afterwards {} of {} connections idle",
                    sql::NAME,
                    took.as_secs_f64(),
                    count as f64 / took.as_secs_f64(),
                    state.idle_connections,
                    state.connections
                ));
                drop(pool);

                let (advisory_held, advisory_pinned, baseline_name) = match sql::ADVISORY {
                    Some(name) => {
                        let pool = Pool::builder()
                            .max_size(HOLDER_POOL)
                            .min_idle(Some(HOLDER_POOL))
                            .test_on_check_out(false)
                            .connection_timeout(Duration::from_millis(250))
                            .build(ConnectionManager::<Conn>::new(url))?;
                        let mut pinned = Vec::new();
                        let mut refused = 0;
                        for key in 1..=count as i64 {
                            // A holder keeps its connection: the lock is its session's.
                            match pool.get() {
                                Ok(mut conn) => {
                                    if sql::advisory_lock(&mut conn, 900_000 + key)? {
                                        pinned.push(conn);
                                    }
                                }
                                Err(_) => {
                                    refused += 1;
                                    break;
                                }
                            }
                        }
                        let held = pinned.len() as f64;
                        results.note(format!(
                            "{}: {name} through a pool of {HOLDER_POOL}: {held} holders, then holder {} waited 250 ms for a connection and gave up ({refused} refused)",
                            sql::NAME,
                            pinned.len() + 1
                        ));
                        for conn in &mut pinned {
                            sql::advisory_unlock_all(conn)?;
                        }
                        drop(pinned);
                        (held, held, name.to_owned())
                    }
                    None => (f64::NAN, f64::NAN, "no advisory locks in SQLite".to_owned()),
                };
                for (figure, baseline, library, better, goal) in [
                    ("holders at once (turns, both locks each)", advisory_held, held, Better::Higher, Goal::LibraryAtLeast(10_000.0)),
                    ("connections pinned by the holders", advisory_pinned, pinned as f64, Better::Lower, Goal::LibraryAtMost(0.0)),
                ] {
                    results.push(Row {
                        section: 4,
                        backend: sql::NAME,
                        figure: figure.into(),
                        baseline_name: baseline_name.clone(),
                        baseline,
                        library_name: "library".into(),
                        library,
                        unit: "",
                        ratio: library / baseline,
                        range: None,
                        better,
                        goal: Some(goal),
                    });
                }
                Ok(())
            }

            // ---- 5: contention on one hot row ----

            /// The job of a contender by `SELECT .. FOR UPDATE NOWAIT`: lock the row, read whether it
            /// is held, claim it if not. True when refused (held, or locked by another contender).
            fn nowait_attempt(conn: &mut Conn, token: &str) -> Res<(bool, bool)> {
                let outcome = conn.transaction::<_, diesel::result::Error, _>(|conn| {
                    if sql::nowait_busy(conn, HOT, LEASE_MICROS)? {
                        return Ok(true);
                    }
                    hand_claim::<false>(conn, HOT, OWNER, token, LEASE_MICROS)?;
                    Ok(false)
                });
                match outcome {
                    Ok(refused) => Ok((refused, false)),
                    Err(diesel::result::Error::DatabaseError(_, _)) => Ok((true, true)),
                    Err(error) => Err(error.into()),
                }
            }

            pub fn contention(url: &str, conn: &mut Conn, plan: &Plan, results: &mut Results) -> Res<()> {
                const THREADS: usize = 16;
                // The hot row is held, freshly, for the whole measurement.
                let holder = Claim::new("bench-hot-holder")?;
                let t = bench_leases::table;
                diesel::update(t.find(HOT)).set(t.taken(&holder)).execute(conn)?;
                let lease = Lease::new(Duration::from_micros(LEASE_MICROS as u64))?;
                let pool = pool(url, THREADS as u32, false)?;
                let pool = &pool;
                let slice = plan.thread_slice;
                let lock_errors = std::sync::atomic::AtomicU64::new(0);
                let lock_errors = &lock_errors;
                let latencies = RefCell::new([Vec::new(), Vec::new()]);
                let latencies = &latencies;
                let mut variants = [
                    Variant::new("nowait", || {
                        let mut times = Vec::new();
                        let rate = throughput(pool, THREADS, slice, true, Some(&mut times), &|c, _| {
                            let (refused, lock_error) = nowait_attempt(c, &new_token())?;
                            if lock_error {
                                lock_errors.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                            }
                            check(refused, "the NOWAIT contender won the held row")
                        })?;
                        latencies.borrow_mut()[0].extend(times);
                        Ok(rate)
                    }),
                    Variant::new("library", || {
                        let mut times = Vec::new();
                        let rate = throughput(pool, THREADS, slice, true, Some(&mut times), &|c, _| {
                            let claim = Claim::new(OWNER)?;
                            let won: Claimed<LeaseRow, _, _> = t
                                .claim_row(HOT, lease)
                                .set(bench_leases::status.eq("running"))
                                .by(claim, c)?;
                            check(!won.is_won(), "the library's contender won the held row")
                        })?;
                        latencies.borrow_mut()[1].extend(times);
                        Ok(rate)
                    }),
                ];
                let samples = interleave(plan.thread_rounds, &mut variants)?;
                let mut latencies = latencies.borrow_mut();
                let nowait_p50 = measure::percentile(&mut latencies[0], 50.0);
                let nowait_p99 = measure::percentile(&mut latencies[0], 99.0);
                let names = ["library"];
                for k in 1..samples.len() {
                    let (ratio, min, max) = paired_ratio(&samples[k], &samples[0]);
                    results.push(Row {
                        section: 5,
                        backend: sql::NAME,
                        figure: format!("refusals/s, {THREADS} threads, one held row"),
                        baseline_name: "FOR UPDATE NOWAIT".into(),
                        baseline: median(&samples[0]),
                        library_name: names[k - 1].into(),
                        library: median(&samples[k]),
                        unit: "/s",
                        ratio,
                        range: Some((min, max)),
                        better: Better::Higher,
                        goal: None,
                    });
                    let p50 = measure::percentile(&mut latencies[k], 50.0);
                    let p99 = measure::percentile(&mut latencies[k], 99.0);
                    results.push(Row {
                        section: 5,
                        backend: sql::NAME,
                        figure: "p99 latency of a refusal".into(),
                        baseline_name: "FOR UPDATE NOWAIT".into(),
                        baseline: nowait_p99,
                        library_name: names[k - 1].into(),
                        library: p99,
                        unit: "µs",
                        ratio: p99 / nowait_p99,
                        range: None,
                        better: Better::Lower,
                        goal: None,
                    });
                    results.note(format!(
                        "{}: contention, p50 of a refusal: {} {p50:.0} µs, FOR UPDATE NOWAIT {nowait_p50:.0} µs",
                        sql::NAME,
                        names[k - 1]
                    ));
                }
                results.note(format!(
                    "{}: {} of {} FOR UPDATE NOWAIT refusals were lock errors (another contender held the row lock), the rest read the row as held",
                    sql::NAME,
                    lock_errors.load(std::sync::atomic::Ordering::Relaxed),
                    latencies[0].len()
                ));
                Ok(())
            }

            // ---- Everything for this backend ----

            pub fn run(url: &str, options: &Options, results: &mut Results) -> Res<()> {
                println!("\n== {}", sql::NAME);
                let plan = &options.plan;
                let mut conn = connect(url)?;
                for (label, query) in sql::SETTINGS {
                    let value = diesel::sql_query(*query).get_result::<Setting>(&mut conn)?.value;
                    results.machine.push(((*label).to_owned(), value));
                }
                setup(&mut conn)?;
                let outcome = (|| -> Res<()> {
                    verify(&mut conn)?;
                    let section = if sql::NAME == "SQLite" { 6 } else { 1 };
                    if options.runs(section) {
                        println!("-- {section}. overhead of the claim cycle");
                        overhead(&mut conn, section, plan, results)?;
                        cycle_round_trips(url, section, results)?;
                    }
                    if options.runs(3) {
                        println!("-- 3. agent turns");
                        turns(url, &mut conn, plan, results)?;
                        round_trips(url, results)?;
                    }
                    if options.runs(4) {
                        println!("-- 4. holders through a pool of {HOLDER_POOL}");
                        holders(url, &mut conn, plan, results)?;
                    }
                    if options.runs(5) && sql::NOWAIT {
                        println!("-- 5. contention on one hot row");
                        contention(url, &mut conn, plan, results)?;
                    }
                    Ok(())
                })();
                let cleaned = teardown(&mut conn);
                outcome.and(cleaned)
            }
        }
    };
}

backend_suite!(pg, pg_sql, None);
backend_suite!(mysql, mysql_sql, None);
backend_suite!(sqlite, sqlite_sql, Some(Box::new(Pragmas)));

// ---- 2: pgbench against the library ----

/// The cycle of `pg_sql` for pgbench: client `c` works on row `c + 1`, its token a random number.
fn pgbench_script() -> String {
    let claim = pg_sql::CLAIM
        .replace("$1", "'pgbench'")
        .replace("$2", ":token")
        .replace("$3", "'running'")
        .replace("$4", ":id")
        .replace("$5", ":lease");
    let renew = pg_sql::RENEW.replace("$1", ":id").replace("$2", ":token");
    let release = pg_sql::RELEASE
        .replace("$1", "'queued'")
        .replace("$2", ":id")
        .replace("$3", ":token");
    format!(
        "\\set id :client_id + 1\n\\set token random(1, 1000000000000)\n\\set lease {LEASE_MICROS}\n{claim};\n{renew};\n{release};\n"
    )
}

/// Runs pgbench for `secs` at `clients`; its transactions (cycles) per second.
fn pgbench_rate(url: &str, script: &std::path::Path, clients: usize, secs: u64) -> Res<f64> {
    let n = clients.to_string();
    let output = std::process::Command::new("pgbench")
        .args([
            "-n",
            "-M",
            "prepared",
            "-c",
            &n,
            "-j",
            &n,
            "-T",
            &secs.to_string(),
            "-f",
        ])
        .arg(script)
        .arg(url)
        .output()?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let tps = stdout
        .lines()
        .find_map(|line| line.strip_prefix("tps = "))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|tps| tps.parse::<f64>().ok());
    let failed = stdout
        .lines()
        .find_map(|line| line.strip_prefix("number of failed transactions: "))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse::<u64>().ok())
        .unwrap_or(0);
    match tps {
        Some(tps) if output.status.success() && failed == 0 => Ok(tps),
        _ => Err(format!(
            "pgbench failed: {stdout}{}",
            String::from_utf8_lossy(&output.stderr)
        )
        .into()),
    }
}

pub fn pgbench(url: &str, options: &Options, results: &mut Results) -> Res<()> {
    println!("\n== 2. PostgreSQL: the cycle through pgbench -M prepared against the library");
    let version = crate::report::command_line("pgbench", &["--version"]);
    if !version.starts_with("pgbench") {
        results.note("pgbench is not installed: measurement 2 skipped");
        return Ok(());
    }
    results.machine.push(("pgbench".into(), version));
    let plan = &options.plan;
    let mut conn = pg::connect(url)?;
    pg::setup(&mut conn)?;
    let script =
        std::env::temp_dir().join(format!("bench-lease-pgbench-{}.sql", std::process::id()));
    std::fs::write(&script, pgbench_script())?;
    let lease = Lease::new(Duration::from_micros(LEASE_MICROS as u64))?;
    let outcome = (|| -> Res<()> {
        for clients in THREADS {
            let plain = pg::pool(url, clients as u32, false)?;
            let tested = pg::pool(url, clients as u32, true)?;
            let slice = Duration::from_secs(plan.pgbench_secs);
            let cycle = |c: &mut pg::Conn, t: usize| {
                pg::lib_cycle(c, t as i64 + 1, &Claim::new(OWNER)?, lease)
            };
            let via_diesel = |c: &mut pg::Conn, t: usize| {
                pg::lib_cycle_diesel_update(c, t as i64 + 1, &Claim::new(OWNER)?, lease)
            };
            let conn = RefCell::new(&mut conn);
            let mut variants = [
                Variant::new("pgbench", || {
                    pg::free_rows(&mut conn.borrow_mut())?;
                    pgbench_rate(url, &script, clients, plan.pgbench_secs)
                }),
                Variant::new("library", || {
                    pg::free_rows(&mut conn.borrow_mut())?;
                    pg::throughput(&plain, clients, slice, false, None, &cycle)
                }),
                Variant::new("library, r2d2 checkout test", || {
                    pg::free_rows(&mut conn.borrow_mut())?;
                    pg::throughput(&tested, clients, slice, false, None, &cycle)
                }),
                Variant::new("library via diesel::update", || {
                    pg::free_rows(&mut conn.borrow_mut())?;
                    pg::throughput(&plain, clients, slice, false, None, &via_diesel)
                }),
            ];
            let samples = interleave(plan.pgbench_rounds, &mut variants)?;
            for (k, library_name, goal) in [
                (1, "library", Some(Goal::RatioAtLeast(0.85))),
                (2, "library, r2d2 checkout test", None),
                (3, "library via diesel::update", None),
            ] {
                let (ratio, min, max) = paired_ratio(&samples[k], &samples[0]);
                results.push(Row {
                    section: 2,
                    backend: pg_sql::NAME,
                    figure: format!("cycles/s, {clients} client(s)"),
                    baseline_name: "pgbench -M prepared".into(),
                    baseline: median(&samples[0]),
                    library_name: library_name.into(),
                    library: median(&samples[k]),
                    unit: "cycles/s",
                    ratio,
                    range: Some((min, max)),
                    better: Better::Higher,
                    goal,
                });
            }
        }
        Ok(())
    })();
    let _ = std::fs::remove_file(&script);
    let cleaned = pg::teardown(&mut conn);
    outcome.and(cleaned)
}
