//! Scenario 9, a server that stops answering: every packet to and from the server's port
//! dropped for longer than the lease (a [`Partition`]) while 4 workers claim jobs, keep them
//! with a keeper and finish them, and a probe claim is kept beside them. Expected: every call
//! of the library returns, and on PostgreSQL within the bound docs/operations.md states for the
//! connection settings it documents; the keeper tells the work of the loss before the lease
//! runs out by the database's clock, and the work stops; once the packets flow again, no job
//! lost, none done twice, no takeover of a claim younger than the lease.
use crate::shared::lock;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use diesel_lease::prelude::*;
use diesel_lease::{Keepable, Keeper, KeeperSettings};

use crate::calls::Calls;
use crate::db::{self, fault_jobs, FaultConn, Kind, Pool, Witness};
use crate::fleet::error_kind;
use crate::partition::{KernelTcp, Partition};
use crate::report::{ahead_by, micros, millis, Outcome};
use crate::server::Server;

const JOBS: i64 = 120;
const WORKERS: usize = 4;
const BATCH: usize = 5;
/// Longer than the trust left at a cut, so that batches in flight then are told lost.
const WORK: Duration = Duration::from_millis(800);
const LEASE: Duration = Duration::from_secs(9);
const EVERY: Duration = Duration::from_secs(1);
/// Longer than the bound on a call, as docs/operations.md asks: work that waited the whole bound in a
/// call still returns before the lease runs out by the database's clock, and learns of the loss.
const MARGIN: Duration = Duration::from_secs(6);
/// Work before the partition, and the partition itself: longer than the lease.
const BEFORE: Duration = Duration::from_secs(2);
const PARTITION: Duration = Duration::from_secs(11);
const PATIENCE: Duration = Duration::from_secs(60);
/// The connection settings docs/operations.md gives for PostgreSQL ("Timeouts"), and the
/// bound it states for them: no call of the library takes longer.
pub(crate) const PG_SETTINGS: &str = "connect_timeout=1&tcp_user_timeout=1000&keepalives=1\
                           &keepalives_idle=1&keepalives_interval=1&keepalives_count=1";
const PG_BOUND: Duration = Duration::from_secs(5);
/// The documented bound on MySQL/MariaDB, for the kernel's settings of [`KernelTcp::MYSQL`].
const MYSQL_BOUND: Duration = Duration::from_secs(5);
const _: () =
    assert!(PG_BOUND.as_nanos() < MARGIN.as_nanos() && MYSQL_BOUND.as_nanos() < MARGIN.as_nanos());

fn lease() -> Lease {
    Lease::new(LEASE).expect("a valid lease")
}

pub fn run<C: FaultConn>(url: &str, outcome: &mut Outcome) -> Result<(), String>
where
    fault_jobs::table: Keepable<C>,
{
    match C::KIND {
        Kind::Sqlite => {
            outcome.not_run = Some("an embedded database: no server to stop answering");
            Ok(())
        }
        // A server of the scenario's own: the shared one's port stays open to the witness.
        Kind::Postgres => {
            let server = Server::start()?;
            outcome.figure(
                "server; connection settings",
                format!(
                    "a throwaway PostgreSQL, port {}; {PG_SETTINGS}; r2d2 connection_timeout 1 s",
                    server.port
                ),
            );
            partitioned::<C>(
                &format!("{}?{PG_SETTINGS}", server.url()),
                server.port,
                Some(PG_BOUND),
                outcome,
            )
        }
        Kind::Mysql => {
            let port = port_of(url).unwrap_or(3306);
            let _kernel = KernelTcp::set(&KernelTcp::MYSQL)?;
            outcome.figure(
                "server; connection settings",
                format!(
                    "the suite's MariaDB, port {port}; the kernel's {}; r2d2 connection_timeout 1 s",
                    KernelTcp::MYSQL
                        .iter()
                        .map(|(name, value)| format!("{name}={value}"))
                        .collect::<Vec<_>>()
                        .join(" ")
                ),
            );
            partitioned::<C>(url, port, Some(MYSQL_BOUND), outcome)
        }
    }
}

/// The calls, timed, and those that failed, by error.
#[derive(Default)]
struct Attempts {
    calls: Calls,
    errors: Mutex<BTreeMap<String, usize>>,
}

