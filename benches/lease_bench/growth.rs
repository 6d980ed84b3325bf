//! Measurement 11, how the cost grows with the table: claim-and-finish throughput of 16
//! workers (batches of 10 and 100) and the latency of one worker's claim of one job, on queues
//! of 10,000, 100,000 and 1,000,000 jobs, 90% of them done and kept in the table (the oldest, as
//! a real queue keeps them), with the index a claim of queued jobs in key order needs. Each
//! finish puts its jobs back in the queue, so that the queue keeps its size while it is measured.
//!
//! Each size's queue has a namespace of its own (a schema, a database or a file), so that the
//! three stand side by side and are measured in interleaved rounds, as every other measurement
//! is: whatever else the machine does hits every size alike.
//!
//! On PostgreSQL it runs on the suite's server, whose autovacuum is off, and again on a server
//! of its own with the default settings (`own_server.rs`), so that the cost of churn without
//! vacuum shows apart from the cost of size.
use std::sync::atomic::{AtomicU64, Ordering};

use crate::backend::{self, Ops};
use crate::measure::{median, paired_ratio};
use crate::results::{Better, Goal, Results, Row};
use crate::shared::Plan;
use crate::shared::Res;
use crate::suite::{lease, throughput};

/// The measurement's number, in `--only` and in docs/benchmarks.md.
pub const SECTION: u32 = crate::measurements::GROWTH;
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
    let measured = measure::<B>(url, server, plan, results);
    for rows in SIZES {
        B::drop_growth_namespace(url, rows)?;
    }
    let samples = measured?;
    let (baseline, grown) = samples.split_first().ok_or("the smallest queue")?;
    for (rows, samples) in SIZES[1..].iter().zip(grown) {
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
            // The rounds are interleaved, so each round's ratio is a pair measured side by side.
            let (ratio, min, max) = paired_ratio(at_size, base);
            let (base, at_size) = (median(base), median(at_size));
            results.push(Row {
                section: SECTION,
                backend: server.into(),
                figure: format!(
                    "{figure}: {} jobs against {}",
                    thousands(*rows),
                    thousands(SIZES[0])
                ),
                baseline_name: format!("{} jobs", thousands(SIZES[0])),
                baseline: base,
                library_name: format!("{} jobs", thousands(*rows)),
                library: at_size,
                unit: unit.into(),
                ratio,
                range: Some((min, max)),
                better,
                goal,
            });
        }
    }
    Ok(())
}

/// Builds the queue of every size and measures them in interleaved rounds: the samples of each
/// size, in the order of [`SIZES`]. Their pools are closed when it returns, so that their
/// namespaces can be dropped.
fn measure<B: Ops>(
    url: &str,
    server: &str,
    plan: &Plan,
    results: &mut Results,
) -> Res<Vec<Samples>> {
    let lease = lease()?;
    let mut pools = Vec::new();
    for rows in SIZES {
        let pool = backend::pool::<B>(&B::growth_namespace(url, rows)?, WORKERS as u32, false)?;
        B::growth_setup(&mut *pool.get()?, rows, rows / 10 * 9)?;
        pools.push(pool);
    }
    let largest = pools.last().ok_or("the largest queue")?;
    let plan_text = B::growth_plan(&mut *largest.get()?)?;
    results.note(format!(
        "{server}: the plan of the claim's read of its candidates on {} jobs: {}",
        thousands(SIZES[SIZES.len() - 1]),
        plan_text.replace('\n', " / ")
    ));
    let mut samples: Vec<Samples> = SIZES.iter().map(|_| Samples::default()).collect();
    for round in 0..plan.thread_rounds {
        // Which size goes first rotates from round to round.
        for k in 0..SIZES.len() {
            let size = (round + k) % SIZES.len();
            let (pool, samples) = (&pools[size], &mut samples[size]);
            for (at, batch) in BATCHES.iter().enumerate() {
                let jobs = AtomicU64::new(0);
                throughput::<B>(pool, WORKERS, plan.thread_slice, true, None, &|conn, _| {
                    let claimed = B::growth_cycle(conn, *batch, lease, "queued")?;
                    jobs.fetch_add(claimed as u64, Ordering::Relaxed);
                    Ok(())
                })?;
                samples.rates[at]
                    .push(jobs.load(Ordering::Relaxed) as f64 / plan.thread_slice.as_secs_f64());
            }
            let mut times = Vec::new();
            throughput::<B>(
                pool,
                1,
                plan.thread_slice,
                true,
                Some(&mut times),
                &|conn, _| B::growth_cycle(conn, 1, lease, "queued").map(drop),
            )?;
            samples.single.push(median(&times));
        }
    }
    Ok(samples)
}

fn thousands(n: i64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (at, digit) in digits.chars().enumerate() {
        if at > 0 && (digits.len() - at).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}
