//! A connection enum of Diesel's `#[derive(MultiConnection)]` over the three backends, on which
//! diesel-lease's statements run through `diesel_lease::multi_connection!`.
use diesel::r2d2::{ConnectionManager, CustomizeConnection, Pool};

#[derive(diesel::MultiConnection)]
pub enum AnyConnection {
    Postgresql(diesel::PgConnection),
    Mysql(diesel::MysqlConnection),
    Sqlite(diesel::SqliteConnection),
}

diesel_lease::multi_connection!(AnyConnection {
    Postgresql(diesel::PgConnection),
    Mysql(diesel::MysqlConnection),
    Sqlite(diesel::SqliteConnection),
});

diesel_lease_agent::agent_multi_connection!(AnyConnection {
    Postgresql(diesel::PgConnection),
    Mysql(diesel::MysqlConnection),
    Sqlite(diesel::SqliteConnection),
});

/// What a SQLite connection of the enum needs, as the suite's own SQLite pools have it: WAL,
/// and a writer waited for.
#[derive(Debug)]
struct SqlitePragmasInside;

impl CustomizeConnection<AnyConnection, diesel::r2d2::Error> for SqlitePragmasInside {
    fn on_acquire(&self, conn: &mut AnyConnection) -> Result<(), diesel::r2d2::Error> {
        match conn {
            AnyConnection::Sqlite(conn) => diesel_lease::sqlite::SqlitePragmas::default()
                .busy_timeout(std::time::Duration::from_secs(30))
                .apply(conn)
                .map_err(diesel::r2d2::Error::QueryError),
            _ => Ok(()),
        }
    }
}

/// A pool of `size` enum connections to `url`: the enum picks its backend by the URL.
pub fn pool(url: &str, size: u32) -> Pool<ConnectionManager<AnyConnection>> {
    Pool::builder()
        .max_size(size)
        .min_idle(Some(0))
        .connection_timeout(std::time::Duration::from_secs(30))
        .connection_customizer(Box::new(SqlitePragmasInside))
        .build(ConnectionManager::new(url))
        .expect("a pool of enum connections")
}
