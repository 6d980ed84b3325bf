//! Scenario 4, server restarts: a throwaway PostgreSQL of the suite's own (initdb into a
//! temporary folder, its own port, `synchronous_commit = on`) restarted with `pg_ctl restart -m
//! immediate` 5 times while 4 workers run the queue, and crashed once (SIGKILL of the
//! postmaster, then started again). Expected: the workers see typed errors only and never
//! panic; no job lost or done twice, in the database and as the workers were told; and the
//! time from the server accepting connections to the next claim, published, not asserted.
use std::collections::BTreeSet;
use std::process::Command;
use std::time::Duration;

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Nullable, Timestamptz};
use diesel::PgConnection;

use crate::db::{FaultConn, Kind};
use crate::fleet::Fleet;
use crate::queue;
use crate::report::Outcome;
use crate::server::{succeed, Server};

/// The faults, in order, about 1.5 s apart.
const FAULTS: [Fault; 6] = [
    Fault::Restart,
    Fault::Restart,
    Fault::Crash,
    Fault::Restart,
    Fault::Restart,
    Fault::Restart,
];

#[derive(Debug, Clone, Copy, PartialEq)]
enum Fault {
    Restart,
    Crash,
}

pub fn run(outcome: &mut Outcome) -> Result<(), String> {
    let server = Server::start()?;
    outcome.figure(
        "server",
        format!(
            "PostgreSQL ({}), port {}, synchronous_commit=on",
            server.bin.display(),
            server.port
        ),
    );
    let url = server.url();
    let pool = queue::prepare::<PgConnection>(&url)?;
    // Slower work than scenario 1's, so that the queue outlasts the faults.
    let mut fleet = Fleet::start(
        &queue::role(Duration::from_millis(40)),
        Kind::Postgres,
        &url,
        &[None; 4],
    )?;
    let mut accepted = Vec::new();
    for fault in FAULTS {
        std::thread::sleep(Duration::from_millis(1500));
        if !queue::jobs_open(&pool) {
            outcome.fail(format!(
                "the queue ran out after {} faults of {}: make the work slower",
                accepted.len(),
                FAULTS.len()
            ));
            break;
        }
        match fault {
            Fault::Restart => server.pg_ctl(&["restart", "-m", "immediate"])?,
            Fault::Crash => server.crash_and_start()?,
        }
        accepted.push((fault, server.accepting()?));
    }
    queue::wait_until_finished(&mut fleet, &pool);
    let tally = std::mem::take(&mut *fleet.tally.lock().unwrap_or_else(|e| e.into_inner()));
    let restarts = accepted
        .iter()
        .filter(|(fault, _)| *fault == Fault::Restart)
        .count();
    outcome.figure(
        "restarts (-m immediate), crashes (SIGKILL)",
        format!("{restarts}, {}", accepted.len() - restarts),
    );
    queue::verdict(&pool, &tally, false, outcome);
    // As the workers were told: a release that returned a job more than once would mean a
    // commit acknowledged, then lost in the crash, and the job done again.
    let mut seen = BTreeSet::new();
    let twice: Vec<i64> = tally
        .finished
        .iter()
        .copied()
        .filter(|id| !seen.insert(*id))
        .collect();
    outcome.figure(
        "jobs the workers were told they finished",
        tally.finished.len(),
    );
    outcome.figure("of them, told twice", twice.len());
    outcome.check(twice.is_empty(), || {
        format!("jobs acknowledged as finished twice: {twice:?}")
    });
    let conn = &mut pool.get().map_err(|e| e.to_string())?;
    let mut resumes = Vec::new();
    for (fault, at) in &accepted {
        let resume = first_claim_after(conn, *at).map_err(|e| e.to_string())?;
        resumes.push(match resume {
            Some(us) => format!(
                "{:.0} ms{}",
                us as f64 / 1000.0,
                if *fault == Fault::Crash {
                    " (crash)"
                } else {
                    ""
                }
            ),
            None => "none".into(),
        });
    }
    outcome.figure(
        "first claim after the server accepted connections, per fault",
        resumes.join(", "),
    );
    outcome.fail_all(std::mem::take(&mut fleet.failures));
    outcome.check(accepted.len() == FAULTS.len(), || {
        format!("{} faults of {}", accepted.len(), FAULTS.len())
    });
    Ok(())
}

#[derive(QueryableByName)]
struct Micros {
    #[diesel(sql_type = Nullable<BigInt>)]
    us: Option<i64>,
}

/// Microseconds from `at` to the first claim logged at or after it, by the server's clock.
fn first_claim_after(conn: &mut PgConnection, at: DateTime<Utc>) -> QueryResult<Option<i64>> {
    diesel::sql_query(
        "SELECT CAST(EXTRACT(EPOCH FROM (min(at) - $1)) * 1000000 AS BIGINT) AS us \
         FROM fault_claims WHERE tbl = 'fault_jobs' AND at >= $1",
    )
    .bind::<Timestamptz, _>(at)
    .get_result::<Micros>(conn)
    .map(|row| row.us)
}

/// What scenario 4 does to the server, beside what every throwaway server can do.
impl Server {
    /// SIGKILLs the postmaster, then starts the server again once it can (the dead
    /// postmaster's backends must exit first).
    fn crash_and_start(&self) -> Result<(), String> {
        let pid_file = std::fs::read_to_string(self.dir.join("data/postmaster.pid"))
            .map_err(|e| format!("postmaster.pid: {e}"))?;
        let pid = pid_file
            .lines()
            .next()
            .unwrap_or_default()
            .trim()
            .to_owned();
        succeed(Command::new("kill").args(["-KILL", &pid]))?;
        let mut last = String::new();
        for _ in 0..60 {
            match self.pg_ctl(&["start"]) {
                Ok(()) => return Ok(()),
                Err(error) => last = error,
            }
            std::thread::sleep(Duration::from_millis(250));
        }
        Err(format!(
            "the server did not start again after its crash: {last}"
        ))
    }

    /// When the server first accepts a connection, by its own clock: polled every 10 ms.
    pub fn accepting(&self) -> Result<DateTime<Utc>, String> {
        let mut last = String::new();
        for _ in 0..3_000 {
            match PgConnection::establish(&self.url()) {
                Ok(mut conn) => return conn.clock().map_err(|e| e.to_string()),
                Err(error) => last = error.to_string(),
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        Err(format!("the server never accepted a connection: {last}"))
    }
}
