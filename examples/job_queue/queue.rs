//! The queue's code, written once, generic over the connection: each statement it runs is one
//! bound on `C`, named by its type.
use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use diesel::dsl::auto_type;
use diesel::dsl::update;
use diesel::prelude::*;
use diesel::query_dsl::methods::ExecuteDsl;
use diesel::query_dsl::LoadQuery;
use diesel::r2d2::{ConnectionManager, Pool};
use diesel_lease::backend::LeaseBackend;
use diesel_lease::prelude::*;
use diesel_lease::sql_types::UtcTimestamp;
use diesel_lease::{dsl, Keepable, LeaseColumns, LossReason};

use super::example_jobs;
use super::support::{millis_since, timeline_start, Pooled};

const JOBS: i64 = 24;
pub const WORKERS: usize = 4;
const BATCH: usize = 3;

/// A whole row, as the claim gives it back.
#[derive(Debug, Queryable)]
#[allow(dead_code)] // the lease columns are read, not used
pub struct Job {
    id: i64,
    payload: String,
    status: String,
    due_at: chrono::DateTime<chrono::Utc>,
    attempts: i32,
    completed_by: Option<String>,
    owner: Option<String>,
    claim_token: Option<String>,
    claimed_at: Option<chrono::DateTime<chrono::Utc>>,
}

// The queue's statements, each a function whose type `auto_type` names after it, as Diesel's
// own are: the queue's code bounds each by that name, once.

/// A job not done whose time has come, by the database's clock.
#[auto_type(dsl_path = "diesel_lease::dsl")]
fn due_now() -> _ {
    let now: dsl::Now<UtcTimestamp> = now();
    example_jobs::status
        .ne("done")
        .and(example_jobs::due_at.le(now))
}

/// A worker's claim of the next due jobs, in id order, started: one attempt more.
#[auto_type(dsl_path = "diesel_lease::dsl")]
fn claim_next<'a>(size: usize, lease: Lease, worker: &'a Claim) -> _ {
    let one: i32 = 1;
    example_jobs::table
        .claim_batch(size, lease)
        .by(worker)
        .filter(due_now())
        .order_by(example_jobs::id)
        .set((
            example_jobs::status.eq("running"),
            example_jobs::attempts.eq(example_jobs::attempts + one),
        ))
}

/// What a finished job gets in the statement that releases it.
#[auto_type]
fn finished(by: String) -> _ {
    (
        example_jobs::status.eq("done"),
        example_jobs::completed_by.eq(by),
    )
}

/// An operator frees a held job, whoever holds it: the lease columns' changeset in Diesel's
/// own `UPDATE`.
#[auto_type(dsl_path = "diesel_lease::dsl")]
fn free(id: i64) -> _ {
    let held = example_jobs::table
        .find(id)
        .filter(example_jobs::claim_token.is_not_null());
    update(held).set((
        example_jobs::table.released(),
        example_jobs::status.eq("queued"),
    ))
}

/// The jobs not done yet.
#[auto_type]
fn count_open() -> _ {
    example_jobs::table
        .filter(example_jobs::status.ne("done"))
        .count()
}

/// What each job ended as.
#[auto_type]
fn report_rows() -> _ {
    example_jobs::table
        .select((
            example_jobs::id,
            example_jobs::status,
            example_jobs::attempts,
            example_jobs::completed_by,
        ))
        .order(example_jobs::id)
}

/// Who completed each job; a job in here twice was done twice.
type Completions = Mutex<BTreeMap<i64, Vec<String>>>;

/// The queue on connections `C`.
pub struct Queue<C: Pooled> {
    pool: Pool<ConnectionManager<C>>,
    start: Instant,
    completions: Completions,
}

