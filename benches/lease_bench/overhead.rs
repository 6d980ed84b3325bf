//! Measurements 1 and 6: one row's claim, renew, release cycle through the library against the
//! same SQL by hand, prepared once (the like-for-like baseline, the headline) and through
//! `sql_query` (never cached); and the cycle's statements and round trips.
use std::cell::RefCell;
use std::sync::atomic::Ordering;

use diesel_lease::Claim;

use crate::backend::Ops;
use crate::measure::{interleave, median, micros_per_op, paired_ratio, StatementLog, Variant};
use crate::results::{Better, Goal, Results, Row};
use crate::shared::Plan;
use crate::shared::Res;
use crate::suite::{lease, new_token, proxied, LEASE_MICROS, OWNER};

/// The goal (issue 23): the library's cycle at most this many times the time of the same SQL by
/// hand, prepared once.
const GOAL: f64 = 1.03;

pub fn run<B: Ops>(conn: &mut B::Conn, plan: &Plan, results: &mut Results) -> Res<()> {
    let lease = lease()?;
    B::free_rows(conn)?;
    let conn = RefCell::new(conn);
    let slice = plan.slice;
    let mut variants = [
        Variant::new("sql_query", || {
            let c = &mut **conn.borrow_mut();
            micros_per_op(slice, || {
                B::hand_cycle::<false>(c, 1, OWNER, &new_token(), LEASE_MICROS)
            })
        }),
        Variant::new("library", || {
            let c = &mut **conn.borrow_mut();
            micros_per_op(slice, || B::lib_cycle(c, 1, &Claim::new(OWNER)?, lease))
        }),
        Variant::new("hand, prepared once", || {
            let c = &mut **conn.borrow_mut();
            micros_per_op(slice, || {
                B::hand_cycle::<true>(c, 1, OWNER, &new_token(), LEASE_MICROS)
            })
        }),
        Variant::new("library via diesel::update", || {
            let c = &mut **conn.borrow_mut();
            micros_per_op(slice, || {
                B::lib_cycle_diesel_update(c, 1, &Claim::new(OWNER)?, lease)
            })
        }),
    ];
    let samples = interleave(plan.rounds, &mut variants)?;
    let [hand, library, hand_cached, via_diesel] = [0, 1, 2, 3].map(|k| &samples[k]);
    let figures = [
        (
            "claim, renew, release of one row",
            "hand, prepared once",
            hand_cached,
            "library",
            library,
            Some(Goal::RatioAtMost(GOAL)),
        ),
        (
            "the same cycle",
            "sql_query (never cached)",
            hand,
            "library",
            library,
            None,
        ),
        (
            "the same cycle",
            "sql_query (never cached)",
            hand,
            "library via diesel::update",
            via_diesel,
            None,
        ),
    ];
    for (figure, baseline_name, baseline, library_name, library, goal) in figures {
        let (ratio, min, max) = paired_ratio(library, baseline);
        results.push(Row {
            section: B::OVERHEAD_SECTION,
            backend: B::NAME.into(),
            figure: figure.into(),
            baseline_name: baseline_name.into(),
            baseline: median(baseline),
            library_name: library_name.into(),
            library: median(library),
            unit: "µs/cycle".into(),
            ratio,
            range: Some((min, max)),
            better: Better::Lower,
            goal,
        });
    }
    Ok(())
}

/// Round trips and statements of one claim cycle: library, by hand, via diesel::update.
pub fn round_trips<B: Ops>(url: &str, results: &mut Results) -> Res<()> {
    let (mut conn, proxy) = proxied::<B>(url)?;
    B::free_rows(&mut conn)?;
    let lease = lease()?;
    let log = StatementLog::default();
    log.attach(&mut conn);
    let mut count = |cycle: &mut dyn FnMut(&mut B::Conn) -> Res<()>| -> Res<(f64, f64)> {
        cycle(&mut conn)?; // warm: whatever is cached is cached now
        let rt = proxy.as_ref().map_or(0, |p| p.round_trips());
        let st = log.statements.load(Ordering::SeqCst);
        cycle(&mut conn)?;
        let statements = (log.statements.load(Ordering::SeqCst) - st) as f64;
        let round_trips = proxy
            .as_ref()
            .map_or(statements, |p| (p.round_trips() - rt) as f64);
        Ok((round_trips, statements))
    };
    let library = count(&mut |c| B::lib_cycle(c, 1, &Claim::new(OWNER)?, lease))?;
    let hand_cached =
        count(&mut |c| B::hand_cycle::<true>(c, 1, OWNER, &new_token(), LEASE_MICROS))?;
    let hand = count(&mut |c| B::hand_cycle::<false>(c, 1, OWNER, &new_token(), LEASE_MICROS))?;
    let via_diesel = count(&mut |c| B::lib_cycle_diesel_update(c, 1, &Claim::new(OWNER)?, lease))?;
    let kind = if proxy.is_some() {
        "network round trips"
    } else {
        "in-process round trips"
    };
    for (figure, baseline_name, baseline, library_name, library) in [
        (
            format!("{kind} per cycle"),
            "hand, prepared once",
            hand_cached.0,
            "library",
            library.0,
        ),
        (
            "statements per cycle".to_owned(),
            "hand, prepared once",
            hand_cached.1,
            "library",
            library.1,
        ),
        (
            format!("{kind} per cycle"),
            "sql_query (never cached)",
            hand.0,
            "library",
            library.0,
        ),
        (
            format!("{kind} per cycle"),
            "sql_query (never cached)",
            hand.0,
            "library via diesel::update",
            via_diesel.0,
        ),
    ] {
        results.push(Row {
            section: B::OVERHEAD_SECTION,
            backend: B::NAME.into(),
            figure,
            baseline_name: baseline_name.into(),
            baseline,
            library_name: library_name.into(),
            library,
            unit: "".into(),
            ratio: library / baseline,
            range: None,
            better: Better::Lower,
            goal: None,
        });
    }
    Ok(())
}
