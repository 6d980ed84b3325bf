//! SQLite, on a temporary file so that separate connections see each other's commits.
use std::sync::OnceLock;

use diesel::connection::SimpleConnection;
use diesel::prelude::*;
use diesel::r2d2::{ConnectionManager, CustomizeConnection, Pool};

pub type Conn = SqliteConnection;

fn path() -> &'static str {
    static PATH: OnceLock<String> = OnceLock::new();
    PATH.get_or_init(|| {
        let file =
            std::env::temp_dir().join(format!("{}.db", super::unique_id("diesel-lease-test")));
        file.to_string_lossy().into_owned()
    })
}

/// What a production pool sets on every SQLite connection: wait for the writer, WAL.
#[derive(Debug)]
struct Pragmas;

impl CustomizeConnection<Conn, diesel::r2d2::Error> for Pragmas {
    fn on_acquire(&self, conn: &mut Conn) -> Result<(), diesel::r2d2::Error> {
        configure(conn).map_err(diesel::r2d2::Error::QueryError)
    }
}

fn configure(conn: &mut Conn) -> QueryResult<()> {
    conn.batch_execute(
        "PRAGMA busy_timeout = 30000; PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;",
    )
}

/// The shared pool, with the schema in place.
pub fn pool() -> Option<Pool<ConnectionManager<Conn>>> {
    static POOL: OnceLock<Pool<ConnectionManager<Conn>>> = OnceLock::new();
    Some(
        POOL.get_or_init(|| {
            super::shared_pool(
                path(),
                Some(Box::new(Pragmas)),
                [super::jobs::SQLITE_DDL, native::DDL],
            )
        })
        .clone(),
    )
}

/// A pool of its own with `size` connections.
pub fn pool_of(size: u32) -> Pool<ConnectionManager<Conn>> {
    pool();
    super::build_pool(path(), size, Some(Box::new(Pragmas)))
}

/// A connection of its own, outside any pool.
pub fn connect() -> Conn {
    pool();
    let mut conn = SqliteConnection::establish(path()).expect("SQLite connection");
    configure(&mut conn).expect("pragmas");
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
