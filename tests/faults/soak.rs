//! The soak, run by hand (`.ci/soak`), never by CI: the job queue for 30 minutes
//! (`LEASE_SOAK_SECS`) on a throwaway PostgreSQL with the default settings (autovacuum on), fed
//! 50 jobs a second, worked by 4 worker processes that claim batches, keep them with a keeper
//! and finish them, while the suite reaps outlived claims every 5 s, SIGKILLs one of 3 of the
//! workers every 10 s (the fourth lives through the run, so that its memory can be watched), and
//! restarts the server (`-m immediate`) every 5 minutes. Then the feed stops and the survivors
//! finish the queue. Asserted: the fault suite's counts (no job lost, none done twice, no
//! takeover of a claim younger than the lease), and flat resources: the long-lived worker's
//! resident memory at the end at most 20% above what it was after 5 minutes (plus 4 MiB), and the
//! server's client connections never above what the pools may open.
use std::time::Duration;

use diesel::prelude::*;
use diesel::PgConnection;
use diesel_lease::prelude::*;
use diesel_lease::{Keepable, Keeper, KeeperSettings};

use crate::db::{self, fault_jobs, FaultConn, Kind, Pool};
use crate::fleet::{self, Fleet};
use crate::report::Outcome;
use crate::server::Server;

pub const ROLE: &str = "soak";
const DEFAULT_SECS: u64 = 1_800;
const LEASE: Duration = Duration::from_secs(2);
const BATCH: usize = 5;
const WORK: Duration = Duration::from_millis(10);
const FEED_PER_SECOND: i64 = 50;
const KILL_EVERY: u64 = 10;
const REAP_EVERY: u64 = 5;
const RESTART_EVERY: u64 = 300;
const SAMPLE_EVERY: u64 = 60;
const KILLED_WORKERS: usize = 3;
/// Connections the pools may hold: 4 workers × (2 for the work + 1 for the keeper), and the
/// suite's own 3.
const MOST_CONNECTIONS: i64 = 4 * 3 + 3;

fn lease() -> Lease {
    Lease::new(LEASE).expect("a valid lease")
}

/// One minute's reading.
struct Sample {
    minute: u64,
    rss_kib: Option<u64>,
    connections: Option<i64>,
    open: Option<i64>,
    dead_tuples: Option<i64>,
    table_kib: Option<i64>,
}

