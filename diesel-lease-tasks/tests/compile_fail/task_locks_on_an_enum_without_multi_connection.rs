use diesel::r2d2::{ConnectionManager, Pool};
use diesel_lease_tasks::TaskLocks;
use diesel_lease::Lease;

// The task locks run on a connection enum of Diesel's derive once
// `diesel_lease::multi_connection!` says which connection each variant holds.
#[derive(diesel::MultiConnection)]
enum AnyConnection {
    Postgresql(diesel::PgConnection),
    Sqlite(diesel::SqliteConnection),
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let pool = Pool::builder().build(ConnectionManager::<AnyConnection>::new(":memory:"))?;
    let _locks = TaskLocks::new(pool, "node-a", Lease::from_secs(30)?)?;
    Ok(())
}
