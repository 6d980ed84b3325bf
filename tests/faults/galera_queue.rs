//! Galera's queue (scenario 5, galera.rs): a worker thread per node, 500 jobs; one node
//! SIGKILLed mid-run and started again: no job lost or done twice, and the restarted node's
//! worker finishes jobs again.
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use diesel::MysqlConnection;

use crate::calls::Calls;
use crate::db::{self, FaultConn, Kind, Pool};
use crate::fleet;
use crate::galera_cluster::{Cluster, NODES};
use crate::queue;
use crate::report::{millis, Outcome};
use crate::shared::{errors_text, lock};

/// The node killed mid-run (not the one that bootstrapped the cluster).
const VICTIM: usize = 2;
const JOBS: i64 = 500;
/// The jobs the survivors leave while the victim is away, so that its worker has work to resume.
const RESERVE: i64 = 100;
const BATCH: usize = 5;
const WORK: Duration = Duration::from_millis(10);
/// The victim's work is slower, so that it dies holding a batch the others must take over.
const VICTIM_WORK: Duration = Duration::from_millis(60);
/// How long the restarted node's worker may take to finish a batch once its node is Synced.
const RESUME_WITHIN: Duration = Duration::from_secs(15);

/// What a worker thread of the queue saw.
#[derive(Debug, Default)]
struct NodeTally {
    errors: BTreeMap<String, u64>,
    finished: u64,
    stale: u64,
    /// Jobs finished once the node was back, and when the first of them was.
    finished_after_return: u64,
    first_after_return: Option<Instant>,
}

