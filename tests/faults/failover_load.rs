//! The failover scenario's workload (failover.rs): worker threads claim batches through the
//! cluster's multi-host URL, have one keeper keep them, ask `check()` after each job and finish
//! each batch with the token-guarded release; what each holder was told (its claims with their
//! fences, its finishes, the losses the keeper told it) is kept in the order it was told, so
//! that the reckoning (failover_reckoning.rs) can hold it against what the new primary has.
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use diesel::prelude::*;
use diesel::PgConnection;
use diesel_lease::prelude::*;
use diesel_lease::{Keeper, KeeperSettings};

use crate::db::{self, fault_jobs, FaultConn, Kind, Pool, Witness};
use crate::fleet::error_kind;
use crate::shared::lock;

pub(crate) const JOBS: i64 = 400;
const WORKERS: usize = 4;
const BATCH: usize = 5;
const WORK: Duration = Duration::from_millis(30);
/// The lease, and the keeper's rounds and margin, as scenario 9's: the margin is above the
/// bound docs/operations.md states on a call with the cluster URL's settings (5 s).
pub(crate) const LEASE: Duration = Duration::from_secs(10);
pub(crate) const EVERY: Duration = Duration::from_secs(1);
pub(crate) const MARGIN: Duration = Duration::from_secs(6);

pub(crate) fn lease() -> Lease {
    Lease::new(LEASE).expect("a valid lease")
}

/// A claim as its holder was told it: its token, and each row's key and fence.
pub(crate) struct Told {
    pub(crate) token: String,
    pub(crate) rows: Vec<(i64, i64)>,
}

/// What the holders were told, each list in the order they were told it.
#[derive(Default)]
pub(crate) struct Acks {
    pub(crate) claims: Vec<Told>,
    /// A finish: the token, and the jobs it said it finished.
    pub(crate) finishes: Vec<(String, Vec<i64>)>,
    /// A loss the keeper told: the token, when (the witness's clock, µs), and why.
    pub(crate) losses: Vec<(String, i64, String)>,
    /// Finishes that changed fewer rows than the batch had (the token guard refused them).
    pub(crate) refused: usize,
    pub(crate) errors: BTreeMap<String, u64>,
}

/// The running workload: its pool, its keeper, its workers.
pub(crate) struct Load {
    pub(crate) pool: Pool<PgConnection>,
    pub(crate) keeper: Arc<Keeper<PgConnection>>,
    acks: Arc<Mutex<Acks>>,
    stop: Arc<AtomicBool>,
    workers: Vec<JoinHandle<()>>,
}

impl Load {
    /// The suite's tables made anew on the cluster's primary, with a log of the writes that
    /// finish a job (by the token the row had), and the workers started.
    pub(crate) fn start(url: &str) -> Result<Load, String> {
        let pool = db::pool::<PgConnection>(url, (WORKERS + 2) as u32);
        {
            let conn = &mut *pool.get().map_err(|e| format!("the cluster: {e}"))?;
            let mut schema = Kind::Postgres.schema();
            schema.extend(log_finishes());
            db::execute(conn, &schema).map_err(|e| format!("the schema: {e}"))?;
            conn.insert_jobs(JOBS)
                .map_err(|e| format!("the jobs: {e}"))?;
        }
        let settings = KeeperSettings::new(lease()).every(EVERY).margin(MARGIN);
        let keeper = Arc::new(
            Keeper::start(db::pool::<PgConnection>(url, 2), settings).map_err(|e| e.to_string())?,
        );
        let acks = Arc::new(Mutex::new(Acks::default()));
        let stop = Arc::new(AtomicBool::new(false));
        let workers = (0..WORKERS)
            .map(|n| {
                let (pool, keeper, acks, stop) = (
                    pool.clone(),
                    Arc::clone(&keeper),
                    Arc::clone(&acks),
                    Arc::clone(&stop),
                );
                std::thread::spawn(move || worker(&format!("w{n}"), &pool, &keeper, &acks, &stop))
            })
            .collect();
        Ok(Load {
            pool,
            keeper,
            acks,
            stop,
            workers,
        })
    }

