//! MySQL/MariaDB, at `MYSQL_DATABASE_URL`.
use std::sync::OnceLock;

use diesel::prelude::*;
use diesel::r2d2::{ConnectionManager, Pool};

pub type Conn = MysqlConnection;

fn url() -> Option<&'static str> {
    static URL: OnceLock<Option<String>> = OnceLock::new();
    URL.get_or_init(|| super::server_url("MySQL/MariaDB", "MYSQL_DATABASE_URL"))
        .as_deref()
}

/// The shared pool, with the schema in place; `None` when MySQL/MariaDB is not configured.
pub fn pool() -> Option<Pool<ConnectionManager<Conn>>> {
    static POOL: OnceLock<Option<Pool<ConnectionManager<Conn>>>> = OnceLock::new();
    POOL.get_or_init(|| {
        Some(super::shared_pool(
            url()?,
            None,
            &[super::jobs::MYSQL_DDL, native::DDL],
        ))
    })
    .clone()
}

/// A pool of its own with `size` connections.
pub fn pool_of(size: u32) -> Pool<ConnectionManager<Conn>> {
    pool();
    super::build_pool(url().expect("MySQL is configured"), size, None)
}

/// A connection of its own, outside any pool (for session settings that must not leak).
pub fn connect() -> Conn {
    MysqlConnection::establish(url().expect("MySQL is configured")).expect("MySQL connection")
}

/// A connection whose session time zone is far from UTC, at an odd offset.
pub fn connect_in_far_time_zone() -> Conn {
    let mut conn = connect();
    diesel::sql_query("SET time_zone = '+05:45'")
        .execute(&mut conn)
        .expect("SET time_zone");
    conn
}

/// A table whose `claimed_at` has this backend's own timestamp type rather than `UtcTimestamp`.
pub mod native {
    diesel::table! {
        use diesel::sql_types::*;

        native_jobs (id) {
            id -> Text,
            owner -> Nullable<Text>,
            claim_token -> Nullable<Text>,
            claimed_at -> Nullable<Datetime>,
        }
    }

    diesel_lease::claim_lease!(native_jobs);

    pub const DDL: &str = "CREATE TABLE IF NOT EXISTS native_jobs (id VARCHAR(64) PRIMARY KEY, owner VARCHAR(255), claim_token VARCHAR(255), claimed_at DATETIME(6))";
}
