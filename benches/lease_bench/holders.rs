//! Measurement 4: 10,000 turns held at once through a pool of 4 connections, against advisory
//! locks, which pin a connection per holder.
use std::time::{Duration, Instant};

use diesel::r2d2::{ConnectionManager, Pool};
use diesel_lease_agent::TurnRef;

use crate::backend::{self, Ops};
use crate::results::{Better, Goal, Results, Row};
use crate::shared::Plan;
use crate::shared::Res;
use crate::suite::locks;

/// The measurement's number, in `--only` and in docs/benchmarks.md.
pub const SECTION: u32 = crate::measurements::HOLDERS;
/// Connections of the pool.
pub const POOL: u32 = 4;

pub fn run<B: Ops>(url: &str, conn: &mut B::Conn, plan: &Plan, results: &mut Results) -> Res<()> {
    let count = plan.holders;
    let ids = B::agent_rows(conn, "bench-h", count)?;
    let pool = backend::pool::<B>(url, POOL, false)?;
    let locks = locks()?;
    let started = Instant::now();
    std::thread::scope(|scope| -> Res<()> {
        let handles: Vec<_> = (0..POOL as usize)
            .map(|worker| {
                let (pool, ids, locks) = (&pool, &ids, &locks);
                scope.spawn(move || -> Res<()> {
                    for n in (worker..ids.len()).step_by(POOL as usize) {
                        let turn = TurnRef::new(&format!("bench-h-turn-{n}"))?;
                        locks.acquire(&mut *pool.get()?, &ids[n].0, &ids[n].1, &turn)?;
                    }
                    Ok(())
                })
            })
            .collect();
        for handle in handles {
            handle
                .join()
                .unwrap_or_else(|_| Err("a holder thread panicked".into()))?;
        }
        Ok(())
    })?;
    let took = started.elapsed();
    let state = pool.state();
    let pinned = state.connections - state.idle_connections;
    let held = B::count_holders(conn)? as f64;
    results.note(format!(
        "{}: {count} turns acquired through a pool of {POOL} in {:.1} s ({:.0} acquires/s); \
         afterwards {} of {} connections idle",
        B::NAME,
        took.as_secs_f64(),
        count as f64 / took.as_secs_f64(),
        state.idle_connections,
        state.connections
    ));
    drop(pool);

    let (advisory_held, advisory_pinned, baseline_name) = match B::ADVISORY {
        Some(name) => {
            let pool = Pool::builder()
                .max_size(POOL)
                .min_idle(Some(POOL))
                .test_on_check_out(false)
                .connection_timeout(Duration::from_millis(250))
                .build(ConnectionManager::<B::Conn>::new(url))?;
            let mut pinned = Vec::new();
            let mut refused = 0;
            for key in 1..=count as i64 {
                // A holder keeps its connection: the lock is its session's.
                match pool.get() {
                    Ok(mut conn) => {
                        if B::advisory_lock(&mut conn, 900_000 + key)? {
                            pinned.push(conn);
                        }
                    }
                    Err(_) => {
                        refused += 1;
                        break;
                    }
                }
            }
            let held = pinned.len() as f64;
            results.note(format!(
                "{}: {name} through a pool of {POOL}: {held} holders, then holder {} waited \
                 250 ms for a connection and gave up ({refused} refused)",
                B::NAME,
                pinned.len() + 1
            ));
            for conn in &mut pinned {
                B::advisory_unlock_all(conn)?;
            }
            drop(pinned);
            (held, held, name.to_owned())
        }
        None => (f64::NAN, f64::NAN, "no advisory locks in SQLite".to_owned()),
    };
    for (figure, baseline, library, better, goal) in [
        (
            "holders at once (turns, both locks each)",
            advisory_held,
            held,
            Better::Higher,
            Goal::LibraryAtLeast(10_000.0),
        ),
        (
            "connections pinned by the holders",
            advisory_pinned,
            pinned as f64,
            Better::Lower,
            Goal::LibraryAtMost(0.0),
        ),
    ] {
        results.push(Row {
            section: SECTION,
            backend: B::NAME.into(),
            figure: figure.into(),
            baseline_name: baseline_name.clone(),
            baseline,
            library_name: "library".into(),
            library,
            unit: "".into(),
            ratio: library / baseline,
            range: None,
            better,
            goal: Some(goal),
        });
    }
    Ok(())
}
