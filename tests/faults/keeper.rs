//! Scenario 6, the keeper under faults: a `Keeper` renewing claims on `fault_jobs` (lease 2 s,
//! renewed every 200 ms, trusted for the lease less 500 ms after each confirmed renewal) while
//! (a) its connection is killed (PostgreSQL, MariaDB), (b) the server is stopped for longer than
//! the lease, then restarted quickly (a throwaway PostgreSQL, `-m fast`), and (c) its rows are taken by
//! another token written by SQL (all three). Every outcome that matters is read from the
//! database: the renewals and the takeover from the triggers' log, and each write of the work
//! from a trigger of its own.
use std::sync::{Arc, Mutex};
use std::time::Duration;

use diesel::connection::SimpleConnection;
use diesel::r2d2::{ConnectionManager, CustomizeConnection};
use diesel::PgConnection;
use diesel_lease::prelude::*;
use diesel_lease::{Keepable, Keeper, KeeperSettings, Kept, LeaseLost, LossReason};

use crate::db::{self, fault_jobs, FaultConn, Kind, Pool, Witness};
use crate::report::{ahead_by, micros, millis, Outcome};
use crate::server::Server;

pub(crate) const LEASE: Duration = Duration::from_secs(2);
const EVERY: Duration = Duration::from_millis(200);
const MARGIN: Duration = Duration::from_millis(500);
const KILLS: usize = 5;
/// The token an operator's SQL writes over the kept rows.
const INTRUDER: &str = "intruder";

pub(crate) fn lease() -> Lease {
    Lease::new(LEASE).expect("a valid lease")
}

pub(crate) fn settings() -> KeeperSettings {
    KeeperSettings::new(lease()).every(EVERY).margin(MARGIN)
}

pub fn run<C: FaultConn>(url: &str, outcome: &mut Outcome) -> Result<(), String>
where
    fault_jobs::table: Keepable<C>,
{
    let pool = prepare::<C>(url)?;
    outcome.figure(
        "lease; renewed every; trusted after a confirmed renewal for",
        format!(
            "{}; {}; the lease less {}",
            millis(LEASE),
            millis(EVERY),
            millis(MARGIN)
        ),
    );
    if C::KIND == Kind::Sqlite {
        outcome.figure(
            "(a) connection killed: kills; connections the keeper's pool opened",
            "— (no server connection)",
        );
    } else {
        connection_killed::<C>(url, &pool, outcome)?;
    }
    taken_out_of_band::<C>(url, &pool, outcome)?;
    if C::KIND == Kind::Postgres {
        server_stopped(outcome)?;
    } else {
        outcome.figure(
            "(b) server stopped for longer than the lease: the loss the work was told",
            "— (a throwaway PostgreSQL)",
        );
    }
    Ok(())
}

/// The suite's tables made anew, 20 jobs, and the log of the work's writes.
fn prepare<C: FaultConn>(url: &str) -> Result<Pool<C>, String> {
    let pool = db::pool::<C>(url, 4);
    let conn = &mut *pool
        .get()
        .map_err(|e| format!("a connection to {url}: {e}"))?;
    db::execute(conn, &C::KIND.schema()).map_err(|e| format!("the schema: {e}"))?;
    db::execute(conn, &log_writes(C::KIND)).map_err(|e| format!("the writes' log: {e}"))?;
    conn.insert_jobs(20).map_err(|e| format!("the jobs: {e}"))?;
    Ok(pool)
}

