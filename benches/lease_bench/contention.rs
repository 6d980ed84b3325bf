//! Measurement 5: 16 threads refused on one held row: the library's claim against a
//! transaction of `SELECT .. FOR UPDATE NOWAIT`.
use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};

use diesel::Connection;
use diesel_lease::Claim;

use crate::backend::{self, Ops};
use crate::measure::{self, interleave, median, paired_ratio, Variant};
use crate::results::{Better, Results, Row};
use crate::shared::Plan;
use crate::shared::{check, Res};
use crate::suite::{lease, new_token, throughput, HOT, LEASE_MICROS, OWNER};

/// The measurement's number, in `--only` and in docs/benchmarks.md.
pub const SECTION: u32 = crate::measurements::CONTENTION;
const THREADS: usize = 16;

/// The job of a contender by `SELECT .. FOR UPDATE NOWAIT`: lock the row, read whether it is
/// held, claim it if not. (refused, refused by a lock error).
fn nowait_attempt<B: Ops>(conn: &mut B::Conn, token: &str) -> Res<(bool, bool)> {
    let outcome = conn.transaction::<_, diesel::result::Error, _>(|conn| {
        if B::nowait_busy(conn, HOT, LEASE_MICROS)? {
            return Ok(true);
        }
        B::hand_claim::<false>(conn, HOT, OWNER, token, LEASE_MICROS)?;
        Ok(false)
    });
    match outcome {
        Ok(refused) => Ok((refused, false)),
        Err(diesel::result::Error::DatabaseError(_, _)) => Ok((true, true)),
        Err(error) => Err(error.into()),
    }
}

pub fn run<B: Ops>(url: &str, conn: &mut B::Conn, plan: &Plan, results: &mut Results) -> Res<()> {
    // The hot row is held, freshly, for the whole measurement.
    B::hold(conn, HOT, &Claim::new("bench-hot-holder")?)?;
    let lease = lease()?;
    let pool = backend::pool::<B>(url, THREADS as u32, false)?;
    let pool = &pool;
    let slice = plan.thread_slice;
    let lock_errors = AtomicU64::new(0);
    let lock_errors = &lock_errors;
    let latencies = RefCell::new([Vec::new(), Vec::new()]);
    let latencies = &latencies;
    let mut variants = [
        Variant::new("nowait", || {
            let mut times = Vec::new();
            let rate = throughput::<B>(pool, THREADS, slice, true, Some(&mut times), &|c, _| {
                let (refused, lock_error) = nowait_attempt::<B>(c, &new_token())?;
                if lock_error {
                    lock_errors.fetch_add(1, Ordering::Relaxed);
                }
                check(refused, "the NOWAIT contender won the held row")
            })?;
            latencies.borrow_mut()[0].extend(times);
            Ok(rate)
        }),
        Variant::new("library", || {
            let mut times = Vec::new();
            let rate = throughput::<B>(pool, THREADS, slice, true, Some(&mut times), &|c, _| {
                let won = B::lib_claim(c, HOT, Claim::new(OWNER)?, lease)?;
                check(!won, "the library's contender won the held row")
            })?;
            latencies.borrow_mut()[1].extend(times);
            Ok(rate)
        }),
    ];
    let samples = interleave(plan.thread_rounds, &mut variants)?;
    let mut latencies = latencies.borrow_mut();
    let nowait_p50 = measure::percentile(&mut latencies[0], 50.0);
    let nowait_p99 = measure::percentile(&mut latencies[0], 99.0);
    let (ratio, min, max) = paired_ratio(&samples[1], &samples[0]);
    results.push(Row {
        section: SECTION,
        backend: B::NAME.into(),
        figure: format!("refusals/s, {THREADS} threads, one held row"),
        baseline_name: "FOR UPDATE NOWAIT".into(),
        baseline: median(&samples[0]),
        library_name: "library".into(),
        library: median(&samples[1]),
        unit: "/s".into(),
        ratio,
        range: Some((min, max)),
        better: Better::Higher,
        goal: None,
    });
    let p50 = measure::percentile(&mut latencies[1], 50.0);
    let p99 = measure::percentile(&mut latencies[1], 99.0);
    results.push(Row {
        section: SECTION,
        backend: B::NAME.into(),
        figure: "p99 latency of a refusal".into(),
        baseline_name: "FOR UPDATE NOWAIT".into(),
        baseline: nowait_p99,
        library_name: "library".into(),
        library: p99,
        unit: "µs".into(),
        ratio: p99 / nowait_p99,
        range: None,
        better: Better::Lower,
        goal: None,
    });
    results.note(format!(
        "{}: contention, p50 of a refusal: library {p50:.0} µs, FOR UPDATE NOWAIT {nowait_p50:.0} µs",
        B::NAME,
    ));
    results.note(format!(
        "{}: {} of {} FOR UPDATE NOWAIT refusals were lock errors (another contender held the \
         row lock), the rest read the row as held",
        B::NAME,
        lock_errors.load(Ordering::Relaxed),
        latencies[0].len()
    ));
    Ok(())
}