    /// Waits until the queue is done (or `patience` passes), stops the workers, and gives what
    /// they were told.
    pub(crate) fn finish(self, patience: Duration) -> Result<Acks, String> {
        let started = crate::timer();
        while started.elapsed() < patience
            && self.pool.get().ok().and_then(|mut c| c.open_jobs().ok()) != Some(0)
        {
            std::thread::sleep(Duration::from_millis(100));
        }
        self.stop.store(true, Ordering::SeqCst);
        for worker in self.workers {
            worker.join().map_err(|_| "a worker panicked")?;
        }
        let acks = std::mem::take(&mut *lock(&self.acks));
        Ok(acks)
    }
}

/// A trigger that logs each write finishing a job (a change of `done_count`) with the token
/// the row had before it and the token of the holder that sent it (a setting of its
/// transaction's): which holder's write landed, and on whose row, by the database's record.
fn log_finishes() -> Vec<String> {
    vec![
        "DROP TABLE IF EXISTS failover_writes".into(),
        "CREATE TABLE failover_writes (row_id BIGINT NOT NULL, token TEXT, writer TEXT)".into(),
        "CREATE OR REPLACE FUNCTION failover_log_write() RETURNS trigger LANGUAGE plpgsql AS $$ \
         BEGIN IF NEW.done_count <> OLD.done_count THEN \
         INSERT INTO failover_writes VALUES \
         (OLD.id, OLD.lease_token, current_setting('faults.writer', true)); \
         END IF; RETURN NEW; END $$"
            .into(),
        "CREATE TRIGGER failover_log_write BEFORE UPDATE ON fault_jobs FOR EACH ROW \
         EXECUTE FUNCTION failover_log_write()"
            .into(),
    ]
}

/// A worker: claims a batch, has the keeper keep it, checks the lease after each job, and
/// finishes the batch (tried again while the lease holds), until told to stop. A batch whose
/// loss it is told is left for its lease to free, as the work must.
fn worker(
    name: &str,
    pool: &Pool<PgConnection>,
    keeper: &Keeper<PgConnection>,
    acks: &Mutex<Acks>,
    stop: &AtomicBool,
) {
    let mut witness = Witness::connect().expect("the witness");
    let pause = || std::thread::sleep(Duration::from_millis(50));
    let failed = |error: &diesel_lease::Error| {
        *lock(acks).errors.entry(error_kind(error)).or_default() += 1;
    };
    while !stop.load(Ordering::SeqCst) {
        let batch = match pool.get() {
            Ok(mut conn) => conn.claim_jobs(BATCH, lease(), name),
            Err(error) => Err(diesel_lease::Error::from(error)),
        };
        let batch = match batch {
            Ok(batch) if !batch.is_empty() => batch,
            Ok(_) => {
                pause();
                continue;
            }
            Err(error) => {
                failed(&error);
                pause();
                continue;
            }
        };
        let token = batch.claim().token().to_string();
        lock(acks).claims.push(Told {
            token: token.clone(),
            rows: batch.keys().iter().copied().zip(batch.fences()).collect(),
        });
        let kept = match keeper.keep(batch.held()) {
            Ok(kept) => kept,
            Err(error) => {
                failed(&error);
                continue;
            }
        };
        let mut lost = batch.keys().iter().any(|_| {
            std::thread::sleep(WORK);
            kept.check().is_err()
        });
        while !lost {
            let finished = match pool.get() {
                Ok(mut conn) => finish_as(&mut conn, &token, &batch),
                Err(error) => Err(diesel_lease::Error::from(error)),
            };
            match finished {
                Ok(finished) => {
                    let mut acks = lock(acks);
                    acks.refused += usize::from(finished.len() < batch.len());
                    acks.finishes.push((token.clone(), finished));
                    break;
                }
                Err(error) => failed(&error),
            }
            pause();
            lost = kept.check().is_err();
        }
        if let Err(loss) = kept.check() {
            if lost {
                let at = witness.micros().unwrap_or(0);
                lock(acks)
                    .losses
                    .push((token, at, format!("{:?}", loss.reason)));
            }
        }
        drop(kept.stop_keeping());
    }
}

/// The token-guarded finish, in a transaction that names its writer for the log of writes.
fn finish_as(
    conn: &mut PgConnection,
    token: &str,
    batch: &Batch<i64, fault_jobs::table>,
) -> Result<Vec<i64>, diesel_lease::Error> {
    conn.transaction(|conn| {
        diesel::sql_query("SELECT set_config('faults.writer', $1, true)")
            .bind::<diesel::sql_types::Text, _>(token)
            .execute(conn)?;
        conn.finish_jobs(batch)
    })
}