/// A trigger that logs each write of the work (a change of `done_count`) with the token the row
/// has after it, and a table for the work's effects outside the rows, which no token guards.
fn log_writes(kind: Kind) -> Vec<String> {
    let now = kind.now();
    let insert = format!(
        "INSERT INTO fault_writes (row_id, token, at) VALUES (NEW.id, NEW.lease_token, {now})"
    );
    let (serial, timestamp, token) = match kind {
        Kind::Postgres => ("BIGSERIAL PRIMARY KEY", "TIMESTAMPTZ", "VARCHAR(255)"),
        Kind::Mysql => (
            "BIGINT AUTO_INCREMENT PRIMARY KEY",
            "DATETIME(6)",
            "VARCHAR(255) COLLATE utf8mb4_bin",
        ),
        Kind::Sqlite => ("INTEGER PRIMARY KEY", "TEXT", "TEXT"),
    };
    let mut sql = vec![
        "DROP TABLE IF EXISTS fault_writes".to_owned(),
        "DROP TABLE IF EXISTS fault_effects".to_owned(),
        format!(
            "CREATE TABLE fault_writes (id {serial}, row_id BIGINT NOT NULL, token {token}, \
             at {timestamp} NOT NULL)"
        ),
        format!(
            "CREATE TABLE fault_effects (id {serial}, token {token} NOT NULL, \
             at {timestamp} NOT NULL)"
        ),
    ];
    sql.extend(match kind {
        Kind::Postgres => vec![
            format!(
                "CREATE OR REPLACE FUNCTION fault_log_writes() RETURNS trigger LANGUAGE plpgsql \
                 AS $$ BEGIN IF NEW.done_count <> OLD.done_count THEN {insert}; END IF; \
                 RETURN NEW; END $$"
            ),
            "CREATE TRIGGER fault_log_writes AFTER UPDATE ON fault_jobs FOR EACH ROW \
             EXECUTE FUNCTION fault_log_writes()"
                .to_owned(),
        ],
        Kind::Mysql => vec![
            "DROP TRIGGER IF EXISTS fault_log_writes".to_owned(),
            format!(
                "CREATE TRIGGER fault_log_writes AFTER UPDATE ON fault_jobs FOR EACH ROW BEGIN \
                 IF NEW.done_count <> OLD.done_count THEN {insert}; END IF; END"
            ),
        ],
        Kind::Sqlite => vec![
            "DROP TRIGGER IF EXISTS fault_log_writes".to_owned(),
            format!(
                "CREATE TRIGGER fault_log_writes AFTER UPDATE ON fault_jobs FOR EACH ROW \
                 WHEN NEW.done_count <> OLD.done_count BEGIN {insert}; END"
            ),
        ],
    });
    sql
}

/// Remembers the session id of every connection its pool opens.
#[derive(Debug, Clone, Default)]
struct Sessions(Arc<Mutex<Vec<i64>>>);

fn session_sql(kind: Kind) -> &'static str {
    match kind {
        Kind::Postgres => "SELECT CAST(pg_backend_pid() AS BIGINT) AS n",
        Kind::Mysql => "SELECT CAST(CONNECTION_ID() AS SIGNED) AS n",
        Kind::Sqlite => "SELECT NULL AS n",
    }
}

