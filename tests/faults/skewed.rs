//! Scenario 2, skewed clocks: scenario 1's workload with one worker an hour ahead (`faketime -f
//! +1h`) and one an hour behind (`-1h`) beside two on the machine's clock. The leases are the
//! database's: no takeover is early, no job lost or done twice. Not on SQLite, whose clock is
//! the clock of whichever process runs the statement.
use crate::db::{FaultConn, Kind};
use crate::queue;
use crate::report::Outcome;

/// The clocks of the 4 slots; a worker replaced after a kill keeps its slot's.
const SKEWS: [Option<&str>; 4] = [None, Some("+1h"), Some("-1h"), None];

pub fn run<C: FaultConn>(url: &str, outcome: &mut Outcome) -> Result<(), String> {
    if C::KIND == Kind::Sqlite {
        // SQLite's 'now' is read by the process that runs the statement: faketime moves the
        // database's clock with the worker's, and the trigger's record with it.
        outcome.not_run = Some("the database's clock is each process's own");
        return Ok(());
    }
    let tally = queue::with_kills::<C>(url, &SKEWS, outcome)?;
    let hours: Vec<String> = tally
        .clock_hours
        .iter()
        .map(|(h, n)| format!("{h:+} h: {n}"))
        .collect();
    outcome.figure(
        "workers' clock offsets from the database's",
        hours.join(", "),
    );
    outcome.check(
        tally.clock_hours.contains_key(&1) && tally.clock_hours.contains_key(&-1),
        || format!("faketime did not shift the workers' clocks: offsets {hours:?}"),
    );
    outcome.check(tally.unexpected_errors() == 0, || {
        format!("worker errors: {}", tally.errors_text())
    });
    Ok(())
}
