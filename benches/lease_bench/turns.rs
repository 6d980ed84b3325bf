//! Measurement 3, agent turns: `AgentLocks::acquire` then `release` on N threads, against the
//! same two transactions by hand (prepared once: the like-for-like baseline; and through
//! `sql_query`); and the round trips and statements of one acquire and one release.
use std::sync::atomic::Ordering;

use diesel::connection::SimpleConnection;
use diesel_lease_agent::TurnRef;

use crate::backend::{self, Ops};
use crate::measure::{interleave, median, paired_ratio, StatementLog, Variant};
use crate::results::{Better, Goal, Results, Row};
use crate::shared::Plan;
use crate::shared::{check, Res};
use crate::suite::{hand_turn, lib_turn, locks, new_token, proxied, throughput, THREADS};

/// The measurement's number, in `--only` and in docs/benchmarks.md.
pub const SECTION: u32 = crate::measurements::TURNS;

pub fn run<B: Ops>(url: &str, conn: &mut B::Conn, plan: &Plan, results: &mut Results) -> Res<()> {
    let ids = B::agent_rows(conn, "bench-turn", 16)?;
    let locks = locks()?;
    for threads in THREADS {
        let pool = backend::pool::<B>(url, threads as u32, false)?;
        let (pool, ids, locks) = (&pool, &ids, &locks);
        let slice = plan.thread_slice;
        let mut variants = [
            Variant::new("sql_query", || {
                throughput::<B>(pool, threads, slice, false, None, &|c, t| {
                    hand_turn::<B, false>(c, &ids[t].0, &ids[t].1, &new_token())
                })
            }),
            Variant::new("library", || {
                throughput::<B>(pool, threads, slice, false, None, &|c, t| {
                    lib_turn::<B>(c, locks, &ids[t].0, &ids[t].1, &new_token())
                })
            }),
            Variant::new("hand, prepared once", || {
                throughput::<B>(pool, threads, slice, false, None, &|c, t| {
                    hand_turn::<B, true>(c, &ids[t].0, &ids[t].1, &new_token())
                })
            }),
        ];
        let samples = interleave(plan.thread_rounds, &mut variants)?;
        for (baseline, baseline_name) in
            [(2, "hand, prepared once"), (0, "sql_query (never cached)")]
        {
            let (ratio, min, max) = paired_ratio(&samples[1], &samples[baseline]);
            results.push(Row {
                section: SECTION,
                backend: B::NAME.into(),
                figure: format!("turns/s (acquire + release), {threads} thread(s)"),
                baseline_name: baseline_name.into(),
                baseline: median(&samples[baseline]),
                library_name: "library".into(),
                library: median(&samples[1]),
                unit: "turns/s".into(),
                ratio,
                range: Some((min, max)),
                better: Better::Higher,
                goal: None,
            });
        }
    }
    Ok(())
}

