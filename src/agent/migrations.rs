//! The agent tables' migrations, embedded per backend.
use diesel::backend::Backend;
use diesel::connection::Connection;
use diesel_migrations::{EmbeddedMigrations, MigrationHarness};

use crate::Error;

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

/// Brings the agent tables of `conn`'s database up to date.
///
/// ```
/// use diesel::Connection;
///
/// let conn = &mut diesel::SqliteConnection::establish(":memory:")?;
/// diesel_lease::agent::run_migrations(conn)?;
/// diesel_lease::agent::run_migrations(conn)?; // nothing left to run
/// # Ok::<(), diesel_lease::Error>(())
/// ```
pub fn run_migrations<C>(conn: &mut C) -> Result<(), Error>
where
    C: Connection + MigrationHarness<C::Backend>,
    C::Backend: AgentMigrations,
{
    conn.run_pending_migrations(<C::Backend as AgentMigrations>::MIGRATIONS)
        .map(drop)
        .map_err(|error| Error::Migration(error.to_string()))
}
