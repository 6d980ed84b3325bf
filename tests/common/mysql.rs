//! MySQL/MariaDB, at `MYSQL_DATABASE_URL`.
use std::sync::OnceLock;

use diesel::prelude::*;
use diesel::r2d2::{ConnectionManager, Pool};

pub type Conn = MysqlConnection;

fn url() -> Option<String> {
    static URL: OnceLock<Option<String>> = OnceLock::new();
    URL.get_or_init(|| super::server_url("MySQL/MariaDB", "MYSQL_DATABASE_URL"))
        .clone()
}

/// The shared pool, with the schema in place; `None` when MySQL/MariaDB is not configured.
pub fn pool() -> Option<Pool<ConnectionManager<Conn>>> {
    static POOL: OnceLock<Option<Pool<ConnectionManager<Conn>>>> = OnceLock::new();
    POOL.get_or_init(|| {
        let url = url()?;
        let pool = Pool::builder()
            .max_size(40)
            .build(ConnectionManager::new(url))
            .expect("MySQL pool");
        let conn = &mut pool.get().expect("MySQL connection");
        diesel::sql_query(super::jobs::MYSQL_DDL)
            .execute(conn)
            .expect("lease_jobs");
        diesel_lease::agent::run_migrations(conn).expect("agent migrations");
        Some(pool)
    })
    .clone()
}

/// A connection of its own, outside the pool (for session settings that must not leak).
pub fn connect() -> Conn {
    MysqlConnection::establish(&url().expect("MySQL is configured")).expect("MySQL connection")
}

/// A connection whose session time zone is far from UTC, at an odd offset.
pub fn connect_in_far_time_zone() -> Conn {
    let mut conn = connect();
    diesel::sql_query("SET time_zone = '+05:45'")
        .execute(&mut conn)
        .expect("SET time_zone");
    conn
}
