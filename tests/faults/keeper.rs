//! Scenario 6, the keeper under faults: a `Keeper` renewing claims on `fault_jobs` (lease 2 s,
//! renewed every 200 ms, trusted for the lease less 500 ms after each confirmed renewal) while
//! (a) its connection is killed (PostgreSQL, MariaDB), (b) the server is stopped for longer than
//! the lease, then restarted quickly (a throwaway PostgreSQL, `-m fast`), and (c) its rows are taken by
//! another token written by SQL (all three). Every outcome that matters is read from the
//! database: the renewals and the takeover from the triggers' log, and each write of the work
//! from a trigger of its own.
//!
//! Its parts are files of their own: (a) keeper_killed.rs, (b) keeper_stopped.rs and (c)
//! keeper_taken.rs, on the tables, claims and settings of keeper_setup.rs (which the drops
//! scenario uses too).
use diesel_lease::Keepable;

use crate::db::{fault_jobs, FaultConn, Kind};
use crate::keeper_killed::connection_killed;
use crate::keeper_setup::{prepare, EVERY, LEASE, MARGIN};
use crate::keeper_stopped::server_stopped;
use crate::keeper_taken::taken_out_of_band;
use crate::report::{millis, Outcome};

pub fn run<C: FaultConn>(url: &str, outcome: &mut Outcome) -> Result<(), String>
where
    fault_jobs::table: Keepable<C>,
{
    let pool = prepare::<C>(url)?;
    outcome.figure(
        "lease; renewed every; trusted after a confirmed renewal for",
        format!(
            "{}; {}; the lease less {}",
            millis(LEASE),
            millis(EVERY),
            millis(MARGIN)
        ),
    );
    if C::KIND == Kind::Sqlite {
        outcome.figure(
            "(a) connection killed: kills; connections the keeper's pool opened",
            "— (no server connection)",
        );
    } else {
        connection_killed::<C>(url, &pool, outcome)?;
    }
    taken_out_of_band::<C>(url, &pool, outcome)?;
    if C::KIND == Kind::Postgres {
        server_stopped(outcome)?;
    } else {
        outcome.figure(
            "(b) server stopped for longer than the lease: the loss the work was told",
            "— (a throwaway PostgreSQL)",
        );
    }
    Ok(())
}