impl<C> Queue<C>
where
    C: Pooled,
    C::Backend: LeaseBackend,
    example_jobs::table: Keepable<C>,
    for<'a, 'q> claim_next<'a>: LeaseQuery<'q, C, Job>,
    dsl::Release<HeldRows<example_jobs::table>, finished>: for<'q> LeaseQuery<'q, C, i64>,
    free: ExecuteDsl<C>,
    diesel::query_builder::SqlQuery: ExecuteDsl<C>,
    count_open: for<'q> LoadQuery<'q, C, i64>,
    report_rows: for<'q> LoadQuery<'q, C, (i64, String, i32, Option<String>)>,
{
    /// Fills the queue (`ddl` creates the table without its lease columns), runs the workers and
    /// the operator, and reports: whether every job was completed exactly once.
    pub fn run(
        pool: Pool<ConnectionManager<C>>,
        ddl: &[&str],
    ) -> Result<bool, diesel_lease::Error> {
        let queue = Self {
            pool,
            start: timeline_start(),
            completions: Completions::default(),
        };
        let conn = &mut *queue.pool.get()?;
        for statement in ddl {
            diesel::sql_query(*statement).execute(conn)?;
        }
        // The lease columns, typed and indexed for this backend, as a migration would add them.
        conn.batch_execute(&LeaseColumns::new("example_jobs").up_sql::<C::Backend>()?)?;
        let jobs: Vec<String> = (1..=JOBS)
            .map(|id| format!("({id}, 'resize image {id}', 'queued')"))
            .collect();
        let insert = format!(
            "INSERT INTO example_jobs (id, payload, status) VALUES {}",
            jobs.join(", ")
        );
        diesel::sql_query(insert).execute(conn)?;

        let lease = Lease::from_millis(800)?;
        // Renews every kept batch every 200 ms; trusts a lease 200 ms less than it runs.
        let keeper = Keeper::start(
            queue.pool.clone(),
            KeeperSettings::new(lease)
                .every(Duration::from_millis(200))
                .margin(Duration::from_millis(200)),
        )?;
        std::thread::scope(|scope| -> Result<(), diesel_lease::Error> {
            let workers: Vec<_> = (0..WORKERS)
                .map(|n| {
                    let (queue, keeper) = (&queue, &keeper);
                    scope.spawn(move || queue.work(keeper, &format!("worker-{n}"), n == 0, lease))
                })
                .collect();
            scope.spawn(|| queue.operator_frees_a_job());
            for worker in workers {
                worker.join().expect("a worker thread panicked")?;
            }
            Ok(())
        })?;
        // What the keeper did, for operators: rounds, how late, rows renewed and lost by reason.
        println!("keeper: {}", keeper.stats());
        let completions =
            std::mem::take(&mut *queue.completions.lock().unwrap_or_else(|e| e.into_inner()));
        report(conn, &completions)
    }

    /// An operator frees the last job of the queue while a worker holds it (say, to move it to
    /// another machine): the worker's keeper notices at its next renewal, and the worker drops it.
    fn operator_frees_a_job(&self) -> Result<(), diesel_lease::Error> {
        for _ in 0..3_000 {
            let conn = &mut *self.pool.get()?;
            let freed = free(JOBS).execute(conn)?;
            if freed == 1 {
                println!(
                    "{:>5} ms  operator frees job {JOBS} from its worker",
                    millis_since(self.start)
                );
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        Ok(())
    }

    /// Claims due jobs, a batch at a time, until none is left, keeping each batch's lease while it
    /// works; a worker that `dies` stops holding its first batch.
    fn work(
        &self,
        keeper: &Keeper<C>,
        name: &str,
        dies: bool,
        lease: Lease,
    ) -> Result<(), diesel_lease::Error> {
        let conn = &mut *self.pool.get()?;
        loop {
            // One statement picks the next due jobs and claims them: no read proposes ids first.
            let batch = claim_next(BATCH, lease, &Claim::new(name)?).run::<Job>(conn)?;
            if batch.is_empty() {
                let open: i64 = count_open().get_result(conn)?;
                if open == 0 {
                    return Ok(());
                }
                // Some job is held by a worker that may be dead: wait for its lease, by the database's clock.
                std::thread::sleep(Duration::from_millis(50));
                continue;
            }
            let ids = batch.keys().to_vec();
            println!(
                "{:>5} ms  {name} claimed jobs {ids:?} (attempts {:?})",
                millis_since(self.start),
                batch
                    .rows()
                    .iter()
                    .map(|job| job.attempts)
                    .collect::<Vec<_>>()
            );
            if dies {
                println!(
                    "{:>5} ms  {name} dies holding jobs {ids:?}",
                    millis_since(self.start)
                );
                return Ok(());
            }
            let kept = keeper.keep(batch.held())?;
            let mut worked = Vec::new();
            for id in &ids {
                // Before each job's effect: is it still ours? The keeper knows without a statement,
                // and a loss names the jobs lost.
                if let Err(lost) = kept.check() {
                    if lost.rows.contains(id) {
                        println!(
                            "{:>5} ms  {name} lost job {id} ({}): stops working on it",
                            millis_since(self.start),
                            lost.reason
                        );
                        continue;
                    }
                }
                std::thread::sleep(Duration::from_millis(40 + (*id as u64 * 7) % 40)); // the work
                worked.push(*id);
            }
            let finish = finished(name.to_owned());
            // One guarded statement finishes the jobs worked and says which were still ours.
            // A take-over drops the jobs it took from those kept, so the kept claim holds only
            // jobs worked; a lease lost otherwise (no renewal confirmed in time) leaves jobs
            // kept that were not worked, which must not be marked done: those go back as they
            // are when the handle drops.
            let taken_over = match kept.check() {
                Err(lost) if lost.reason == LossReason::TakenOver => lost.rows,
                _ => Vec::new(),
            };
            let all_worked = kept
                .held()
                .keys()
                .iter()
                .all(|id| worked.contains(id) || taken_over.contains(id));
            let completed = if all_worked {
                kept.release().set(finish).run(conn)?
            } else {
                let held = example_jobs::table.held_rows(kept.claim(), worked.clone());
                held.release().set(finish).run(conn)?
            };
            drop(kept);
            let mut done = self.completions.lock().unwrap_or_else(|e| e.into_inner());
            for id in &completed {
                done.entry(*id).or_default().push(name.to_owned());
            }
            drop(done);
            println!(
                "{:>5} ms  {name} completed jobs {completed:?}",
                millis_since(self.start)
            );
            let lost: Vec<&i64> = worked.iter().filter(|id| !completed.contains(id)).collect();
            if !lost.is_empty() {
                println!(
                    "{:>5} ms  {name} lost jobs {lost:?} to a newer claim: their results are dropped",
                    millis_since(self.start)
                );
            }
        }
    }
}

fn report<C>(
    conn: &mut C,
    completions: &BTreeMap<i64, Vec<String>>,
) -> Result<bool, diesel_lease::Error>
where
    C: Connection,
    report_rows: for<'q> LoadQuery<'q, C, (i64, String, i32, Option<String>)>,
{
    let rows: Vec<(i64, String, i32, Option<String>)> = report_rows().load(conn)?;
    let mut broken = 0;
    for (id, status, attempts, completed_by) in &rows {
        let done_by = completions.get(id).map(Vec::as_slice).unwrap_or_default();
        if status != "done" || done_by.len() != 1 {
            broken += 1;
            println!(
                "BROKEN  job {id}: status {status}, completed {} times {done_by:?}",
                done_by.len()
            );
        } else if *attempts > 1 {
            println!(
                "reclaimed job {id}: {attempts} attempts, completed once, by {}",
                completed_by.as_deref().unwrap_or("?")
            );
        }
    }
    let ok = broken == 0;
    println!(
        "{} jobs, {} completed exactly once, {broken} lost or done twice: {}",
        rows.len(),
        rows.len() - broken,
        if ok { "OK" } else { "BROKEN" }
    );
    Ok(ok)
}
