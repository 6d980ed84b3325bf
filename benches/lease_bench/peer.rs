//! Measurement 13, a peer on the same server: graphile-worker, a PostgreSQL job queue with a
//! published benchmark, drains a queue of no-op jobs with its own batched fetch and completion
//! (`benches/graphile/run.js`), against the library's 16 workers draining as many jobs in
//! batches of the same size (`claim_batch`, then one release that sets them done), on the same
//! server, in alternating rounds. Skipped with a note when `node` or `npm` is missing; the
//! package is installed into `target/graphile-bench`, which the harness owns.
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Barrier;
use std::time::Instant;

use diesel::connection::SimpleConnection;

use crate::backend::{self, Pg};
use crate::backend::{Backend, Ops};
use crate::measure::{median, paired_ratio};
use crate::results::{Better, Goal, Results, Row};
use crate::shared::Plan;
use crate::shared::{check, Res};
use crate::suite::lease;

/// The measurement's number, in `--only` and in docs/benchmarks.md.
pub const SECTION: u32 = crate::measurements::PEER;
const JOBS: i64 = 20_000;
const WORKERS: usize = 16;
const BATCH: usize = 100;
/// The goal: the library's jobs/s at least this many times graphile-worker's.
const GOAL: f64 = 3.0;

pub fn run(url: &str, plan: &Plan, results: &mut Results) -> Res<()> {
    println!("-- {SECTION}. a peer: graphile-worker on the same server");
    let folder = match install() {
        Ok(folder) => folder,
        Err(why) => {
            results.note(format!("Measurement {SECTION} skipped: {why}"));
            return Ok(());
        }
    };
    let pool = backend::pool::<Pg>(url, WORKERS as u32, false)?;
    let lease = lease()?;
    let (mut library, mut peer) = (Vec::new(), Vec::new());
    for _ in 0..plan.thread_rounds.max(3) {
        Pg::growth_setup(&mut *pool.get()?, JOBS, 0)?;
        let secs = drain(&pool, lease)?;
        let left = open_jobs(&mut *pool.get()?)?;
        check(left == 0, "the library's workers left jobs")?;
        library.push(JOBS as f64 / secs);
        peer.push(graphile_rate(&folder, url)?);
    }
    Pg::growth_teardown(&mut *pool.get()?)?;
    pool.get()?
        .batch_execute("DROP SCHEMA IF EXISTS graphile_worker CASCADE; DROP SCHEMA IF EXISTS graphile_migrate CASCADE;")?;
    let (ratio, min, max) = paired_ratio(&library, &peer);
    results.push(Row {
        section: SECTION,
        backend: Pg::NAME.into(),
        figure: format!("jobs/s draining {JOBS} no-op jobs, {WORKERS} workers, batches of {BATCH}"),
        baseline_name: "graphile-worker 0.18.0 (its localQueue and batched completion)".into(),
        baseline: median(&peer),
        library_name: "library (claim_batch, one release)".into(),
        library: median(&library),
        unit: "/s".into(),
        ratio,
        range: Some((min, max)),
        better: Better::Higher,
        goal: Some(Goal::RatioAtLeast(GOAL)),
    });
    Ok(())
}

/// Seconds for the library's workers to drain the queue: each claims and finishes batches
/// until a claim finds nothing.
fn drain(pool: &backend::ConnPool<Pg>, lease: diesel_lease::Lease) -> Res<f64> {
    let barrier = Barrier::new(WORKERS);
    let started = Instant::now();
    let finished: Vec<Res<()>> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..WORKERS)
            .map(|_| {
                let barrier = &barrier;
                scope.spawn(move || -> Res<()> {
                    let conn = &mut *pool.get()?;
                    barrier.wait();
                    while Pg::growth_cycle(conn, BATCH, lease, "done")? > 0 {}
                    Ok(())
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|worker| {
                worker
                    .join()
                    .unwrap_or_else(|_| Err("a worker panicked".into()))
            })
            .collect()
    });
    let secs = started.elapsed().as_secs_f64();
    finished.into_iter().collect::<Res<Vec<()>>>()?;
    Ok(secs)
}

fn open_jobs(conn: &mut <Pg as Backend>::Conn) -> Res<i64> {
    use diesel::prelude::*;
    #[derive(QueryableByName)]
    struct Open {
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        n: i64,
    }
    Ok(
        diesel::sql_query("SELECT COUNT(*) AS n FROM bench_growth WHERE status <> 'done'")
            .get_result::<Open>(conn)?
            .n,
    )
}

/// graphile-worker installed into the harness's folder: where its script runs from.
fn install() -> Result<PathBuf, String> {
    let sources = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/graphile");
    let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/graphile-bench");
    for program in ["node", "npm"] {
        if Command::new(program).arg("--version").output().is_err() {
            return Err(format!("{program} is not installed"));
        }
    }
    std::fs::create_dir_all(&folder).map_err(|e| e.to_string())?;
    for file in ["package.json", "run.js"] {
        std::fs::copy(sources.join(file), folder.join(file)).map_err(|e| e.to_string())?;
    }
    let installed = Command::new("npm")
        .args(["install", "--no-audit", "--no-fund", "--silent"])
        .current_dir(&folder)
        .status()
        .map_err(|e| e.to_string())?;
    if !installed.success() {
        return Err(format!("npm install failed: {installed}"));
    }
    Ok(folder)
}

/// One drain of graphile-worker's: its jobs per second.
fn graphile_rate(folder: &Path, url: &str) -> Res<f64> {
    let output = Command::new("node")
        .arg("run.js")
        .current_dir(folder)
        .env("DATABASE_URL", url)
        .env("JOBS", JOBS.to_string())
        .env("CONCURRENCY", WORKERS.to_string())
        .env("BATCH", BATCH.to_string())
        .output()?;
    if !output.status.success() {
        return Err(format!(
            "graphile-worker's run failed: {}",
            String::from_utf8_lossy(&output.stderr)
        )
        .into());
    }
    let text = String::from_utf8_lossy(&output.stdout);
    let rate = text
        .split("\"rate\":")
        .nth(1)
        .and_then(|rest| {
            rest.trim_end_matches(['}', '\n'])
                .trim()
                .parse::<f64>()
                .ok()
        })
        .ok_or_else(|| format!("graphile-worker's run said: {text}"))?;
    Ok(rate)
}