pub fn run<C: FaultConn>(_: &str, outcome: &mut Outcome) -> Result<(), String> {
    if C::KIND != Kind::Postgres {
        outcome.not_run = Some("the soak restarts a throwaway PostgreSQL");
        return Ok(());
    }
    let secs = std::env::var("LEASE_SOAK_SECS")
        .ok()
        .and_then(|secs| secs.parse().ok())
        .unwrap_or(DEFAULT_SECS);
    let server = Server::start()?;
    let url = server.url();
    let pool = db::pool::<PgConnection>(&url, 3);
    {
        let conn = &mut *pool.get().map_err(|e| e.to_string())?;
        db::execute(conn, &Kind::Postgres.schema()).map_err(|e| format!("the schema: {e}"))?;
    }
    let role = format!("{ROLE}:{}", WORK.as_millis());
    let mut killed = Fleet::start(&role, Kind::Postgres, &url, &[None; KILLED_WORKERS])?;
    let mut steady = Fleet::start(&role, Kind::Postgres, &url, &[None])?;
    let (mut fed, mut restarts, mut reaped) = (0_i64, 0, 0);
    let mut samples = Vec::new();
    let started = crate::timer();
    for second in 1..=secs {
        std::thread::sleep(Duration::from_secs(second).saturating_sub(started.elapsed()));
        // A feed that failed (the server restarting) is sent again at the next second.
        if feed(&pool, fed, FEED_PER_SECOND).is_ok() {
            fed += FEED_PER_SECOND;
        }
        if second % REAP_EVERY == 0 {
            reaped += reap(&pool).unwrap_or(0);
        }
        if second % KILL_EVERY == 0 {
            killed.kill_one()?;
        }
        if second % RESTART_EVERY == 0 {
            server.pg_ctl(&["restart", "-m", "immediate"])?;
            restarts += 1;
        }
        if second % SAMPLE_EVERY == 0 {
            samples.push(sample(&pool, &steady, second / 60));
        }
    }
    let patience = crate::timer();
    while patience.elapsed() < Duration::from_secs(120) && open(&pool) != Some(0) {
        std::thread::sleep(Duration::from_secs(1));
        reaped += reap(&pool).unwrap_or(0);
    }
    killed.finish(Duration::from_secs(10));
    steady.finish(Duration::from_secs(10));

    outcome.figure(
        "run; jobs fed; kills (SIGKILL); server restarts (-m immediate); jobs reaped",
        format!(
            "{:.0} s; {fed}; {}; {restarts}; {reaped}",
            started.elapsed().as_secs_f64(),
            killed.kills
        ),
    );
    for sample in samples
        .iter()
        .filter(|s| s.minute % 5 == 0 || s.minute == 1)
    {
        outcome.figure(
            &format!(
                "minute {}: long-lived worker's RSS; client connections; open jobs; dead tuples; table size",
                sample.minute
            ),
            format!(
                "{}; {}; {}; {}; {}",
                shown(sample.rss_kib.map(|kib| format!("{:.1} MiB", kib as f64 / 1024.0))),
                shown(sample.connections),
                shown(sample.open),
                shown(sample.dead_tuples),
                shown(sample.table_kib.map(|kib| format!("{kib} KiB"))),
            ),
        );
    }
    let mut tally = std::mem::take(&mut *killed.tally.lock().unwrap_or_else(|e| e.into_inner()));
    let steady_tally = std::mem::take(&mut *steady.tally.lock().unwrap_or_else(|e| e.into_inner()));
    for (kind, count) in steady_tally.errors {
        *tally.errors.entry(kind).or_default() += count;
    }
    outcome.figure("worker errors, by kind", tally.errors_text());
    outcome.fail_all(std::mem::take(&mut killed.failures));
    outcome.fail_all(std::mem::take(&mut steady.failures));
    let (counts, takeovers) = crate::queue::final_counts(&pool, lease())?;
    outcome.figure("jobs", counts.jobs);
    outcome.figure("jobs lost (not done at the end)", counts.open);
    outcome.figure("jobs done twice (done_count > 1)", counts.twice);
    outcome.takeovers("", &takeovers, LEASE);
    outcome.check(counts.jobs == fed && counts.open == 0, || {
        format!(
            "{} jobs of {fed} fed, {} not done",
            counts.jobs, counts.open
        )
    });
    outcome.check(counts.twice == 0, || {
        format!("{} jobs done twice", counts.twice)
    });
    let rss: Vec<u64> = samples.iter().filter_map(|s| s.rss_kib).collect();
    if let (Some(warm), Some(last)) = (rss.get(4).or(rss.first()), rss.last()) {
        outcome.check(*last <= warm + warm / 5 + 4 * 1024, || {
            format!("the long-lived worker's memory grew from {warm} KiB to {last} KiB")
        });
    }
    let most = samples.iter().filter_map(|s| s.connections).max();
    outcome.check(most.is_some_and(|most| most <= MOST_CONNECTIONS), || {
        format!("{most:?} client connections, more than the pools' {MOST_CONNECTIONS}")
    });
    Ok(())
}

fn shown(value: Option<impl ToString>) -> String {
    value.map_or("—".into(), |value| value.to_string())
}

/// Adds `count` jobs after the first `fed`.
fn feed(pool: &Pool<PgConnection>, fed: i64, count: i64) -> Result<(), String> {
    let conn = &mut *pool.get().map_err(|e| e.to_string())?;
    db::execute(
        conn,
        &[format!(
            "INSERT INTO fault_jobs (id, status) SELECT g, 'queued' FROM generate_series({}, {}) g",
            fed + 1,
            fed + count
        )],
    )
    .map_err(|e| e.to_string())
}

