//! SQLite, on a temporary file so that separate connections see each other's commits.
use std::sync::OnceLock;

use diesel::prelude::*;
use diesel::r2d2::{ConnectionManager, Pool};

pub type Conn = SqliteConnection;

/// Starts a transaction that will write: it takes the database's write lock at once.
pub const BEGIN_WRITE: &str = "BEGIN IMMEDIATE";

/// The database file's path, as a connection's URL.
pub fn url() -> &'static str {
    path()
}

fn path() -> &'static str {
    static PATH: OnceLock<String> = OnceLock::new();
    PATH.get_or_init(|| {
        let file = std::env::temp_dir().join(format!(
            "{}.db",
            super::pools::unique_id("diesel-lease-test")
        ));
        file.to_string_lossy().into_owned()
    })
}

/// What the library ships for SQLite pools: WAL, and a writer waited for.
fn pragmas() -> diesel_lease::sqlite::SqlitePragmas {
    diesel_lease::sqlite::SqlitePragmas::default().busy_timeout(std::time::Duration::from_secs(30))
}

/// The shared pool, with the test tables made anew.
pub fn pool() -> Pool<ConnectionManager<Conn>> {
    static POOL: OnceLock<Pool<ConnectionManager<Conn>>> = OnceLock::new();
    POOL.get_or_init(|| {
        super::pools::shared_pool(
            path(),
            Some(Box::new(pragmas())),
            [
                ("lease_jobs", super::jobs::SQLITE_DDL),
                ("indexed_jobs", super::jobs::SQLITE_INDEXED_DDL),
                ("native_jobs", native::DDL),
                ("lease_items", super::items::SQLITE_DDL),
                ("case_jobs", super::jobs::SQLITE_CASE_DDL),
            ],
        )
    })
    .clone()
}

/// A pool of its own with `size` connections.
pub fn pool_of(size: u32) -> Pool<ConnectionManager<Conn>> {
    pool();
    super::pools::build_pool(path(), size, Some(Box::new(pragmas())))
}

/// A pool of `size` connections to the database file at `url`, set up as this backend's, that
/// leaves the test tables as they are: a child process's, whose parent made them.
pub fn worker_pool(url: &str, size: u32) -> Pool<ConnectionManager<Conn>> {
    super::pools::build_pool(url, size, Some(Box::new(pragmas())))
}

/// A pool of its own with `size` connections, whose checkout waits up to `timeout`.
pub fn pool_waiting(size: u32, timeout: std::time::Duration) -> Pool<ConnectionManager<Conn>> {
    pool();
    super::pools::build_pool_waiting(path(), size, timeout, Some(Box::new(pragmas())))
}

/// A pool of its own with `size` connections, and how many `UPDATE`s they have run.
pub fn pool_counting_updates(size: u32) -> (Pool<ConnectionManager<Conn>>, super::pools::Counter) {
    pool();
    super::pools::pool_counting_updates(path(), size, Some(Box::new(pragmas())))
}

/// A pool of its own with `size` connections, and how many statements they have run.
pub fn pool_counting_statements(
    size: u32,
) -> (Pool<ConnectionManager<Conn>>, super::pools::Counter) {
    pool();
    super::pools::pool_counting_statements(path(), size, Some(Box::new(pragmas())))
}

/// A connection of its own, outside any pool.
pub fn connect() -> Conn {
    pool();
    let mut conn = SqliteConnection::establish(path()).expect("SQLite connection");
    pragmas().apply(&mut conn).expect("pragmas");
    conn
}

/// SQLite has no session time zone: its `'now'` is always UTC, whatever the process's `TZ`.
pub fn connect_in_far_time_zone() -> Conn {
    connect()
}

native_jobs!(
    Timestamp,
    "CREATE TABLE native_jobs (id TEXT PRIMARY KEY, owner TEXT, claim_token TEXT, claimed_at TEXT)"
);

/// `column`, moved `secs` seconds back: time passing for a row, in SQL.
pub fn earlier(column: &str, secs: u32) -> String {
    format!("strftime('%Y-%m-%d %H:%M:%f', {column}, '-{secs} seconds')")
}

/// A statement's plan: the prefix that asks for it, and the text columns of its answer that
/// name the indexes it reads.
pub const EXPLAIN: &str = "EXPLAIN QUERY PLAN";
pub const PLAN_COLUMNS: &[&str] = &["detail"];

/// Fresh statistics of a table, its name after the prefix.
pub const ANALYZE: &str = "ANALYZE";

/// What the catalog says an index covers, by the index's name (bound): its definition.
pub const INDEX_DEFINITION: &str =
    "SELECT sql AS definition FROM sqlite_master WHERE type = 'index' AND name = ?";

/// What a health reading of a lease table reads on SQLite, in WAL mode.
pub const HEALTH_READINGS: &[diesel_lease::health::Metric] = {
    use diesel_lease::health::Metric::*;
    &[
        WalFrames,
        WalFramesLeft,
        WalBytes,
        PageSize,
        Pages,
        FreePages,
        FreeSpaceShare,
    ]
};
