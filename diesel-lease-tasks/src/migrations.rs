//! The task locks' migrations, embedded per backend.
use diesel::backend::Backend;
use diesel::connection::Connection;
use diesel_migrations::{EmbeddedMigrations, MigrationHarness};

use super::Error;

/// A backend the task locks' migrations are written for.
///
/// ```
/// fn has_migrations<DB: diesel_lease_tasks::TaskMigrations>() {}
/// # #[cfg(feature = "sqlite")]
/// has_migrations::<diesel::sqlite::Sqlite>();
/// # #[cfg(feature = "postgres")]
/// # has_migrations::<diesel::pg::Pg>();
/// # #[cfg(feature = "mysql")]
/// # has_migrations::<diesel::mysql::Mysql>();
/// ```
pub trait TaskMigrations: Backend {
    /// This backend's migrations, from `migrations/<backend>` (also runnable with the
    /// diesel CLI).
    const MIGRATIONS: EmbeddedMigrations;
}

#[cfg(feature = "postgres")]
impl TaskMigrations for diesel::pg::Pg {
    const MIGRATIONS: EmbeddedMigrations =
        diesel_migrations::embed_migrations!("migrations/postgres");
}

#[cfg(feature = "mysql")]
impl TaskMigrations for diesel::mysql::Mysql {
    const MIGRATIONS: EmbeddedMigrations = diesel_migrations::embed_migrations!("migrations/mysql");
}

#[cfg(feature = "sqlite")]
impl TaskMigrations for diesel::sqlite::Sqlite {
    const MIGRATIONS: EmbeddedMigrations =
        diesel_migrations::embed_migrations!("migrations/sqlite");
}

/// Brings the table of task locks in `conn`'s database up to date. It leaves other migrations
/// alone (the agent's, an application's own), whose versions it does not know.
///
/// ```
/// # mod setup { include!("doctest_setup.rs"); }
/// # fn main() -> Result<(), diesel_lease_tasks::Error> {
/// use diesel::Connection;
///
/// # #[cfg(feature = "sqlite")]
/// let conn = &mut diesel::SqliteConnection::establish(":memory:").map_err(diesel_lease::Error::from)?;
/// # #[cfg(not(feature = "sqlite"))] let conn = &mut *setup::empty_connection()?;
/// diesel_lease_tasks::run_migrations(conn)?;
/// diesel_lease_tasks::run_migrations(conn)?; // nothing left to run
/// # Ok(())
/// # }
/// ```
pub fn run_migrations<C>(conn: &mut C) -> Result<(), Error>
where
    C: Connection + MigrationHarness<C::Backend>,
    C::Backend: TaskMigrations,
{
    conn.run_pending_migrations(<C::Backend as TaskMigrations>::MIGRATIONS)
        .map(drop)
        .map_err(Error::Migration)
}
