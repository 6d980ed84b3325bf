//! Galera's contention (scenario 5, galera.rs): 2 threads per node claiming 20 rows (one by
//! key, or two in a batch), holding them a moment and releasing them. A claim that loses
//! certification is "not claimed": every claim is answered, none returns an error, and no row
//! ever has two holders.
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use diesel::prelude::*;
use diesel::MysqlConnection;
use diesel_lease::prelude::*;

use crate::calls::Calls;
use crate::db::{self, fault_jobs, FaultConn, Kind};
use crate::fleet;
use crate::galera_cluster::{Cluster, DATABASE, NODES};
use crate::report::Outcome;
use crate::shared::{errors_text, lock};

pub(crate) const CONTENDED_ROWS: i64 = 20;
const CONTENTION: Duration = Duration::from_secs(4);
/// Longer than any contention run: a takeover there would be a second holder, not an expiry.
pub(crate) const LONG_LEASE: Duration = Duration::from_secs(60);

/// Waits for the contending threads; any still waiting for a server's answer well after the run
/// ended has its connection killed on every node, so that the scenario ends, and fails. How
/// many. (Seen before issue 15's fix: a batch claim's `SELECT .. FOR UPDATE SKIP LOCKED`, whose
/// previous run had failed past its column header, waiting for ever in the client while the
/// server listed the session as idle; see docs/upstream/mysql-statement-hang.md.)
fn unstick(cluster: &Cluster, threads: &[std::thread::JoinHandle<()>]) -> Result<u64, String> {
    let waiting = crate::timer();
    while waiting.elapsed() < CONTENTION + Duration::from_secs(30) {
        if threads.iter().all(std::thread::JoinHandle::is_finished) {
            return Ok(0);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let stuck = threads
        .iter()
        .filter(|thread| !thread.is_finished())
        .count();
    for node in 0..NODES {
        let conn = &mut MysqlConnection::establish(&cluster.server_url(node))
            .map_err(|e| format!("node {}: {e}", node + 1))?;
        let sessions = conn
            .numbers(&format!(
                "SELECT ID AS n FROM information_schema.PROCESSLIST WHERE DB = '{DATABASE}' \
                 AND ID <> CONNECTION_ID()"
            ))
            .map_err(|e| e.to_string())?;
        for id in sessions.into_iter().flatten() {
            // A session gone meanwhile is as good as killed.
            let _ = diesel::sql_query(format!("KILL CONNECTION {id}")).execute(conn);
        }
    }
    Ok(stuck as u64)
}

/// What the contending threads saw.
#[derive(Debug, Default)]
struct Contention {
    won: u64,
    refused: u64,
    released: u64,
    /// A release that found a row it had won no longer its own.
    lost_while_held: u64,
    /// A win of a row that another thread was holding at that moment.
    double_holders: u64,
    claim_errors: BTreeMap<String, u64>,
    release_errors: BTreeMap<String, u64>,
}

pub(crate) fn contention(
    cluster: &Cluster,
    calls: &Arc<Calls>,
    outcome: &mut Outcome,
) -> Result<(), String> {
    let pool = cluster.pool(0, 2);
    {
        let conn = &mut *pool.get().map_err(|e| e.to_string())?;
        db::execute(conn, &Kind::Mysql.schema()).map_err(|e| format!("the schema: {e}"))?;
        conn.insert_jobs(CONTENDED_ROWS)
            .map_err(|e| format!("the rows: {e}"))?;
    }
    cluster.settle(CONTENDED_ROWS)?;
    let before = cluster.conflicts()?;
    let lost_before = diesel_lease::LostConflicts::since_start();
    let holders: Arc<Vec<AtomicU32>> =
        Arc::new((0..=CONTENDED_ROWS).map(|_| AtomicU32::new(0)).collect());
    let seed = Arc::new(AtomicU64::new(u64::from(std::process::id())));
    let seen = Arc::new(Mutex::new(Contention::default()));
    let threads: Vec<_> = (0..NODES * 2)
        .map(|thread| {
            let url = cluster.url(thread % NODES);
            let (holders, seed, seen, calls) = (
                Arc::clone(&holders),
                Arc::clone(&seed),
                Arc::clone(&seen),
                Arc::clone(calls),
            );
            std::thread::spawn(move || {
                let name = format!("contender-{thread}");
                contend(&url, &name, &holders, &seed, &seen, &calls)
            })
        })
        .collect();
    let unanswered = unstick(cluster, &threads)?;
    for thread in threads {
        if thread.join().is_err() {
            outcome.fail("a contending thread panicked".into());
        }
    }
    let after = cluster.conflicts()?;
    let lost_after = diesel_lease::LostConflicts::since_start();
    let lost = lost_after.total() - lost_before.total();
    let (lost_by_key, lost_batch) = (
        lost_after.row_claims - lost_before.row_claims,
        lost_after.batch_claims - lost_before.batch_claims,
    );
    let mut seen = std::mem::take(&mut *lock(&seen));
    // A statement the server never answered ends with the connection the watchdog killed: that
    // error is the watchdog's, counted below, not the claim's.
    let killed: BTreeMap<String, u64> = if unanswered > 0 {
        let (killed, answered) = std::mem::take(&mut seen.claim_errors)
            .into_iter()
            .partition(|(kind, _)| {
                kind.contains("Lost connection") || kind.contains("Server has gone away")
            });
        seen.claim_errors = answered;
        killed
    } else {
        BTreeMap::new()
    };
    outcome.figure(
        "contention: calls never answered (their connections killed 30 s after the run)",
        format!("{unanswered} ({})", errors_text(&killed)),
    );
    outcome.check(unanswered == 0, || {
        format!(
            "{unanswered} calls never answered, their connections killed ({})",
            errors_text(&killed)
        )
    });
    let synced = cluster.synced_pool(0);
    let conn = &mut *synced.get().map_err(|e| e.to_string())?;
    let counted: Vec<i64> = fault_jobs::table
        .select(fault_jobs::done_count)
        .load(conn)
        .map_err(|e| e.to_string())?;
    let counted: i64 = counted.iter().sum();
    let takeovers = conn
        .takeovers(
            "fault_jobs",
            Lease::new(LONG_LEASE).map_err(|e| e.to_string())?,
        )
        .map_err(|e| e.to_string())?;
    let cert_failures = after.0.saturating_sub(before.0);
    let bf_aborts = after.1.saturating_sub(before.1);
    outcome.figure(
        "contention: threads (2 per node), rows, time",
        format!(
            "{}, {CONTENDED_ROWS}, {:.0} s",
            NODES * 2,
            CONTENTION.as_secs_f64()
        ),
    );
    outcome.figure(
        "contention: claims won, refused (certification failures among them)",
        format!("{}, {}", seen.won, seen.refused),
    );
    outcome.figure(
        "contention: certification failures, brute-force aborts (wsrep status, all nodes)",
        format!("{cert_failures}, {bf_aborts}"),
    );
    outcome.figure(
        "contention: lost conflicts the library counted (`LostConflicts::since_start`): claims by key, batch claims",
        format!("{lost_by_key}, {lost_batch}"),
    );
    outcome.figure(
        "contention: claims that returned an error",
        errors_text(&seen.claim_errors),
    );
    outcome.figure(
        "contention: rows won while another thread held them",
        seen.double_holders,
    );
    outcome.figure(
        "contention: takeovers logged by the trigger (a token replaced by another)",
        takeovers.count,
    );
    outcome.figure(
        "contention: releases; of them, of a row no longer held",
        format!("{}, {}", seen.released, seen.lost_while_held),
    );
    outcome.figure(
        "contention: holds counted by the guarded releases in the database",
        counted,
    );
    outcome.figure(
        "contention: releases that returned an error",
        errors_text(&seen.release_errors),
    );
    outcome.check(seen.claim_errors.is_empty(), || {
        format!(
            "claims returned errors: {}",
            errors_text(&seen.claim_errors)
        )
    });
    outcome.check(seen.double_holders == 0, || {
        format!("{} rows won while another held them", seen.double_holders)
    });
    outcome.check(takeovers.count == 0, || {
        format!(
            "{} tokens replaced by another within a {LONG_LEASE:?} lease: two holders",
            takeovers.count
        )
    });
    outcome.check(seen.lost_while_held == 0, || {
        format!("{} rows lost while held", seen.lost_while_held)
    });
    outcome.check(counted == seen.released as i64, || {
        format!(
            "the database counted {counted} guarded releases, the threads {}",
            seen.released
        )
    });
    outcome.check(cert_failures + bf_aborts > 0, || {
        "no certification conflict: the contention tested nothing".into()
    });
    outcome.check(seen.won > 0, || "no claim won".into());
    // Each is a claim refused, and certification failures reach the claims: some are counted.
    outcome.check(lost == lost_by_key + lost_batch, || {
        format!("{lost} lost conflicts counted, not all of them claims")
    });
    outcome.check(lost > 0 && lost <= seen.refused, || {
        format!(
            "{lost} lost conflicts counted, of {} claims refused",
            seen.refused
        )
    });
    Ok(())
}

/// Claims rows among the contended ones until the time is up: by key, or the first two free
/// from a random row on; holds what it won for a moment and releases it.
fn contend(
    url: &str,
    name: &str,
    holders: &[AtomicU32],
    seed: &AtomicU64,
    seen: &Mutex<Contention>,
    calls: &Calls,
) {
    let pool = db::pool::<MysqlConnection>(url, 1);
    let Ok(mut conn) = pool.get() else {
        *lock(seen)
            .claim_errors
            .entry("no connection".into())
            .or_default() += 1;
        return;
    };
    let lease = Lease::new(LONG_LEASE).expect("a valid lease");
    let started = crate::timer();
    let mut round = 0_u64;
    while started.elapsed() < CONTENTION {
        round += 1;
        let random = seed
            .fetch_add(0x9E37_79B9_7F4A_7C15, Ordering::Relaxed)
            .wrapping_mul(6_364_136_223_846_793_005);
        let row = 1 + (random >> 33) as i64 % CONTENDED_ROWS;
        // The rows won, as their claim holds them: by one row's claim or a batch's, in turn.
        let claimed = calls.timed("contention: claim", || {
            Claim::new(name).and_then(|claim| {
                if round.is_multiple_of(2) {
                    fault_jobs::table
                        .claim_row(row, lease)
                        .by(&claim)
                        .returning(fault_jobs::id)
                        .run::<i64>(&mut *conn)
                        .map(|claimed| claimed.won().map(|won| won.into_parts().1))
                } else {
                    fault_jobs::table
                        .claim_batch(2, lease)
                        .by(&claim)
                        .filter(fault_jobs::id.ge(row))
                        .order_by(fault_jobs::id)
                        .returning(fault_jobs::id)
                        .run::<i64>(&mut *conn)
                        .map(|batch| (!batch.is_empty()).then(|| batch.into_parts().1))
                }
            })
        });
        let held = match claimed {
            Ok(Some(held)) => held,
            Ok(None) => {
                lock(seen).refused += 1;
                continue;
            }
            Err(error) => {
                let how = if round.is_multiple_of(2) {
                    "claim_row"
                } else {
                    "claim_batch"
                };
                *lock(seen)
                    .claim_errors
                    .entry(format!("{how}: {}", fleet::error_kind(&error)))
                    .or_default() += 1;
                std::thread::sleep(Duration::from_millis(20));
                continue;
            }
        };
        let ids = held.keys().to_vec();
        let mut doubles = 0;
        for id in &ids {
            if holders[*id as usize].fetch_add(1, Ordering::SeqCst) != 0 {
                doubles += 1;
            }
        }
        std::thread::sleep(Duration::from_millis(2));
        // No longer counted as held before the release is sent: a rival may win the row as
        // soon as the release commits, never before.
        for id in &ids {
            holders[*id as usize].fetch_sub(1, Ordering::SeqCst);
        }
        let released = calls.timed("contention: release", || {
            held.release()
                .set(fault_jobs::done_count.eq(fault_jobs::done_count + 1))
                .run(&mut *conn)
        });
        let mut seen = lock(seen);
        seen.won += ids.len() as u64;
        seen.double_holders += doubles;
        match released {
            Ok(released) => {
                seen.released += released.len() as u64;
                seen.lost_while_held += (ids.len() - released.len()) as u64;
            }
            Err(error) => {
                *seen
                    .release_errors
                    .entry(fleet::error_kind(&error))
                    .or_default() += 1;
            }
        }
    }
}