impl Attempts {
    /// Runs `call`, timed; `None` when it failed.
    fn timed<R>(
        &self,
        what: &'static str,
        call: impl FnOnce() -> Result<R, diesel_lease::Error>,
    ) -> Option<R> {
        self.calls
            .timed(what, call)
            .map_err(|error| *lock(&self.errors).entry(error_kind(&error)).or_default() += 1)
            .ok()
    }
}

/// What the workers did: batches whose loss the keeper told them, and finishes the token
/// guard refused.
#[derive(Default)]
struct Work {
    told_lost: AtomicUsize,
    stale: AtomicUsize,
    finished: AtomicUsize,
}

fn partitioned<C: FaultConn>(
    url: &str,
    port: u16,
    bound: Option<Duration>,
    outcome: &mut Outcome,
) -> Result<(), String>
where
    fault_jobs::table: Keepable<C>,
{
    // The moments the work was told and the partition began, stamped by the suite's
    // PostgreSQL at PG_DATABASE_URL (never partitioned); both servers read this machine's clock.
    let mut witness = Witness::connect()?;
    let pool = db::pool::<C>(url, (WORKERS + 2) as u32);
    {
        let conn = &mut *pool
            .get()
            .map_err(|e| format!("a connection to {url}: {e}"))?;
        db::execute(conn, &C::KIND.schema()).map_err(|e| format!("the schema: {e}"))?;
        conn.insert_jobs(JOBS)
            .map_err(|e| format!("the jobs: {e}"))?;
    }
    let settings = KeeperSettings::new(lease()).every(EVERY).margin(MARGIN);
    let keeper =
        Arc::new(Keeper::start(db::pool::<C>(url, 2), settings).map_err(|e| e.to_string())?);
    let probe_batch = pool
        .get()
        .map_err(|e| e.to_string())?
        .claim_jobs(1, lease(), "probe")
        .map_err(|e| format!("the probe's claim: {e}"))?;
    let probe = keeper
        .keep(probe_batch.held())
        .map_err(|e| format!("keeping the probe: {e}"))?;
    let calls = Arc::new(Attempts::default());
    let work = Arc::new(Work::default());
    let stop = Arc::new(AtomicBool::new(false));
    let workers: Vec<_> = (0..WORKERS)
        .map(|n| {
            let (pool, keeper, calls, work, stop) = (
                pool.clone(),
                Arc::clone(&keeper),
                Arc::clone(&calls),
                Arc::clone(&work),
                Arc::clone(&stop),
            );
            std::thread::spawn(move || {
                worker(&format!("w{n}"), &pool, &keeper, &calls, &work, &stop)
            })
        })
        .collect();

    std::thread::sleep(BEFORE);
    let cut_at = witness.micros()?;
    let mut partition = Partition::cut(port)?;
    let cut = crate::timer();
    while probe.is_held() && cut.elapsed() < PARTITION {
        std::thread::sleep(Duration::from_millis(1));
    }
    let told_at = witness.micros()?;
    let told_after = cut.elapsed();
    let loss = probe.check().err();
    std::thread::sleep(PARTITION.saturating_sub(cut.elapsed()));
    partition.heal()?;
    let healed = crate::timer();
    while healed.elapsed() < PATIENCE && open_jobs(&pool) != Some(0) {
        std::thread::sleep(Duration::from_millis(100));
    }
    stop.store(true, Ordering::SeqCst);
    for worker in workers {
        worker.join().map_err(|_| "a worker panicked")?;
    }
    drop(probe);

    // The probe's lease by the database's clock: from its last renewal before the cut (none
    // reached the server during it).
    let conn = &mut *pool.get().map_err(|e| e.to_string())?;
    let last_renewal = conn
        .number(&format!(
            "SELECT {} AS n FROM fault_claims WHERE tbl = 'fault_jobs' AND token = '{}'",
            C::KIND.epoch_micros("MAX(at)"),
            probe_batch.claim().token()
        ))
        .map_err(|e| format!("the probe's last renewal: {e}"))?
        .unwrap_or(0);
    let runs_out = last_renewal + micros(LEASE);
    outcome.figure(
        "lease; renewed every; trusted after a confirmed renewal for; packets dropped for",
        format!(
            "{}; {}; the lease less {}; {}",
            millis(LEASE),
            millis(EVERY),
            millis(MARGIN),
            millis(PARTITION)
        ),
    );
    outcome.figure(
        "the loss the work was told (the probe)",
        loss.as_ref().map_or("none".into(), |lost| {
            format!("{:?}, {} after the cut", lost.reason, millis(told_after))
        }),
    );
    outcome.figure(
        "told before the lease ran out by the database's clock (its last renewal + lease), by",
        ahead_by(runs_out - told_at),
    );
    outcome.check(loss.is_some() && told_at < runs_out, || {
        format!(
            "the loss was told {} before the lease ran out",
            ahead_by(runs_out - told_at)
        )
    });
    outcome.check(last_renewal < cut_at, || {
        "the probe's last renewal is dated after the cut: the partition let it through".into()
    });

    let slowest = calls.calls.longest();
    outcome.figure("longest call, by call", calls.calls.text());
    if let Some(bound) = bound {
        outcome.figure("the documented bound on a call", millis(bound));
        outcome.check(slowest <= bound, || {
            format!(
                "a call took {}, past the documented bound of {}",
                millis(slowest),
                millis(bound)
            )
        });
    }
    outcome.figure(
        "calls that failed, by error",
        lock(&calls.errors)
            .iter()
            .map(|(kind, count)| format!("{count} × {kind}"))
            .collect::<Vec<_>>()
            .join("; "),
    );
    let told_lost = work.told_lost.load(Ordering::SeqCst);
    outcome.figure(
        "batches whose loss the keeper told the work (left unfinished)",
        told_lost,
    );
    // Every worker holds a batch at the cut, and its finish fails until it is told.
    outcome.check(told_lost > 0, || {
        "no worker was told of a loss: the partition met no batch in flight".into()
    });
    outcome.figure(
        "batches finished; finishes refused by the token guard",
        format!(
            "{}; {}",
            work.finished.load(Ordering::SeqCst),
            work.stale.load(Ordering::SeqCst)
        ),
    );
    let (counts, takeovers) = crate::queue::final_counts(&pool, lease())?;
    outcome.figure("jobs lost (not done at the end)", counts.open);
    outcome.figure("jobs done twice (done_count > 1)", counts.twice);
    outcome.takeovers("", &takeovers, LEASE);
    outcome.check(counts.jobs == JOBS && counts.open == 0, || {
        format!("{} jobs of {JOBS}, {} not done", counts.jobs, counts.open)
    });
    outcome.check(counts.twice == 0, || {
        format!("{} jobs done twice", counts.twice)
    });
    Ok(())
}

