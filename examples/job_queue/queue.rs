// The queue's code, written once and included per backend by main.rs with `Conn` set.
use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use diesel::connection::SimpleConnection;
use diesel::prelude::*;
use diesel::r2d2::{ConnectionManager, Pool};
use diesel_lease::prelude::*;
use diesel_lease::{Error, Keeper, KeeperSettings, LeaseColumns, Now};

use super::example_jobs;
use super::support::{millis_since, pool, timeline_start};

const JOBS: i64 = 24;
const WORKERS: usize = 4;
const BATCH: usize = 3;

/// A whole row, as the claim gives it back.
#[derive(Debug, Queryable)]
#[allow(dead_code)] // the lease columns are read, not used
struct Job {
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

/// Who completed each job; a job in here twice was done twice.
type Completions = Mutex<BTreeMap<i64, Vec<String>>>;

pub(super) fn run(url: &str, sqlite: bool, ddl: &[&str]) -> Result<bool, Error> {
    // A connection per worker, one for the operator, one for the keeper's renewals.
    let pool: Pool<ConnectionManager<Conn>> = pool(url, WORKERS as u32 + 2, sqlite)?;
    let conn = &mut pool.get()?;
    for statement in ddl {
        diesel::sql_query(*statement).execute(conn)?;
    }
    // The lease columns, typed and indexed for this backend, as a migration would add them.
    let lease_columns =
        LeaseColumns::new("example_jobs").migration::<<Conn as Connection>::Backend>()?;
    conn.batch_execute(lease_columns.up_sql())?;
    let jobs: Vec<_> = (1..=JOBS)
        .map(|id| {
            (
                example_jobs::id.eq(id),
                example_jobs::payload.eq(format!("resize image {id}")),
                example_jobs::status.eq("queued"),
            )
        })
        .collect();
    diesel::insert_into(example_jobs::table)
        .values(&jobs)
        .execute(conn)?;

    let lease = Lease::from_millis(800)?;
    // Renews every kept batch every 200 ms; trusts a lease 200 ms less than it runs.
    let keeper = Keeper::start(
        pool.clone(),
        KeeperSettings::new(lease)
            .every(Duration::from_millis(200))
            .margin(Duration::from_millis(200)),
    )?;
    let start = timeline_start();
    let completions = Completions::default();
    std::thread::scope(|scope| -> Result<(), Error> {
        let workers: Vec<_> = (0..WORKERS)
            .map(|n| {
                let (pool, keeper, completions) = (&pool, &keeper, &completions);
                scope.spawn(move || {
                    work(
                        pool,
                        keeper,
                        &format!("worker-{n}"),
                        n == 0,
                        lease,
                        start,
                        completions,
                    )
                })
            })
            .collect();
        scope.spawn(|| operator_frees_a_job(&pool, start));
        for worker in workers {
            worker.join().expect("a worker thread panicked")?;
        }
        Ok(())
    })?;
    report(
        conn,
        &completions.into_inner().unwrap_or_else(|e| e.into_inner()),
    )
}

/// An operator frees the last job of the queue while a worker holds it (say, to move it to
/// another machine): the worker's keeper notices at its next renewal, and the worker drops it.
fn operator_frees_a_job(pool: &Pool<ConnectionManager<Conn>>, start: Instant) -> Result<(), Error> {
    for _ in 0..3_000 {
        let conn = &mut pool.get()?;
        let held = example_jobs::table
            .find(JOBS)
            .filter(example_jobs::claim_token.is_not_null());
        let freed = diesel::update(held)
            .set((
                example_jobs::table.released(),
                example_jobs::status.eq("queued"),
            ))
            .execute(conn)?;
        if freed == 1 {
            println!(
                "{:>5} ms  operator frees job {JOBS} from its worker",
                millis_since(start)
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
    pool: &Pool<ConnectionManager<Conn>>,
    keeper: &Keeper<Conn>,
    name: &str,
    dies: bool,
    lease: Lease,
    start: Instant,
    completions: &Completions,
) -> Result<(), Error> {
    let conn = &mut pool.get()?;
    loop {
        // One statement picks the next due jobs and claims them: no read proposes ids first.
        let batch: Batch<Job> = example_jobs::table
            .claim_batch(BATCH, lease)
            .filter(example_jobs::status.ne("done"))
            .filter(example_jobs::due_at.le(Now::default()))
            .order_by(example_jobs::id)
            .set((
                example_jobs::status.eq("running"),
                example_jobs::attempts.eq(example_jobs::attempts + 1),
            ))
            .by(name, conn)?;
        if batch.is_empty() {
            let open: i64 = example_jobs::table
                .filter(example_jobs::status.ne("done"))
                .count()
                .get_result(conn)?;
            if open == 0 {
                return Ok(());
            }
            // Some job is held by a worker that may be dead: wait for its lease, by the database's clock.
            std::thread::sleep(Duration::from_millis(50));
            continue;
        }
        let (jobs, claim) = batch.into_parts();
        let ids: Vec<i64> = jobs.iter().map(|job| job.id).collect();
        println!(
            "{:>5} ms  {name} claimed jobs {ids:?} (attempts {:?})",
            millis_since(start),
            jobs.iter().map(|job| job.attempts).collect::<Vec<_>>()
        );
        if dies {
            println!(
                "{:>5} ms  {name} dies holding jobs {ids:?}",
                millis_since(start)
            );
            return Ok(());
        }
        let kept = keeper.keep(example_jobs::table, claim.clone(), ids.clone())?;
        let mut worked = Vec::new();
        for id in &ids {
            // Before each job's effect: is it still ours? The keeper knows without a statement,
            // and a loss names the jobs lost.
            if let Err(lost) = kept.check() {
                if lost.rows.contains(id) {
                    println!(
                        "{:>5} ms  {name} lost job {id} ({}): stops working on it",
                        millis_since(start),
                        lost.reason
                    );
                    continue;
                }
            }
            std::thread::sleep(Duration::from_millis(40 + (*id as u64 * 7) % 40)); // the work
            worked.push(*id);
        }
        // One guarded statement finishes the jobs worked and says which were still ours.
        let completed = example_jobs::table
            .release_rows(&claim, worked.clone())
            .set((
                example_jobs::status.eq("done"),
                example_jobs::completed_by.eq(name),
            ))
            .run(conn)?;
        let mut done = completions.lock().unwrap_or_else(|e| e.into_inner());
        for id in &completed {
            done.entry(*id).or_default().push(name.to_owned());
        }
        drop(done);
        println!(
            "{:>5} ms  {name} completed jobs {completed:?}",
            millis_since(start)
        );
        drop(kept); // releases what the batch still holds: nothing, or the jobs not worked
        let lost: Vec<&i64> = worked.iter().filter(|id| !completed.contains(id)).collect();
        if !lost.is_empty() {
            println!(
                "{:>5} ms  {name} lost jobs {lost:?} to a newer claim: their results are dropped",
                millis_since(start)
            );
        }
    }
}

fn report(conn: &mut Conn, completions: &BTreeMap<i64, Vec<String>>) -> Result<bool, Error> {
    let rows: Vec<(i64, String, i32, Option<String>)> = example_jobs::table
        .select((
            example_jobs::id,
            example_jobs::status,
            example_jobs::attempts,
            example_jobs::completed_by,
        ))
        .order(example_jobs::id)
        .load(conn)?;
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
