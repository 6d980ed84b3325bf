//! The keeper under faults (scenario 6, keeper.rs), part (b): a throwaway PostgreSQL stopped
//! for longer than the lease, then restarted quickly; each "held" the work saw checked against
//! the database.
use std::time::Duration;

use diesel::PgConnection;
use diesel_lease::prelude::*;
use diesel_lease::{Keeper, Kept, LossReason};

use crate::db::{self, fault_jobs, FaultConn, Kind, Pool, Witness};
use crate::keeper_setup::{keep, lease, prepare, settings, wait_rounds, LEASE};
use crate::report::{ahead_by, micros, millis, Outcome};
use crate::server::Server;

/// (b) A throwaway PostgreSQL stopped for longer than the lease while the keeper keeps rows: the
/// loss is reported before the lease can have run out by the database's clock; then restarted
/// quickly: renewals resume or the loss is reported, and no "held" is false.
pub(crate) fn server_stopped(outcome: &mut Outcome) -> Result<(), String> {
    // The moment of the report is stamped by the suite's other PostgreSQL server, the one at
    // PG_DATABASE_URL: the throwaway one is down then. Both read this machine's clock.
    let mut witness = Witness::connect()?;
    let server = Server::start()?;
    let url = server.url();
    let pool = prepare::<PgConnection>(&url)?;
    let keeper =
        Keeper::start(db::pool::<PgConnection>(&url, 2), settings()).map_err(|e| e.to_string())?;
    let (ids, token, kept) = keep(&keeper, &pool, 5, "kept-b")?;
    wait_rounds(&keeper, 3);

    server.pg_ctl(&["stop", "-m", "immediate"])?;
    let stopped = crate::timer();
    while kept.is_held() && stopped.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(1));
    }
    let reported = witness.micros()?;
    let reported_after = stopped.elapsed();
    let loss = kept.check().err();
    let mut held_while_down = 0;
    while stopped.elapsed() < LEASE + Duration::from_millis(500) {
        if kept.is_held() {
            held_while_down += 1;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    server.pg_ctl(&["start"])?;
    server.accepting()?;
    let conn = &mut *pool.get().map_err(|e| e.to_string())?;
    // The last renewal before the stop: renewals logged before the server's new start.
    let last_renewal = conn
        .number(&format!(
            "SELECT {} AS n FROM fault_claims WHERE tbl = 'fault_jobs' AND token = '{token}' \
             AND at < pg_postmaster_start_time()",
            Kind::Postgres.epoch_micros("MAX(at)")
        ))
        .map_err(|e| format!("the last renewal: {e}"))?
        .unwrap_or(0);
    let runs_out = last_renewal + micros(LEASE);
    outcome.figure(
        "(b) server stopped for longer than the lease: the loss the work was told",
        loss.as_ref().map_or("none".into(), |lost| {
            format!(
                "{:?}, {} ms after the stop",
                lost.reason,
                reported_after.as_millis()
            )
        }),
    );
    outcome.figure(
        "(b) told before the lease ran out by the database's clock (its last renewal + lease), by",
        ahead_by(runs_out - reported),
    );
    outcome.figure(
        "(b) checks that said held while the server was down",
        held_while_down,
    );
    outcome.check(
        loss.as_ref().map(|lost| lost.reason) == Some(LossReason::Unconfirmed),
        || format!("the stop was reported as {loss:?}, not Unconfirmed"),
    );
    outcome.check(last_renewal > 0 && reported < runs_out, || {
        format!(
            "the loss was reported at {reported} µs, not before the lease ran out at {runs_out} µs \
             (the last renewal at {last_renewal} µs, by the database's clock)"
        )
    });
    outcome.check(held_while_down == 0, || {
        format!("{held_while_down} checks said held while the server was down, after the loss")
    });
    let after_start = verify_held(&kept, &pool, &token, Duration::from_millis(1500));
    outcome.figure(
        "(b) after the server came back: checks held and confirmed by a fresh guarded write; lost; false held",
        after_start.text(),
    );
    outcome.check(after_start.false_held == 0, || {
        format!(
            "{} checks said held when the database said otherwise",
            after_start.false_held
        )
    });
    drop(kept);

    // Restarted quickly: shorter than the trust.
    let (_, token, kept) = keep(&keeper, &pool, 5, "kept-b2")?;
    wait_rounds(&keeper, 3);
    let restarted = std::thread::scope(|scope| {
        let restart = scope.spawn(|| {
            let started = crate::timer();
            server
                .pg_ctl(&["restart", "-m", "fast"])
                .map(|()| started.elapsed())
        });
        let seen = verify_held(&kept, &pool, &token, Duration::from_secs(4));
        (restart.join(), seen)
    });
    let (restart, seen) = restarted;
    let took = restart.map_err(|_| "pg_ctl panicked".to_owned())??;
    let end = kept.check();
    let conn = &mut *pool.get().map_err(|e| e.to_string())?;
    let first_renewal = conn
        .number(&format!(
            "SELECT CAST(EXTRACT(EPOCH FROM (MIN(at) - pg_postmaster_start_time())) * 1000000 \
             AS BIGINT) AS n FROM fault_claims WHERE tbl = 'fault_jobs' AND token = '{token}' \
             AND at >= pg_postmaster_start_time()"
        ))
        .map_err(|e| format!("the first renewal: {e}"))?;
    outcome.figure(
        "(b) restarted quickly: pg_ctl restart took; the keeper's first renewal after the server started, by its clock",
        format!(
            "{}; {}",
            millis(took),
            first_renewal.map_or("none".into(), |us| millis(Duration::from_micros(
                us.max(0).unsigned_abs()
            )))
        ),
    );
    outcome.figure(
        "(b) restarted quickly, for 4 s: checks held and confirmed; lost; false held; unreachable",
        format!("{}; {}", seen.text(), seen.unreachable),
    );
    outcome.figure(
        "(b) at the end",
        match &end {
            Ok(()) => "held: renewals resumed".to_owned(),
            Err(lost) => format!("lost ({:?})", lost.reason),
        },
    );
    outcome.check(seen.false_held == 0, || {
        format!(
            "{} checks said held when the database said otherwise",
            seen.false_held
        )
    });
    outcome.check(end.is_err() || seen.confirmed > 0, || {
        "held at the end, yet never confirmed by the database".into()
    });
    let _ = ids;
    Ok(())
}

/// What a work loop saw while checking its lease, each "held" checked against the database.
#[derive(Debug, Default)]
struct Verified {
    /// Held, and a write guarded by the token and the lease (by the database's clock) changed
    /// every row held.
    confirmed: u64,
    /// Reported lost.
    lost: u64,
    /// Held, but the database said the lease was not: the keeper was wrong.
    false_held: u64,
    /// Held, and the database could not be asked.
    unreachable: u64,
}

impl Verified {
    fn text(&self) -> String {
        format!("{}; {}; {}", self.confirmed, self.lost, self.false_held)
    }
}

fn verify_held(
    kept: &Kept<fault_jobs::table>,
    pool: &Pool<PgConnection>,
    token: &str,
    for_: Duration,
) -> Verified {
    let mut seen = Verified::default();
    let started = crate::timer();
    while started.elapsed() < for_ {
        let held = kept.held().keys();
        if kept.is_held() {
            let written = pool.get().map_err(|e| e.to_string()).and_then(|mut conn| {
                conn.guarded_write(token, held, Some(lease()))
                    .map_err(|e| e.to_string())
            });
            match written {
                Ok(rows) if rows == held.len() => seen.confirmed += 1,
                Ok(_) => seen.false_held += 1,
                Err(_) => seen.unreachable += 1,
            }
        } else {
            seen.lost += 1;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    seen
}
