//! What the keeper under faults (scenario 6, keeper.rs) and its parts share, and the drops
//! scenario with them: the lease and the keeper's settings, the suite's tables made anew with a
//! log of the work's writes, jobs claimed and kept, and a wait for a keeper's rounds.
use std::time::Duration;

use diesel_lease::prelude::*;
use diesel_lease::{Keepable, Keeper, KeeperSettings, Kept};

use crate::db::{self, fault_jobs, FaultConn, Kind, Pool};

pub(crate) const LEASE: Duration = Duration::from_secs(2);
pub(crate) const EVERY: Duration = Duration::from_millis(200);
pub(crate) const MARGIN: Duration = Duration::from_millis(500);

pub(crate) fn lease() -> Lease {
    Lease::new(LEASE).expect("a valid lease")
}

pub(crate) fn settings() -> KeeperSettings {
    KeeperSettings::new(lease()).every(EVERY).margin(MARGIN)
}

/// The suite's tables made anew, 20 jobs, and the log of the work's writes.
pub(crate) fn prepare<C: FaultConn>(url: &str) -> Result<Pool<C>, String> {
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
