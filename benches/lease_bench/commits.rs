//! Measurement 12, the commit limit: each claim, renewal and release is a durable commit of its
//! own, so the server's rate of durable one-row commits on one connection bounds the claim
//! cycle's. Measured in the same rounds: a one-row guarded renewal by hand, prepared once, in
//! autocommit (one durable commit each), and the library's claim cycle (claim, renew, release:
//! three commits); the cycle's commits per second are given as a share of the renewals'.
use std::cell::RefCell;

use diesel_lease::Claim;

use crate::backend::{self, Ops};
use crate::measure::{interleave, median, micros_per_op, paired_ratio, Variant};
use crate::results::{Better, Results, Row};
use crate::shared::Plan;
use crate::shared::Res;
use crate::suite::{lease, OWNER};

/// The measurement's number, in `--only` and in docs/benchmarks.md.
pub const SECTION: u32 = crate::measurements::COMMITS;
/// The commits of one claim cycle: the claim, the renewal, the release.
const CYCLE_COMMITS: f64 = 3.0;

pub fn run<B: Ops>(url: &str, plan: &Plan, results: &mut Results) -> Res<()> {
    println!("-- {SECTION}. the commit limit");
    let mut conn = backend::connect::<B>(url)?;
    B::setup(&mut conn)?;
    B::kept_setup(&mut conn, 1)?;
    let outcome = (|| -> Res<()> {
        let held = Claim::new(OWNER)?;
        B::kept_take(&mut conn, 1, &held)?;
        let lease = lease()?;
        let conn = RefCell::new(&mut conn);
        let slice = plan.slice;
        let mut variants = [
            Variant::new("one-row commit", || {
                let c = &mut **conn.borrow_mut();
                micros_per_op(slice, || B::renew_each(c, &[1], held.token()))
            }),
            Variant::new("claim cycle", || {
                let c = &mut **conn.borrow_mut();
                micros_per_op(slice, || B::lib_cycle(c, 1, &Claim::new(OWNER)?, lease))
            }),
        ];
        let samples = interleave(plan.rounds, &mut variants)?;
        let commits_per_sec = |micros: &[f64], per_op: f64| -> Vec<f64> {
            micros.iter().map(|us| per_op * 1e6 / us).collect()
        };
        let limit = commits_per_sec(&samples[0], 1.0);
        let cycle = commits_per_sec(&samples[1], CYCLE_COMMITS);
        let (ratio, min, max) = paired_ratio(&cycle, &limit);
        results.push(Row {
            section: SECTION,
            backend: B::NAME.into(),
            figure: "durable commits/s on one connection: the claim cycle's (3 a cycle) against one-row renewals'".into(),
            baseline_name: "one-row renewal by hand, prepared once".into(),
            baseline: median(&limit),
            library_name: "library claim cycle".into(),
            library: median(&cycle),
            unit: "commits/s".into(),
            ratio,
            range: Some((min, max)),
            better: Better::Higher,
            goal: None,
        });
        Ok(())
    })();
    let cleaned = B::kept_teardown(&mut conn).and_then(|()| B::teardown(&mut conn));
    outcome.and(cleaned)
}
