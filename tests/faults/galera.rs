//! Scenario 5, Galera: a 3-node MariaDB Galera cluster of the suite's own on loopback (a data
//! folder per node under the temporary directory, its own ports), started for the scenario and
//! killed after it.
//!
//! - The queue, a worker thread per node, 500 jobs; one node SIGKILLed mid-run and started
//!   again: no job lost or done twice, and the restarted node's worker finishes jobs again.
//! - Contention on 20 rows: 2 threads per node claiming rows (one by key, or two in a batch),
//!   holding them a moment and releasing them. A claim that loses certification is "not
//!   claimed": every claim is answered, none returns an error, and no row ever has two holders.
//! - `wsrep_sync_wait`: a claim made on one node, read at once on another, with and without it.
//!
//! Its parts are files of their own: the queue (galera_queue.rs), the contention
//! (galera_contention.rs) and `wsrep_sync_wait` (galera_sync_wait.rs), on the cluster of
//! galera_cluster.rs.
use std::sync::Arc;
use std::time::Duration;

use crate::calls::Calls;
use crate::galera_cluster::Cluster;
use crate::galera_contention::contention;
use crate::galera_queue::queue_with_a_node_killed;
use crate::galera_sync_wait::sync_wait;
use crate::report::{millis, Outcome};

/// The bound docs/operations.md states on a call on a Galera cluster ("Timeouts"): a node
/// that dies stalls the others' commits until the group evicts it (`evs.inactive_timeout`, 4 s
/// here), and a statement waits on a row lock at most `innodb_lock_wait_timeout` (set to 5 s).
const GALERA_BOUND: Duration = Duration::from_secs(10);

pub fn run(outcome: &mut Outcome) -> Result<(), String> {
    outcome.backend = "MariaDB Galera, 3 nodes";
    let mut cluster = Cluster::start()?;
    outcome.figure(
        "cluster",
        format!(
            "{}, nodes on ports {}, all Synced {:.1} s after the first started",
            cluster.version,
            cluster
                .nodes
                .iter()
                .map(|node| node.port.to_string())
                .collect::<Vec<_>>()
                .join(", "),
            cluster.ready_in.as_secs_f64()
        ),
    );
    let calls = Arc::new(Calls::default());
    queue_with_a_node_killed(&mut cluster, &calls, outcome)?;
    contention(&cluster, &calls, outcome)?;
    sync_wait(&cluster, outcome)?;
    outcome.figure(
        "longest call, by call (the workers' and contenders')",
        calls.text(),
    );
    outcome.figure(
        "the documented bound on a call on a Galera cluster",
        millis(GALERA_BOUND),
    );
    outcome.check(calls.longest() <= GALERA_BOUND, || {
        format!(
            "a call took {}, past the documented bound of {}",
            millis(calls.longest()),
            millis(GALERA_BOUND)
        )
    });
    Ok(())
}
