//! SQLite, on a temporary file so that separate connections see each other's commits.
use std::path::PathBuf;
use std::sync::OnceLock;

use diesel::connection::SimpleConnection;
use diesel::prelude::*;
use diesel::r2d2::{ConnectionManager, CustomizeConnection, Pool};

pub type Conn = SqliteConnection;

fn path() -> &'static PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        std::env::temp_dir().join(format!("{}.db", super::unique_id("diesel-lease-test")))
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
            let url = path().to_string_lossy().into_owned();
            let pool = Pool::builder()
                .max_size(40)
                .connection_customizer(Box::new(Pragmas))
                .build(ConnectionManager::new(url))
                .expect("SQLite pool");
            let conn = &mut pool.get().expect("SQLite connection");
            diesel::sql_query(super::jobs::SQLITE_DDL)
                .execute(conn)
                .expect("lease_jobs");
            diesel_lease::agent::run_migrations(conn).expect("agent migrations");
            pool
        })
        .clone(),
    )
}

/// A connection of its own, outside the pool.
pub fn connect() -> Conn {
    pool();
    let mut conn =
        SqliteConnection::establish(&path().to_string_lossy()).expect("SQLite connection");
    configure(&mut conn).expect("pragmas");
    conn
}

/// SQLite has no session time zone: its `'now'` is always UTC, whatever the process's `TZ`.
pub fn connect_in_far_time_zone() -> Conn {
    connect()
}