impl<C: FaultConn> CustomizeConnection<C, diesel::r2d2::Error> for Sessions {
    fn on_acquire(&self, conn: &mut C) -> Result<(), diesel::r2d2::Error> {
        let id = conn
            .number(session_sql(C::KIND))
            .map_err(diesel::r2d2::Error::QueryError)?;
        lock(&self.0).extend(id);
        Ok(())
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Claims the next `count` jobs and hands them to `keeper`.
pub(crate) fn keep<C: FaultConn>(
    keeper: &Keeper<C>,
    pool: &Pool<C>,
    count: usize,
    owner: &str,
) -> Result<(Vec<i64>, String, Kept<fault_jobs::table>), String>
where
    fault_jobs::table: Keepable<C>,
{
    let batch = pool
        .get()
        .map_err(|e| e.to_string())?
        .claim_jobs(count, lease(), owner)
        .map_err(|e| format!("a claim: {e}"))?;
    if batch.len() != count {
        return Err(format!("claimed {} jobs, not {count}", batch.len()));
    }
    let kept = keeper
        .keep(batch.held())
        .map_err(|e| format!("keep: {e}"))?;
    Ok((
        batch.keys().to_vec(),
        batch.claim().token().to_owned(),
        kept,
    ))
}

pub(crate) fn wait_rounds<C: FaultConn>(keeper: &Keeper<C>, rounds: u64) {
    let until = keeper.rounds() + rounds;
    let started = crate::timer();
    while keeper.rounds() < until && started.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The renewals the triggers logged for `token` on row `row`: the largest gap between two, by
/// the database's clock, and how many there were.
fn renewal_gaps<C: FaultConn>(
    conn: &mut C,
    token: &str,
    row: i64,
) -> Result<(Duration, usize), String> {
    let ages = conn
        .numbers(&format!(
            "SELECT {} AS n FROM fault_claims WHERE tbl = 'fault_jobs' AND row_id = '{row}' \
             AND token = '{token}' ORDER BY id",
            C::KIND.micros_since("at")
        ))
        .map_err(|e| format!("the renewals' log: {e}"))?;
    let ages: Vec<i64> = ages.into_iter().flatten().collect();
    let gap = ages
        .windows(2)
        .map(|pair| pair[0] - pair[1])
        .max()
        .unwrap_or(0);
    Ok((Duration::from_micros(gap.max(0).unsigned_abs()), ages.len()))
}

/// (a) The keeper's own connection killed by another session, 5 times, 400 ms apart.
fn connection_killed<C: FaultConn>(
    url: &str,
    pool: &Pool<C>,
    outcome: &mut Outcome,
) -> Result<(), String>
where
    fault_jobs::table: Keepable<C>,
{
    let sessions = Sessions::default();
    // No test on checkout: a killed connection then reaches a renewal as its error, rather than
    // being replaced unseen by r2d2's test query, and the keeper must give it back as broken
    // (Diesel alone does not see a MariaDB connection the server killed as broken).
    let keeper_pool = Pool::builder()
        .max_size(1)
        .min_idle(Some(0))
        .test_on_check_out(false)
        .connection_timeout(Duration::from_secs(1))
        .connection_customizer(Box::new(sessions.clone()))
        .build_unchecked(ConnectionManager::<C>::new(url));
    let keeper = Keeper::start(keeper_pool, settings()).map_err(|e| e.to_string())?;
    let (ids, token, kept) = keep(&keeper, pool, 10, "kept-a")?;
    let conn = &mut *pool.get().map_err(|e| e.to_string())?;
    let (mut checks, mut not_held) = (0_u64, 0_u64);
    let mut sample = |for_: Duration| {
        let started = crate::timer();
        while started.elapsed() < for_ {
            checks += 1;
            if !kept.is_held() {
                not_held += 1;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    };
    let mut killed = Vec::new();
    for _ in 0..KILLS {
        sample(Duration::from_millis(400));
        // The connection the keeper opened after the last kill: under load its round after
        // the failed one may come later than 400 ms, and a kill of the dead session would
        // miss (the keeper reconnects at its next round after a failed one).
        let waited = crate::timer();
        while lock(&sessions.0).len() <= killed.len() {
            if waited.elapsed() > LEASE {
                return Err(format!(
                    "the keeper opened no connection within {} of a kill",
                    millis(LEASE)
                ));
            }
            sample(Duration::from_millis(20));
        }
        let Some(&session) = lock(&sessions.0).last() else {
            return Err("the keeper never opened a connection".into());
        };
        let kill = match C::KIND {
            Kind::Postgres => format!("SELECT pg_terminate_backend({session})"),
            _ => format!("KILL CONNECTION {session}"),
        };
        conn.batch_execute(&kill)
            .map_err(|e| format!("{kill}: {e}"))?;
        killed.push(session);
    }
    sample(Duration::from_secs(1));
    let fresh = conn
        .guarded_write(&token, &ids, Some(lease()))
        .map_err(|e| e.to_string())?;
    let (gap, renewals) = renewal_gaps(conn, &token, ids[0])?;
    let opened = lock(&sessions.0).len();
    let loss = kept.check().err();
    outcome.figure(
        "(a) connection killed: kills; connections the keeper's pool opened",
        format!("{}; {opened}", killed.len()),
    );
    outcome.figure(
        "(a) renewals of a row logged; the longest gap between two, by the database's clock",
        format!("{renewals}; {}", millis(gap)),
    );
    outcome.figure(
        "(a) checks of the work that found the lease not held",
        format!("{not_held} of {checks}"),
    );
    outcome.figure(
        "(a) rows still held and fresh at the end, by the database",
        format!("{fresh} of {}", ids.len()),
    );
    outcome.check(opened > KILLS, || {
        format!(
            "the keeper's pool opened {opened} connections for {KILLS} kills: the kills missed it"
        )
    });
    outcome.check(not_held == 0 && loss.is_none(), || {
        format!("the lease was reported lost ({not_held} checks; {loss:?}) though only a connection died")
    });
    outcome.check(fresh == ids.len(), || {
        format!("{fresh} of {} rows still held and fresh", ids.len())
    });
    outcome.check(gap < LEASE, || {
        format!(
            "a gap of {} between renewals: the lease ran out by the database's clock",
            millis(gap)
        )
    });
    Ok(())
}

/// What the work saw in (c).
#[derive(Debug, Default)]
struct Work {
    /// Guarded writes that changed the rows, and those the guard refused (0 rows).
    landed: u64,
    refused: u64,
    effects: u64,
    errors: u64,
    loss: Option<LeaseLost<i64>>,
    learned_at_round: u64,
}

/// (c) The kept rows taken by another token, written by SQL: the work learns of it, and no
/// write guarded by its token lands after it.
fn taken_out_of_band<C: FaultConn>(
    url: &str,
    pool: &Pool<C>,
    outcome: &mut Outcome,
) -> Result<(), String>
where
    fault_jobs::table: Keepable<C>,
{
    let keeper = Keeper::start(db::pool::<C>(url, 2), settings()).map_err(|e| e.to_string())?;
    let (ids, token, kept) = keep(&keeper, pool, 5, "kept-c")?;
    let list = ids
        .iter()
        .map(i64::to_string)
        .collect::<Vec<_>>()
        .join(", ");
    let (work, takeover_round) = std::thread::scope(|scope| {
        let work = scope.spawn(|| {
            let mut work = Work::default();
            let pool = db::pool::<C>(url, 1);
            let started = crate::timer();
            while started.elapsed() < Duration::from_secs(10) {
                if let Err(lost) = kept.check() {
                    work.learned_at_round = keeper.rounds();
                    work.loss = Some(lost);
                    break;
                }
                let Ok(mut conn) = pool.get() else {
                    work.errors += 1;
                    continue;
                };
                match conn.guarded_write(&token, &ids, None) {
                    Ok(0) => work.refused += 1,
                    Ok(_) => work.landed += 1,
                    Err(_) => work.errors += 1,
                }
                // An effect outside the rows, which only `check` stands guard over.
                match conn.batch_execute(&format!(
                    "INSERT INTO fault_effects (token, at) VALUES ('{token}', {})",
                    C::KIND.now()
                )) {
                    Ok(()) => work.effects += 1,
                    Err(_) => work.errors += 1,
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            work
        });
        std::thread::sleep(Duration::from_millis(500));
        let taken = pool.get().map_err(|e| e.to_string()).and_then(|mut conn| {
            conn.batch_execute(&format!(
                "UPDATE fault_jobs SET worker = 'operator', lease_token = '{INTRUDER}', \
                 leased_at = {} WHERE id IN ({list})",
                C::KIND.now()
            ))
            .map_err(|e| format!("the takeover: {e}"))
        });
        let round = keeper.rounds();
        (work.join(), taken.map(|()| round))
    });
    let work = work.map_err(|_| "the work's thread panicked".to_owned())?;
    let takeover_round = takeover_round?;
    let conn = &mut *pool.get().map_err(|e| e.to_string())?;
    let count = |conn: &mut C, sql: String| -> Result<i64, String> {
        conn.number(&sql)
            .map(|n| n.unwrap_or(0))
            .map_err(|e| format!("{sql}: {e}"))
    };
    let takeover_at = format!(
        "(SELECT MIN(at) FROM fault_claims WHERE tbl = 'fault_jobs' AND token = '{INTRUDER}')"
    );
    let writes_before = count(
        conn,
        format!("SELECT COUNT(*) AS n FROM fault_writes WHERE token = '{token}'"),
    )?;
    let writes_after = count(
        conn,
        format!("SELECT COUNT(*) AS n FROM fault_writes WHERE token = '{INTRUDER}'"),
    )?;
    let effects_after = count(
        conn,
        format!(
            "SELECT COUNT(*) AS n FROM fault_effects WHERE token = '{token}' AND at >= {takeover_at}"
        ),
    )?;
    let taken_over = count(
        conn,
        "SELECT COUNT(*) AS n FROM fault_takeovers WHERE tbl = 'fault_jobs'".into(),
    )?;
    drop(kept);
    let still_intruders = count(
        conn,
        format!("SELECT COUNT(*) AS n FROM fault_jobs WHERE lease_token = '{INTRUDER}'"),
    )?;
    let rounds = work.learned_at_round.saturating_sub(takeover_round);
    outcome.figure(
        "(c) taken out of band: the loss the work was told",
        work.loss.as_ref().map_or("none".into(), |lost| {
            format!("{:?} of {} rows", lost.reason, lost.rows.len())
        }),
    );
    outcome.figure(
        "(c) keeper rounds from the takeover to the work learning of it",
        rounds,
    );
    outcome.figure(
        "(c) guarded writes that landed, logged by the database: before the takeover; after it",
        format!("{writes_before}; {writes_after}"),
    );
    outcome.figure(
        "(c) guarded writes refused by the token (said by the work)",
        work.refused,
    );
    outcome.figure(
        "(c) unguarded effects after the takeover, before the work learned of it (by the database's clock)",
        effects_after,
    );
    outcome.figure(
        "(c) rows the takeover left with the intruder after the keeper's release",
        format!("{still_intruders} of {}", ids.len()),
    );
    let mut expected = ids.clone();
    expected.sort_unstable();
    let told = work.loss.as_ref().map(|lost| {
        let mut rows = lost.rows.clone();
        rows.sort_unstable();
        (lost.reason, rows)
    });
    outcome.check(told == Some((LossReason::TakenOver, expected)), || {
        format!(
            "the work was told {:?}, not that its rows were taken over",
            work.loss
        )
    });
    outcome.check(rounds <= 2, || {
        format!("the work learned of the takeover {rounds} rounds after it")
    });
    outcome.check(writes_after == 0, || {
        format!("{writes_after} guarded writes landed after the takeover")
    });
    outcome.check(writes_before > 0 && taken_over > 0, || {
        format!("{writes_before} writes before the takeover, {taken_over} takeovers logged: nothing tested")
    });
    outcome.check(still_intruders == ids.len() as i64, || {
        format!(
            "the keeper's release took {} rows back from the intruder",
            ids.len() as i64 - still_intruders
        )
    });
    outcome.check(work.errors == 0, || {
        format!("{} errors in the work", work.errors)
    });
    Ok(())
}

/// (b) A throwaway PostgreSQL stopped for longer than the lease while the keeper keeps rows: the
/// loss is reported before the lease can have run out by the database's clock; then restarted
/// quickly: renewals resume or the loss is reported, and no "held" is false.
fn server_stopped(outcome: &mut Outcome) -> Result<(), String> {
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