/// Round trips and statements of one acquire and one release, on a connection that goes
/// through a counting proxy (SQLite: statements only; it has no network).
pub fn round_trips<B: Ops>(url: &str, results: &mut Results) -> Res<()> {
    let (mut conn, proxy) = proxied::<B>(url)?;
    let ids = B::agent_rows(&mut conn, "bench-rt", 1)?;
    let (chat, user) = (&ids[0].0, &ids[0].1);
    let locks = locks()?;
    let log = StatementLog::default();
    log.attach(&mut conn);
    const TIMES: u64 = 5;
    let counters = |log: &StatementLog| {
        (
            proxy.as_ref().map_or(0, |p| p.round_trips()),
            log.statements.load(Ordering::SeqCst),
        )
    };
    // (acquire round trips, acquire statements, release round trips, release statements)
    let mut measure_turns = |acquire: &mut dyn FnMut(&mut B::Conn, &str) -> Res<()>,
                             release: &mut dyn FnMut(&mut B::Conn, &str) -> Res<()>|
     -> Res<[f64; 4]> {
        let mut counts = [0u64; 4];
        for n in 0..TIMES + 2 {
            let token = new_token();
            let (rt0, st0) = counters(&log);
            acquire(&mut conn, &token)?;
            let (rt1, st1) = counters(&log);
            release(&mut conn, &token)?;
            let (rt2, st2) = counters(&log);
            if n >= 2 {
                // the first two turns prepare what is cached
                for (k, d) in [rt1 - rt0, st1 - st0, rt2 - rt1, st2 - st1]
                    .into_iter()
                    .enumerate()
                {
                    counts[k] += d;
                }
            }
        }
        let mut per = counts.map(|c| c as f64 / TIMES as f64);
        if proxy.is_none() {
            per[0] = per[1];
            per[2] = per[3];
        }
        Ok(per)
    };
    let library = measure_turns(
        &mut |c, token| Ok(locks.acquire(c, chat, user, &TurnRef::new(token)?)?),
        &mut |c, token| {
            check(
                locks.release(c, chat, user, &TurnRef::new(token)?)?,
                "release",
            )
        },
    )?;
    let hand = measure_turns(
        &mut |c, token| B::hand_acquire::<false>(c, chat, user, token),
        &mut |c, token| B::hand_release::<false>(c, chat, user, token),
    )?;
    let prepared = measure_turns(
        &mut |c, token| B::hand_acquire::<true>(c, chat, user, token),
        &mut |c, token| B::hand_release::<true>(c, chat, user, token),
    )?;
    StatementLog::detach(&mut conn);
    if let Some(proxy) = &proxy {
        // Where the round trips go: one statement of each kind, alone.
        let mut probe = |f: &mut dyn FnMut(&mut B::Conn) -> Res<()>| -> Res<u64> {
            f(&mut conn)?; // warm: whatever is cached is cached now
            let before = proxy.round_trips();
            f(&mut conn)?;
            Ok(proxy.round_trips() - before)
        };
        let begin = probe(&mut |c| Ok(c.batch_execute("BEGIN")?))?;
        let commit = probe(&mut |c| Ok(c.batch_execute("COMMIT")?))?;
        let uncached = probe(&mut |c| B::hand_release_chat::<false>(c, chat, "none"))?;
        let cached = probe(&mut |c| B::hand_release_chat::<true>(c, chat, "none"))?;
        results.note(format!(
            "{}: network round trips of one statement alone: BEGIN {begin}, COMMIT {commit} \
             (Diesel's transaction manager sends both through batch_execute), an UPDATE prepared \
             at every execution (diesel::update, sql_query) {uncached}, the same UPDATE prepared \
             once (diesel_lease::update) {cached}",
            B::NAME
        ));
    }
    let kind = if proxy.is_some() {
        "network round trips"
    } else {
        "in-process round trips"
    };
    let rows = [
        (
            format!("{kind} per acquire"),
            "hand, prepared once",
            prepared[0],
            library[0],
            Some(Goal::LibraryAtMost(4.0)),
        ),
        (
            format!("{kind} per release"),
            "hand, prepared once",
            prepared[2],
            library[2],
            None,
        ),
        (
            "statements per acquire".to_owned(),
            "hand, prepared once",
            prepared[1],
            library[1],
            None,
        ),
        (
            "statements per release".to_owned(),
            "hand, prepared once",
            prepared[3],
            library[3],
            None,
        ),
        (
            format!("{kind} per acquire"),
            "sql_query (never cached)",
            hand[0],
            library[0],
            None,
        ),
    ];
    for (figure, baseline_name, baseline, library, goal) in rows {
        results.push(Row {
            section: SECTION,
            backend: B::NAME.into(),
            figure,
            baseline_name: baseline_name.into(),
            baseline,
            library_name: "library".into(),
            library,
            unit: "".into(),
            ratio: library / baseline,
            range: None,
            better: Better::Lower,
            goal,
        });
    }
    Ok(())
}
