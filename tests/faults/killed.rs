//! Scenario 1, killed processes: 4 worker processes over the queue, one SIGKILLed every 0.5 s
//! and replaced. Counted in the database: no job lost, none done twice, and every takeover of
//! a claim at least a lease old by the database's clock.
use crate::db::FaultConn;
use crate::queue;
use crate::report::Outcome;

pub fn run<C: FaultConn>(url: &str, outcome: &mut Outcome) -> Result<(), String> {
    let tally = queue::with_kills::<C>(url, &[None; 4], outcome)?;
    outcome.check(tally.unexpected_errors() == 0, || {
        format!("worker errors: {}", tally.errors_text())
    });
    Ok(())
}
