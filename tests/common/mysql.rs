//! MySQL/MariaDB, at `MYSQL_DATABASE_URL`.
server_backend!(
    diesel::MysqlConnection,
    "MySQL/MariaDB",
    "MYSQL_DATABASE_URL",
    [
        ("lease_jobs", super::jobs::MYSQL_DDL),
        ("indexed_jobs", super::jobs::MYSQL_INDEXED_DDL),
        ("native_jobs", native::DDL),
        ("lease_items", super::items::MYSQL_DDL),
        ("case_jobs", super::jobs::MYSQL_CASE_DDL),
    ],
    "SET time_zone = '+05:45'"
);

native_jobs!(
    Datetime,
    "CREATE TABLE native_jobs (id VARCHAR(64) PRIMARY KEY, owner VARCHAR(255), \
     claim_token VARCHAR(255) COLLATE utf8mb4_bin, claimed_at DATETIME(6))"
);

/// `column`, moved `secs` seconds back: time passing for a row, in SQL.
pub fn earlier(column: &str, secs: u32) -> String {
    format!("{column} - INTERVAL {secs} SECOND")
}

/// How many statements the server has run for this session, by its own count (this one
/// included).
pub fn questions(conn: &mut Conn) -> i64 {
    server_count(conn, "SHOW SESSION STATUS LIKE 'Questions'")
}

/// A counter of the server's, read by `show`: `SHOW [SESSION | GLOBAL] STATUS LIKE '<name>'`, or
/// any query of one text column `Value`.
pub fn server_count(conn: &mut Conn, show: &str) -> i64 {
    let status: Value = diesel::sql_query(show)
        .get_result(conn)
        .unwrap_or_else(|e| panic!("{show}: {e}"));
    status.value.parse().expect("a count")
}

/// How long a call may go unanswered before it counts as hung: the calls it bounds take
/// milliseconds.
pub const ANSWER_WITHIN: std::time::Duration = std::time::Duration::from_secs(20);

/// The server's id of the session `conn` is.
pub fn session_id(conn: &mut Conn) -> u64 {
    diesel::select(diesel::dsl::sql::<
        diesel::sql_types::Unsigned<diesel::sql_types::BigInt>,
    >("CONNECTION_ID()"))
    .get_result(conn)
    .expect("the session's id")
}

/// What `call` gives back, `call` being a library call on the connection of session `session`.
/// It runs on a thread of its own, so that a call that never returns fails the test rather than
/// hanging it: after [`ANSWER_WITHIN`] the session is killed from another connection, which ends
/// the call with an error, and the test fails, saying what the server thought the session was
/// doing.
pub fn answers_within<R: Send>(session: u64, what: &str, call: impl FnOnce() -> R + Send) -> R {
    use std::sync::mpsc::RecvTimeoutError;
    let (answer, answered) = std::sync::mpsc::channel();
    std::thread::scope(|scope| {
        scope.spawn(move || answer.send(call()));
        match answered.recv_timeout(ANSWER_WITHIN) {
            Ok(answer) => answer,
            Err(RecvTimeoutError::Disconnected) => panic!("{what}: the call panicked"),
            Err(RecvTimeoutError::Timeout) => {
                let killer = &mut connect();
                let seen = diesel::sql_query(format!(
                    "SELECT COMMAND AS Value FROM information_schema.PROCESSLIST WHERE ID = {session}"
                ))
                .get_result::<Value>(killer)
                .map_or_else(|e| e.to_string(), |seen| seen.value);
                // The killed call returns "Server has gone away", and the scope ends.
                diesel::sql_query(format!("KILL CONNECTION {session}"))
                    .execute(killer)
                    .expect("the hung session killed");
                panic!(
                    "{what}: no answer within {ANSWER_WITHIN:?}, the server listing the session \
                     as {seen:?}; session {session} killed"
                )
            }
        }
    })
}

/// A text column named `Value` (as in `SHOW STATUS`), read by `sql_query`.
#[derive(QueryableByName)]
struct Value {
    #[diesel(sql_type = diesel::sql_types::Text)]
    #[diesel(column_name = Value)]
    value: String,
}

/// A statement's plan: the prefix that asks for it, and the text columns of its answer that
/// name the indexes it reads.
pub const EXPLAIN: &str = "EXPLAIN";
pub const PLAN_COLUMNS: &[&str] = &["table", "type", "key", "Extra"];

/// Fresh statistics of a table, its name after the prefix.
pub const ANALYZE: &str = "ANALYZE TABLE";

/// What the catalog says an index covers, by the index's name (bound): its columns in order.
pub const INDEX_DEFINITION: &str =
    "SELECT GROUP_CONCAT(COLUMN_NAME ORDER BY SEQ_IN_INDEX) AS definition \
     FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE() AND INDEX_NAME = ? \
     GROUP BY INDEX_NAME";

/// What a health reading of a lease table reads on MySQL/MariaDB, always (the oldest transaction
/// when one is open).
pub const HEALTH_READINGS: &[diesel_lease::health::Metric] = {
    use diesel_lease::health::Metric::*;
    &[
        HistoryListLength,
        LiveRows,
        PageSize,
        Pages,
        FreePages,
        FreeSpaceShare,
    ]
};
