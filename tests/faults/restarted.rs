//! Scenario 8, restarted nodes: 3 worker processes, each a node of its own name, over the queue
//! with a lease of an hour; one SIGKILLed every 0.5 s and started again under its name. Each new
//! life frees, at start-up, what its earlier life held (`held_by_earlier_lives_of`), so the queue
//! is finished in seconds, not an hour. Counted in the database: no job lost, none done twice,
//! jobs claimed again after a restart freed them, and no claim taken over (nothing outlived).
use std::process::ExitCode;
use std::time::Duration;

use diesel_lease::{Lease, Node};

use crate::db::{self, FaultConn};
use crate::fleet::{self, Fleet};
use crate::queue;
use crate::report::Outcome;

/// Longer than the scenario runs: a killed life's jobs come back only through its next life.
fn lease() -> Lease {
    Lease::from_secs(3_600).expect("a valid lease")
}

pub fn run<C: FaultConn>(url: &str, outcome: &mut Outcome) -> Result<(), String> {
    let pool = queue::prepare::<C>(url)?;
    let role = format!("{}:10", fleet::NODE);
    let mut fleet = Fleet::start(&role, C::KIND, url, &[None; 3])?;
    fleet.every(
        Duration::from_millis(500),
        30,
        |_| queue::jobs_open(&pool),
        Fleet::kill_one,
    )?;
    queue::wait_until_finished(&mut fleet, &pool);
    outcome.figure(
        "kills (SIGKILL), each node started again under its name",
        fleet.kills,
    );
    outcome.fail_all(std::mem::take(&mut fleet.failures));
    let tally = std::mem::take(&mut *fleet.tally.lock().unwrap_or_else(|e| e.into_inner()));
    outcome.figure(
        "jobs freed by a new life at start-up (said by the workers)",
        tally.freed,
    );
    outcome.figure("worker errors, by kind", tally.errors_text());
    let (counts, takeovers) = queue::final_counts(&pool, lease())
        .map_err(|error| format!("the final counts: {error}"))?;
    outcome.figure("jobs", counts.jobs);
    outcome.figure("claims of a job (fence increments)", counts.claims);
    outcome.figure("jobs lost (not done at the end)", counts.open);
    outcome.figure("jobs done twice (done_count > 1)", counts.twice);
    outcome.figure("claims taken over", takeovers.count);
    outcome.check(fleet.kills >= 5, || {
        format!("only {} kills: the queue ran out too soon", fleet.kills)
    });
    outcome.check(counts.open == 0, || {
        format!(
            "{} jobs not done: a killed life's jobs were not freed by its next life",
            counts.open
        )
    });
    outcome.check(counts.twice == 0, || {
        format!("{} jobs done twice", counts.twice)
    });
    outcome.check(counts.claims > counts.jobs, || {
        "no job was claimed again: no restart freed anything, so nothing was tested".into()
    });
    outcome.check(takeovers.count == 0, || {
        format!(
            "{} claims taken over: with a lease of an hour, only a release may free a job",
            takeovers.count
        )
    });
    outcome.check(tally.unexpected_errors() == 0, || {
        format!("worker errors: {}", tally.errors_text())
    });
    Ok(())
}

/// A node's worker: a new life of the node `name`, which first frees what its earlier lives held
/// (a life killed mid-batch), then works the queue as its owner, under a lease of an hour.
pub fn work<C: FaultConn>(url: &str, name: &str, role: &str) -> ExitCode {
    fleet::watch_stdin();
    let pool = db::pool::<C>(url, 1);
    let node = match Node::start(name) {
        Ok(node) => node,
        Err(error) => {
            eprintln!("faults: node {name}: {error}");
            return ExitCode::FAILURE;
        }
    };
    loop {
        let freed = pool
            .get()
            .map_err(diesel_lease::Error::from)
            .and_then(|mut conn| conn.free_earlier_lives(&node));
        match freed {
            Ok(freed) => {
                println!("freed {}", freed.len());
                break;
            }
            Err(error) => {
                println!("error {}", fleet::error_kind(&error));
                std::thread::sleep(Duration::from_millis(50));
            }
        }
    }
    queue::work_as(&pool, node.owner(), queue::work_time(role), lease())
}
