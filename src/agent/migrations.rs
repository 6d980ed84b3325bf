//! The agent tables' migrations, embedded per backend.
use diesel::backend::Backend;
use diesel::connection::Connection;
use diesel_migrations::{EmbeddedMigrations, MigrationHarness};

use super::Error;

/// A backend the agent tables' migrations are written for.
///
/// ```
/// fn has_migrations<DB: diesel_lease::agent::AgentMigrations>() {}
/// has_migrations::<diesel::sqlite::Sqlite>();
/// ```
pub trait AgentMigrations: Backend {
    /// This backend's migrations, from `migrations/<backend>` (also runnable with the diesel CLI).
    const MIGRATIONS: EmbeddedMigrations;
}

#[cfg(feature = "postgres")]
impl AgentMigrations for diesel::pg::Pg {
    const MIGRATIONS: EmbeddedMigrations =
        diesel_migrations::embed_migrations!("migrations/postgres");
}

#[cfg(feature = "mysql")]
impl AgentMigrations for diesel::mysql::Mysql {
    const MIGRATIONS: EmbeddedMigrations = diesel_migrations::embed_migrations!("migrations/mysql");
}

#[cfg(feature = "sqlite")]
impl AgentMigrations for diesel::sqlite::Sqlite {
    const MIGRATIONS: EmbeddedMigrations =
        diesel_migrations::embed_migrations!("migrations/sqlite");
}

/// Brings the agent tables of `conn`'s database up to date.
///
/// ```
/// use diesel::Connection;
///
/// let conn = &mut diesel::SqliteConnection::establish(":memory:").map_err(diesel_lease::Error::from)?;
/// diesel_lease::agent::run_migrations(conn)?;
/// diesel_lease::agent::run_migrations(conn)?; // nothing left to run
/// # Ok::<(), diesel_lease::agent::Error>(())
/// ```
pub fn run_migrations<C>(conn: &mut C) -> Result<(), Error>
where
    C: Connection + MigrationHarness<C::Backend>,
    C::Backend: AgentMigrations,
{
    conn.run_pending_migrations(<C::Backend as AgentMigrations>::MIGRATIONS)
        .map(drop)
        .map_err(Error::Migration)
}