struct QueueShared {
    /// The survivors leave the last `RESERVE` jobs alone while this is set.
    hold_back: AtomicBool,
    /// Set once the victim is Synced again.
    victim_back: AtomicBool,
    /// Where the victim's worker is with its batch: decided under this lock, so that the node is
    /// killed only while the worker holds a batch it will not finish.
    victim: Mutex<VictimBatch>,
    stop: AtomicBool,
    calls: Arc<Calls>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum VictimBatch {
    /// Claiming, finishing, or between batches.
    Free,
    /// Holds a batch it claimed and has not begun to finish.
    Holding,
    /// Held a batch when its node was chosen to be killed: the worker leaves that batch
    /// unfinished, as a process that died would, for the survivors to take over.
    Doomed,
}

pub(crate) fn queue_with_a_node_killed(
    cluster: &mut Cluster,
    calls: &Arc<Calls>,
    outcome: &mut Outcome,
) -> Result<(), String> {
    let pool = cluster.pool(0, 2);
    {
        let conn = &mut *pool
            .get()
            .map_err(|e| format!("a connection to node 1: {e}"))?;
        db::execute(conn, &Kind::Mysql.schema()).map_err(|e| format!("the schema: {e}"))?;
        conn.insert_jobs(JOBS)
            .map_err(|e| format!("the jobs: {e}"))?;
    }
    cluster.settle(JOBS)?;
    let shared = Arc::new(QueueShared {
        hold_back: AtomicBool::new(true),
        victim_back: AtomicBool::new(false),
        victim: Mutex::new(VictimBatch::Free),
        stop: AtomicBool::new(false),
        calls: Arc::clone(calls),
    });
    let tallies: Vec<Arc<Mutex<NodeTally>>> = (0..NODES).map(|_| Arc::default()).collect();
    let workers: Vec<_> = (0..NODES)
        .map(|node| {
            let (url, shared, tally) = (
                cluster.url(node),
                Arc::clone(&shared),
                Arc::clone(&tallies[node]),
            );
            std::thread::spawn(move || queue_worker(&url, node, &shared, &tally))
        })
        .collect();
    let started = crate::timer();
    // The victim dies holding a batch, once a fifth of the queue is done (or after 5 s).
    while started.elapsed() < Duration::from_secs(5) && !doom_the_victim(&pool, &shared) {
        std::thread::sleep(Duration::from_millis(5));
    }
    let killed_at = crate::timer();
    cluster.kill(VICTIM)?;
    let evicted = cluster.wait_for_size(0, NODES - 1, Duration::from_secs(30));
    let evicted_in = killed_at.elapsed();
    let restarted_at = crate::timer();
    let back = evicted.and_then(|()| {
        cluster.start_node(VICTIM, false)?;
        cluster.wait_synced(VICTIM, Duration::from_secs(60))
    });
    let rejoined_in = restarted_at.elapsed();
    let back_at = crate::timer();
    shared.victim_back.store(true, Ordering::SeqCst);
    if let Err(error) = &back {
        outcome.fail(format!("the killed node did not come back: {error}"));
    }
    // The survivors go on with the reserve once the victim's worker has finished a batch.
    while back.is_ok()
        && back_at.elapsed() < RESUME_WITHIN
        && lock(&tallies[VICTIM]).first_after_return.is_none()
    {
        std::thread::sleep(Duration::from_millis(20));
    }
    shared.hold_back.store(false, Ordering::SeqCst);
    let drained = crate::timer();
    while drained.elapsed() < Duration::from_secs(60) && queue::jobs_open(&pool) {
        std::thread::sleep(Duration::from_millis(50));
    }
    shared.stop.store(true, Ordering::SeqCst);
    for worker in workers {
        if worker.join().is_err() {
            outcome.fail("a queue worker thread panicked".into());
        }
    }
    let tallies: Vec<NodeTally> = tallies
        .iter()
        .map(|tally| std::mem::take(&mut *lock(tally)))
        .collect();
    outcome.figure(
        "queue: jobs finished per node (said by the finishing release)",
        tallies
            .iter()
            .map(|tally| tally.finished.to_string())
            .collect::<Vec<_>>()
            .join(", "),
    );
    outcome.figure(
        &format!(
            "queue: node {} SIGKILLed; evicted by the others in; Synced again (IST) in",
            VICTIM + 1
        ),
        format!(
            "{:.1} s; {:.1} s",
            evicted_in.as_secs_f64(),
            rejoined_in.as_secs_f64()
        ),
    );
    let victim = &tallies[VICTIM];
    let resumed = victim
        .first_after_return
        .map(|at| at.duration_since(back_at));
    outcome.figure(
        "queue: the restarted node's worker, first batch finished after Synced; jobs finished after",
        format!(
            "{}; {}",
            resumed.map_or("none".into(), millis),
            victim.finished_after_return
        ),
    );
    outcome.check(back.is_err() || resumed.is_some(), || {
        format!(
            "work did not resume on the restarted node within {RESUME_WITHIN:?} of it being Synced"
        )
    });
    let mut errors: BTreeMap<String, u64> = BTreeMap::new();
    for (node, tally) in tallies.iter().enumerate() {
        for (kind, count) in &tally.errors {
            *errors
                .entry(format!("node {}: {kind}", node + 1))
                .or_default() += count;
        }
    }
    outcome.figure(
        "queue: worker errors, by node and kind (the victim's while it was away)",
        errors_text(&errors),
    );
    let tally = fleet::Tally {
        stale: tallies.iter().map(|tally| tally.stale).sum(),
        ..fleet::Tally::default()
    };
    // The final counts, read where every commit is visible.
    let synced = cluster.synced_pool(0);
    let mut figures = Outcome::new("");
    queue::verdict_of(&synced, &tally, true, JOBS, &mut figures);
    // The workers' errors are published above, by node.
    for (label, value) in figures.figures {
        if label != "worker errors, by kind" {
            outcome.figure(&format!("queue: {label}"), value);
        }
    }
    outcome.fail_all(figures.failures);
    Ok(())
}

fn queue_worker(url: &str, node: usize, shared: &QueueShared, tally: &Mutex<NodeTally>) {
    let pool = db::pool::<MysqlConnection>(url, 1);
    let name = format!("node-{}", node + 1);
    while !shared.stop.load(Ordering::SeqCst) {
        match queue_step(&pool, &name, node, shared, tally) {
            Ok(true) => {}
            Ok(false) => std::thread::sleep(Duration::from_millis(20)),
            Err((stage, error)) => {
                *lock(tally)
                    .errors
                    .entry(format!("{stage}: {}", fleet::error_kind(&error)))
                    .or_default() += 1;
                std::thread::sleep(Duration::from_millis(50));
            }
        }
    }
}

/// Whether the victim's node may be killed now: a fifth of the queue is done and the victim's
/// worker holds a batch, which it will then leave unfinished.
fn doom_the_victim(pool: &Pool<MysqlConnection>, shared: &QueueShared) -> bool {
    let a_fifth_done = pool
        .get()
        .ok()
        .and_then(|mut conn| conn.open_jobs().ok())
        .is_some_and(|open| open <= JOBS * 4 / 5);
    let mut victim = lock(&shared.victim);
    let doomed = a_fifth_done && *victim == VictimBatch::Holding;
    if doomed {
        *victim = VictimBatch::Doomed;
    }
    doomed
}

/// One batch: whether it worked on one.
fn queue_step(
    pool: &Pool<MysqlConnection>,
    name: &str,
    node: usize,
    shared: &QueueShared,
    tally: &Mutex<NodeTally>,
) -> Result<bool, (&'static str, diesel_lease::Error)> {
    let calls = &shared.calls;
    let conn = &mut calls
        .timed("checkout", || pool.get())
        .map_err(|e| ("checkout", e.into()))?;
    let open = |conn: &mut MysqlConnection| conn.open_jobs().map_err(|e| ("count", e.into()));
    if node != VICTIM && shared.hold_back.load(Ordering::SeqCst) && open(conn)? <= RESERVE {
        return Ok(false);
    }
    let batch = calls
        .timed("claim", || conn.claim_jobs(BATCH, queue::lease(), name))
        .map_err(|e| ("claim", e))?;
    if batch.is_empty() {
        return Ok(false);
    }
    let work = if node == VICTIM { VICTIM_WORK } else { WORK };
    if node == VICTIM {
        *lock(&shared.victim) = VictimBatch::Holding;
    }
    std::thread::sleep(work * batch.len() as u32);
    if node == VICTIM {
        let mut victim = lock(&shared.victim);
        let doomed = *victim == VictimBatch::Doomed;
        *victim = VictimBatch::Free;
        if doomed {
            return Ok(true);
        }
    }
    let finished = calls
        .timed("finish", || conn.finish_jobs(&batch))
        .map_err(|e| ("finish", e))?;
    let mut tally = lock(tally);
    tally.finished += finished.len() as u64;
    tally.stale += (batch.len() - finished.len()) as u64;
    if node == VICTIM && shared.victim_back.load(Ordering::SeqCst) && !finished.is_empty() {
        tally.finished_after_return += finished.len() as u64;
        tally.first_after_return.get_or_insert_with(crate::timer);
    }
    Ok(true)
}
