//! SQLite, on a temporary file so that separate connections see each other's commits.
use std::sync::OnceLock;

use diesel::prelude::*;
use diesel::r2d2::{ConnectionManager, Pool};

pub type Conn = SqliteConnection;

/// Starts a transaction that will write: it takes the database's write lock at once.
pub const BEGIN_WRITE: &str = "BEGIN IMMEDIATE";

fn path() -> &'static str {
    static PATH: OnceLock<String> = OnceLock::new();
    PATH.get_or_init(|| {
        let file =
            std::env::temp_dir().join(format!("{}.db", super::unique_id("diesel-lease-test")));
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
        super::shared_pool(
            path(),
            Some(Box::new(pragmas())),
            [
                ("lease_jobs", super::jobs::SQLITE_DDL),
                ("native_jobs", native::DDL),
                ("lease_items", super::items::SQLITE_DDL),
            ],
        )
    })
    .clone()
}

/// A pool of its own with `size` connections.
pub fn pool_of(size: u32) -> Pool<ConnectionManager<Conn>> {
    pool();
    super::build_pool(path(), size, Some(Box::new(pragmas())))
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
