//! The queue workload that the killed-processes, skewed-clocks and server-restart scenarios
//! share: 2,000 jobs, claimed 5 at a time with a 1 s lease by worker processes, each finished
//! by a token-guarded release that sets it done and counts itself in `done_count`.
use std::process::ExitCode;
use std::time::Duration;

use diesel_lease::prelude::*;

use crate::db::{self, FaultConn, JobCounts, Pool, Takeovers};
use crate::fleet::{self, Fleet, Tally};
use crate::report::Outcome;

pub const JOBS: i64 = 2_000;
const BATCH: usize = 5;
/// A killed worker's jobs wait this long, by the database's clock, before another takes them.
pub const LEASE: Duration = Duration::from_secs(1);
/// How long a paused worker stalls: longer than the lease.
const PAUSE: Duration = Duration::from_millis(1_500);
/// The longest a run may take once its faults are over: survivors finish what is left.
const PATIENCE: Duration = Duration::from_secs(90);

pub fn lease() -> Lease {
    Lease::new(LEASE).expect("a valid lease")
}

/// A worker's role: the queue, with `work` spent on each job.
pub fn role(work: Duration) -> String {
    format!("queue:{}", work.as_millis())
}

/// The suite's tables made anew, with the jobs queued.
pub fn prepare<C: FaultConn>(url: &str) -> Result<Pool<C>, String> {
    let pool = db::pool::<C>(url, 2);
    let conn = &mut pool
        .get()
        .map_err(|e| format!("a connection to {url}: {e}"))?;
    db::execute(&mut **conn, &C::KIND.schema()).map_err(|e| format!("the schema: {e}"))?;
    conn.insert_jobs(JOBS)
        .map_err(|e| format!("the jobs: {e}"))?;
    Ok(pool)
}

/// Whether jobs remain, as the database says; an error counts as "yes".
pub fn jobs_open<C: FaultConn>(pool: &Pool<C>) -> bool {
    pool.get().ok().and_then(|mut conn| conn.open_jobs().ok()) != Some(0)
}

/// The worker process: claims and finishes jobs until none is left. An error is said on stdout
/// and the loop goes on, as an application's would; an outlived claim of a dead worker waits
/// for its lease.
pub fn work<C: FaultConn>(url: &str, name: &str, role: &str) -> ExitCode {
    fleet::watch_stdin();
    let pool = db::pool::<C>(url, 1);
    say_clock(&pool);
    work_as(&pool, name, work_time(role), lease())
}

/// The time a worker of `role` (`<name>:<ms>`) spends on each job.
pub fn work_time(role: &str) -> Duration {
    role.split_once(':')
        .and_then(|(_, ms)| ms.parse().ok())
        .map_or(Duration::from_millis(10), Duration::from_millis)
}

/// Claims and finishes jobs as `owner`, under `lease`, until none is left or the suite says stop.
pub fn work_as<C: FaultConn>(
    pool: &Pool<C>,
    owner: &str,
    work: Duration,
    lease: Lease,
) -> ExitCode {
    while !fleet::stopping() {
        match step(pool, owner, work, lease) {
            Ok(Step::Worked) => {}
            Ok(Step::Waiting) => std::thread::sleep(Duration::from_millis(50)),
            Ok(Step::Finished) => break,
            Err(error) => {
                println!("error {}", fleet::error_kind(&error));
                std::thread::sleep(Duration::from_millis(50));
            }
        }
    }
    ExitCode::SUCCESS
}

enum Step {
    Worked,
    Waiting,
    Finished,
}

fn step<C: FaultConn>(
    pool: &Pool<C>,
    name: &str,
    work: Duration,
    lease: Lease,
) -> Result<Step, diesel_lease::Error> {
    let conn = &mut pool.get()?;
    let batch = conn.claim_jobs(BATCH, lease, name)?;
    if batch.is_empty() {
        return Ok(if conn.open_jobs()? == 0 {
            Step::Finished
        } else {
            Step::Waiting
        });
    }
    std::thread::sleep(work * batch.len() as u32);
    let finished = conn.finish_jobs(&batch)?;
    let ids: Vec<String> = finished.iter().map(i64::to_string).collect();
    println!("finished {}", ids.join(" "));
    if finished.len() < batch.len() {
        println!("stale {}", batch.len() - finished.len());
    }
    Ok(Step::Worked)
}

/// Says how far this process's clock is from the database's (under faketime, an hour or so).
#[allow(clippy::disallowed_methods)] // the application's clock, read to show faketime's skew
fn say_clock<C: FaultConn>(pool: &Pool<C>) {
    if let Ok(database) = pool
        .get()
        .map_err(|_| ())
        .and_then(|mut conn| conn.clock().map_err(|_| ()))
    {
        let offset = chrono::Utc::now() - database;
        println!("clock {}", offset.num_milliseconds() as f64 / 1000.0);
    }
}