/// A worker: claims a batch, has the keeper keep it, asks after each job whether the lease still
/// holds, and finishes the batch in one token-guarded release, until the suite says stop. A
/// batch whose loss it is told is left as it is, as the work must.
fn worker<C: FaultConn>(
    name: &str,
    pool: &Pool<C>,
    keeper: &Keeper<C>,
    calls: &Attempts,
    work: &Work,
    stop: &AtomicBool,
) where
    fault_jobs::table: Keepable<C>,
{
    let pause = || std::thread::sleep(Duration::from_millis(50));
    while !stop.load(Ordering::SeqCst) {
        let Some(batch) = calls.timed("claim", || pool.get()?.claim_jobs(BATCH, lease(), name))
        else {
            pause();
            continue;
        };
        if batch.is_empty() {
            pause();
            continue;
        }
        let Some(kept) = calls.timed("keep", || keeper.keep(batch.held())) else {
            continue;
        };
        let mut lost = batch.keys().iter().any(|_| {
            std::thread::sleep(WORK);
            kept.check().is_err()
        });
        // A finish that failed is tried again while the lease holds, as an application would.
        while !lost {
            if let Some(finished) = calls.timed("finish", || pool.get()?.finish_jobs(&batch)) {
                work.finished.fetch_add(1, Ordering::SeqCst);
                if finished.len() < batch.len() {
                    work.stale.fetch_add(1, Ordering::SeqCst);
                }
                break;
            }
            pause();
            lost = kept.check().is_err();
        }
        if lost {
            work.told_lost.fetch_add(1, Ordering::SeqCst);
        }
        // Renewed no more: finished, or left for its lease to free.
        drop(kept.stop_keeping());
    }
}

/// The port of a `mysql://user@host:port/db` URL.
fn port_of(url: &str) -> Option<u16> {
    let host = url.split('@').next_back()?.split('/').next()?;
    host.rsplit_once(':')?.1.parse().ok()
}

fn open_jobs<C: FaultConn>(pool: &Pool<C>) -> Option<i64> {
    pool.get().ok()?.open_jobs().ok()
}