/// Puts the jobs of outlived claims (a killed worker's) back in the queue.
fn reap(pool: &Pool<PgConnection>) -> Result<i64, String> {
    let conn = &mut *pool.get().map_err(|e| e.to_string())?;
    let reaped = fault_jobs::table
        .reap(100, lease())
        .filter(fault_jobs::status.ne("done"))
        .set(fault_jobs::status.eq("queued"))
        .run(conn)
        .map_err(|e| e.to_string())?;
    Ok(reaped.len() as i64)
}

fn open(pool: &Pool<PgConnection>) -> Option<i64> {
    pool.get().ok()?.open_jobs().ok()
}

fn sample(pool: &Pool<PgConnection>, steady: &Fleet, minute: u64) -> Sample {
    let rss_kib = steady.pids().first().and_then(|pid| {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
        let line = status.lines().find(|line| line.starts_with("VmRSS:"))?;
        line.split_whitespace().nth(1)?.parse().ok()
    });
    let number = |sql: &str| pool.get().ok()?.number(sql).ok().flatten();
    Sample {
        minute,
        rss_kib,
        connections: number(
            "SELECT CAST(count(*) AS BIGINT) AS n FROM pg_stat_activity \
             WHERE backend_type = 'client backend'",
        ),
        open: number("SELECT CAST(count(*) AS BIGINT) AS n FROM fault_jobs WHERE status <> 'done'"),
        dead_tuples: number(
            "SELECT CAST(n_dead_tup AS BIGINT) AS n FROM pg_stat_user_tables \
             WHERE relname = 'fault_jobs'",
        ),
        table_kib: number(
            "SELECT CAST(pg_total_relation_size('fault_jobs') / 1024 AS BIGINT) AS n",
        ),
    }
}

/// A soak worker: claims batches, has a keeper of its own keep them, works each job after
/// asking whether the lease holds, and finishes the batch in one token-guarded release, until
/// the suite says stop.
pub fn work<C: FaultConn>(url: &str, name: &str, role: &str) -> std::process::ExitCode
where
    fault_jobs::table: Keepable<C>,
{
    fleet::watch_stdin();
    let pool = db::pool::<C>(url, 2);
    let keeper = match Keeper::start(db::pool::<C>(url, 1), KeeperSettings::new(lease())) {
        Ok(keeper) => keeper,
        Err(error) => {
            eprintln!("faults: {name}: {error}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let work = crate::queue::work_time(role);
    while !fleet::stopping() {
        if let Err(error) = step(&pool, &keeper, name, work) {
            println!("error {}", fleet::error_kind(&error));
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    std::process::ExitCode::SUCCESS
}

fn step<C: FaultConn>(
    pool: &Pool<C>,
    keeper: &Keeper<C>,
    name: &str,
    work: Duration,
) -> Result<(), diesel_lease::Error>
where
    fault_jobs::table: Keepable<C>,
{
    let batch = pool.get()?.claim_jobs(BATCH, lease(), name)?;
    if batch.is_empty() {
        std::thread::sleep(Duration::from_millis(50));
        return Ok(());
    }
    let kept = keeper.keep(batch.held())?;
    for _ in batch.keys() {
        std::thread::sleep(work);
        if kept.check().is_err() {
            // Left as it is: the lease frees it, or the reaper.
            println!("error lease lost: the batch left unfinished");
            return Ok(());
        }
    }
    drop(kept.stop_keeping());
    let finished = pool.get()?.finish_jobs(&batch)?;
    let ids: Vec<String> = finished.iter().map(i64::to_string).collect();
    println!("finished {}", ids.join(" "));
    if finished.len() < batch.len() {
        println!("stale {}", batch.len() - finished.len());
    }
    Ok(())
}