/// Scenarios 1 and 2: 4 workers (`skews` says whose clock is shifted) over the queue, one
/// SIGKILLed every 0.5 s and replaced while jobs remain; every fifth fault, instead of a kill,
/// one is paused past its lease (its jobs are taken over) and then resumes, and its finish must
/// change nothing. Then the survivors finish.
pub fn with_kills<C: FaultConn>(
    url: &str,
    skews: &[Option<&'static str>],
    outcome: &mut Outcome,
) -> Result<Tally, String> {
    let pool = prepare::<C>(url)?;
    let mut fleet = Fleet::start(&role(Duration::from_millis(10)), C::KIND, url, skews)?;
    let started = crate::timer();
    let mut faults = 0;
    fleet.every(
        Duration::from_millis(500),
        60,
        |_| jobs_open(&pool),
        |fleet| {
            faults += 1;
            match faults % 5 {
                0 => fleet.pause_one(PAUSE),
                _ => fleet.kill_one(),
            }
        },
    )?;
    let faults_over = started.elapsed();
    wait_until_finished(&mut fleet, &pool);
    outcome.figure("kills (SIGKILL)", fleet.kills);
    outcome.figure("pauses past the lease (SIGSTOP, SIGCONT)", fleet.pauses);
    outcome.figure(
        "faults while jobs remained; the whole run",
        format!(
            "{:.1} s, {:.1} s",
            faults_over.as_secs_f64(),
            started.elapsed().as_secs_f64()
        ),
    );
    outcome.check(fleet.kills >= 5, || {
        format!(
            "only {} kills: the queue ran out too soon to test anything",
            fleet.kills
        )
    });
    outcome.fail_all(std::mem::take(&mut fleet.failures));
    let tally = std::mem::take(&mut *fleet.tally.lock().unwrap_or_else(|e| e.into_inner()));
    verdict(&pool, &tally, fleet.kills > 0, outcome);
    Ok(tally)
}

/// Lets the workers finish the queue on their own (they stop once no job is open).
pub fn wait_until_finished<C: FaultConn>(fleet: &mut Fleet, pool: &Pool<C>) {
    let started = crate::timer();
    while !fleet.all_exited() && started.elapsed() < PATIENCE && jobs_open(pool) {
        std::thread::sleep(Duration::from_millis(100));
    }
    fleet.finish(Duration::from_secs(10));
}

/// What the database says of the queue: every job done exactly once, and every takeover of an
/// outlived claim. With `killed`, a run that saw no takeover tested nothing and fails.
pub fn verdict<C: FaultConn>(pool: &Pool<C>, tally: &Tally, killed: bool, outcome: &mut Outcome) {
    verdict_of(pool, tally, killed, JOBS, outcome);
}

/// What the database says of the queue at the end: its counts, and the takeovers of claims
/// under `lease`.
pub fn final_counts<C: FaultConn>(
    pool: &Pool<C>,
    lease: Lease,
) -> Result<(JobCounts, Takeovers), String> {
    let mut conn = pool.get().map_err(|e| e.to_string())?;
    let counts = conn.job_counts().map_err(|e| e.to_string())?;
    let takeovers = conn
        .takeovers("fault_jobs", lease)
        .map_err(|e| e.to_string())?;
    Ok((counts, takeovers))
}

/// [`verdict`] of a queue of `jobs` jobs.
pub fn verdict_of<C: FaultConn>(
    pool: &Pool<C>,
    tally: &Tally,
    killed: bool,
    jobs: i64,
    outcome: &mut Outcome,
) {
    let (counts, takeovers) = match final_counts(pool, lease()) {
        Ok(read) => read,
        Err(error) => return outcome.fail(format!("the final counts: {error}")),
    };
    outcome.figure("jobs", counts.jobs);
    outcome.figure("claims of a job (fence increments)", counts.claims);
    outcome.figure("jobs lost (not done at the end)", counts.open);
    outcome.figure("jobs done twice (done_count > 1)", counts.twice);
    outcome.takeovers("", &takeovers, LEASE);
    outcome.figure(
        "finishes too late, refused by the token guard (said by the workers)",
        tally.stale,
    );
    outcome.figure("worker errors, by kind", tally.errors_text());
    outcome.check(counts.jobs == jobs, || {
        format!("{} jobs in the queue, not {jobs}", counts.jobs)
    });
    outcome.check(counts.open == 0, || {
        format!("{} jobs lost: not done at the end", counts.open)
    });
    outcome.check(counts.twice == 0, || {
        format!("{} jobs done twice", counts.twice)
    });
    outcome.check(!killed || takeovers.count > 0, || {
        "no takeover: no killed worker's job was reclaimed, so nothing was tested".into()
    });
}
