// A connection enum of Diesel's derive over PostgreSQL and SQLite, with diesel-lease's
// statements dispatched on it, and a pool of it.
#[allow(unused_imports)]
use diesel::r2d2::{ConnectionManager, Pool};

#[derive(diesel::MultiConnection)]
enum AnyConnection {
    Postgresql(diesel::PgConnection),
    Sqlite(diesel::SqliteConnection),
}

diesel_lease::multi_connection!(AnyConnection {
    Postgresql(diesel::PgConnection),
    Sqlite(diesel::SqliteConnection),
});
