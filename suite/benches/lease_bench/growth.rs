//! Measurement 11, how the cost grows with the table: claim-and-finish throughput of 16
//! workers (batches of 10 and 100) and the latency of one worker's claim of one job, on queues
//! of 10,000, 100,000 and 1,000,000 jobs, 90% of them done and kept in the table (the oldest, as
//! a real queue keeps them), with the index a claim of queued jobs in key order needs. Each
//! finish puts its jobs back in the queue, so that the queue keeps its size while it is measured.
//!
//! One table is built at each size in turn, so the sizes cannot be interleaved round by round:
//! the 10,000-job queue is measured first and again last, both count as the baseline, and the
//! change between the two is printed as the machine's drift over the measurement.
//!
//! On PostgreSQL it runs on the suite's server, whose autovacuum is off, and again on a server
//! of its own with the default settings (`own_server.rs`), so that the cost of churn without
//! vacuum shows apart from the cost of size.
use std::sync::atomic::{AtomicU64, Ordering};

use crate::backend::{self, Ops};
use crate::measure::{median, Plan};
use crate::report::{Better, Goal, Results, Row};
use crate::suite::{lease, throughput};
use crate::Res;

/// The measurement's number, in `--only` and in docs/benchmarks.md.
pub const SECTION: u32 = 11;
const SIZES: [i64; 3] = [10_000, 100_000, 1_000_000];
const WORKERS: usize = 16;
const BATCHES: [usize; 2] = [10, 100];
/// The goal: throughput at a size at least this share of the throughput at the smallest.
const GOAL: f64 = 0.95;

/// The samples at one size: jobs/s of each batch size, and µs per claim-and-finish of one job.
#[derive(Default)]
struct Samples {
    rates: [Vec<f64>; BATCHES.len()],
    single: Vec<f64>,
}

/// Runs the measurement on the server at `url`, named by its backend in the results.
pub fn run<B: Ops>(url: &str, plan: &Plan, results: &mut Results) -> Res<()> {
    run_on::<B>(url, B::NAME, plan, results)
}

/// Runs the measurement on the server at `url`, named `server` in the results.
pub fn run_on<B: Ops>(
    url: &str,
    server: &'static str,
    plan: &Plan,
    results: &mut Results,
) -> Res<()> {
    println!("-- {SECTION}. growth on {server}: queues of 10,000 to 1,000,000 jobs, 90% done");
    let lease = lease()?;
    let pool = backend::pool::<B>(url, WORKERS as u32, false)?;
    let mut baseline = Samples::default();
    let mut first_baseline = None;
    let mut grown = Vec::new();
    // The smallest size first and again last.
    for (phase, rows) in SIZES.iter().chain(&SIZES[..1]).enumerate() {
        B::growth_setup(&mut *pool.get()?, *rows, rows / 10 * 9)?;
        if *rows == SIZES[SIZES.len() - 1] {
            let plan_text = B::growth_plan(&mut *pool.get()?)?;
            results.note(format!(
                "{}: the plan of the claim's read of its candidates on {rows} jobs: {}",
                server,
                plan_text.replace('\n', " / ")
            ));
        }
        let samples = if *rows == SIZES[0] {
            &mut baseline
        } else {
            grown.push((*rows, Samples::default()));
            &mut grown.last_mut().ok_or("a size")?.1
        };
        for _ in 0..plan.thread_rounds {
            for (at, batch) in BATCHES.iter().enumerate() {
                let jobs = AtomicU64::new(0);
                throughput::<B>(&pool, WORKERS, plan.thread_slice, true, None, &|conn, _| {
                    let claimed = B::growth_cycle(conn, *batch, lease, "queued")?;
                    jobs.fetch_add(claimed as u64, Ordering::Relaxed);
                    Ok(())
                })?;
                samples.rates[at]
                    .push(jobs.load(Ordering::Relaxed) as f64 / plan.thread_slice.as_secs_f64());
            }
            let mut times = Vec::new();
            throughput::<B>(
                &pool,
                1,
                plan.thread_slice,
                true,
                Some(&mut times),
                &|conn, _| B::growth_cycle(conn, 1, lease, "queued").map(drop),
            )?;
            samples.single.push(median(&times));
        }
        if phase == 0 {
            first_baseline = Some(median(&baseline.rates[0]));
        }
    }
    if let Some(first) = first_baseline {
        let both = median(&baseline.rates[0]);
        results.note(format!(
            "{}: growth, the 10,000-job queue at batch 10: {first:.0} jobs/s first, {both:.0} \
             jobs/s over both of its phases (the machine's drift over the measurement)",
            server
        ));
    }
    for (rows, samples) in &grown {
        let throughputs = BATCHES.iter().enumerate().map(|(at, batch)| {
            (
                format!("jobs/s, {WORKERS} workers, batch {batch}"),
                (&baseline.rates[at], &samples.rates[at]),
                ("/s", Better::Higher, Some(Goal::RatioAtLeast(GOAL))),
            )
        });
        let latency = (
            "µs per claim and finish of one job, one worker".to_owned(),
            (&baseline.single, &samples.single),
            ("µs", Better::Lower, None),
        );
        for (figure, (base, at_size), (unit, better, goal)) in throughputs.chain([latency]) {
            let (base, at_size) = (median(base), median(at_size));
            results.push(Row {
                section: SECTION,
                backend: server,
                figure: format!(
                    "{figure}: {} jobs against {}",
                    thousands(*rows),
                    thousands(SIZES[0])
                ),
                baseline_name: format!("{} jobs", thousands(SIZES[0])),
                baseline: base,
                library_name: format!("{} jobs", thousands(*rows)),
                library: at_size,
                unit,
                ratio: at_size / base,
                range: None,
                better,
                goal,
            });
        }
    }
    B::growth_teardown(&mut *pool.get()?)?;
    Ok(())
}

fn thousands(n: i64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (at, digit) in digits.chars().enumerate() {
        if at > 0 && (digits.len() - at) % 3 == 0 {
            out.push(',');
        }
        out.push(digit);
    }
    out
}
