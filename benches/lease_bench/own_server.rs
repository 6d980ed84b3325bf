//! Measurements 14 to 16, and 11 a second time, run on a PostgreSQL of their own: the suite's
//! server runs with `autovacuum = off` (the CI image's `conf.d/90-ci.conf`), which would make
//! churn and bloat look worse than a server with the default settings shows them. A throwaway server (initdb
//! into a temporary folder, the fault suite's `Server`), started for them and removed after.
use diesel::prelude::*;
use diesel::sql_types::Text;

use crate::backend::Pg;
use crate::results::Results;
use crate::shared::{Options, Res};
use crate::suite::OWN_SERVER;
use crate::{churn, growth, writes};

#[path = "../../tests/faults/server.rs"]
mod server;

/// Runs measurements 11 and 14 to 16, those that `options` asks for, on a server of their own; a
/// machine without PostgreSQL's server programs skips them with a note.
pub fn run(options: &Options, results: &mut Results) -> Res<()> {
    let server = match server::Server::start() {
        Ok(server) => server,
        Err(error) => {
            results.note(format!(
                "Measurements {} and {} to {} on a server of their own skipped: no throwaway PostgreSQL: {error}",
                growth::SECTION,
                churn::SECTION,
                writes::SECTION
            ));
            return Ok(());
        }
    };
    let url = server.url();
    let settings = settings(&url)?;
    results.note(format!(
        "{OWN_SERVER}: measurements {} (again) and {} to {} ran on a throwaway PostgreSQL ({}, port \
         {}) with the settings of a fresh initdb: {settings}",
        growth::SECTION,
        churn::SECTION,
        writes::SECTION,
        server.bin.display(),
        server.port
    ));
    if options.runs(growth::SECTION) {
        growth::run_on::<Pg>(&url, OWN_SERVER, &options.plan, results)?;
    }
    if options.runs(churn::SECTION) || options.runs(churn::HORIZON) {
        churn::run(&url, options, results)?;
    }
    if options.runs(writes::SECTION) {
        writes::run(&url, &options.plan, results)?;
    }
    Ok(())
}

#[derive(QueryableByName)]
struct Setting {
    #[diesel(sql_type = Text)]
    value: String,
}

/// The settings that churn depends on, as the server reports them.
fn settings(url: &str) -> Res<String> {
    let conn = &mut PgConnection::establish(url)?;
    let setting = diesel::sql_query(
        "SELECT string_agg(name || ' = ' || setting || COALESCE(unit, ''), ', ' ORDER BY name) \
         AS value FROM pg_settings WHERE name IN ('autovacuum', 'autovacuum_naptime', \
         'autovacuum_vacuum_scale_factor', 'autovacuum_vacuum_threshold', \
         'autovacuum_vacuum_cost_limit', 'shared_buffers', 'synchronous_commit', 'fsync', \
         'max_wal_size')",
    )
    .get_result::<Setting>(conn)?;
    Ok(setting.value)
}
