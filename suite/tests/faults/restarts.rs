//! Scenario 4, server restarts: a throwaway PostgreSQL of the suite's own (initdb into a
//! temporary folder, its own port, `synchronous_commit = on`) restarted with `pg_ctl restart -m
//! immediate` 5 times while 4 workers run the queue, and crashed once (SIGKILL of the
//! postmaster, then started again). Expected: the workers see typed errors only and never
//! panic; no job lost or done twice, in the database and as the workers were told; and the
//! time from the server accepting connections to the next claim, published, not asserted.
use std::collections::BTreeSet;
use std::path::PathBuf;
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

/// The throwaway server: a data folder of its own under the temporary directory, owned by the
/// `postgres` user when the suite runs as root (PostgreSQL refuses to run as root).
pub struct Server {
    pub bin: PathBuf,
    dir: PathBuf,
    pub port: u16,
}

impl Server {
    pub fn start() -> Result<Server, String> {
        let bin = bin_dir()?;
        let port = (5433..5500)
            .find(|port| std::net::TcpListener::bind(("127.0.0.1", *port)).is_ok())
            .ok_or("no free port in 5433..5500")?;
        let dir =
            std::env::temp_dir().join(format!("diesel-lease-faults-pg-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let server = Server { bin, dir, port };
        if as_root() {
            succeed(
                Command::new("chown")
                    .arg("postgres:postgres")
                    .arg(&server.dir),
            )?;
        }
        let data = server.dir.join("data");
        succeed(server.command("initdb").arg("-D").arg(&data).args([
            "-U",
            "postgres",
            "--auth=trust",
            "-E",
            "UTF8",
            "--no-sync",
        ]))?;
        server.pg_ctl(&["start"])?;
        Ok(server)
    }

    pub fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }

    /// A program of the server's, run as `postgres` when the suite runs as root.
    fn command(&self, program: &str) -> Command {
        let program = self.bin.join(program);
        if as_root() {
            let mut command = Command::new("runuser");
            command.args(["-u", "postgres", "--"]).arg(program);
            command
        } else {
            Command::new(program)
        }
    }

    /// `pg_ctl ACTION` on the server's folder and port, waiting for it to finish.
    pub fn pg_ctl(&self, action: &[&str]) -> Result<(), String> {
        // Durable commits: with synchronous_commit off, a crash would lose commits whose
        // success the workers were already told.
        let options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c synchronous_commit=on -c fsync=on",
            self.port,
            self.dir.display()
        );
        succeed(
            self.command("pg_ctl")
                .args(action)
                .arg("-D")
                .arg(self.dir.join("data"))
                .args(["-o", &options, "-l"])
                .arg(self.dir.join("log"))
                .args(["-w", "-t", "60"]),
        )
    }

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

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.pg_ctl(&["stop", "-m", "immediate"]);
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The newest PostgreSQL's programs: `LEASE_FAULTS_PG_BIN`, or Debian's /usr/lib/postgresql/N/bin.
fn bin_dir() -> Result<PathBuf, String> {
    if let Some(bin) = std::env::var_os("LEASE_FAULTS_PG_BIN") {
        return Ok(bin.into());
    }
    let versions = std::fs::read_dir("/usr/lib/postgresql")
        .map_err(|e| format!("/usr/lib/postgresql: {e} (set LEASE_FAULTS_PG_BIN)"))?;
    versions
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .max()
        .map(|version| PathBuf::from(format!("/usr/lib/postgresql/{version}/bin")))
        .filter(|bin| bin.join("initdb").exists())
        .ok_or_else(|| {
            "no PostgreSQL server programs under /usr/lib/postgresql (set LEASE_FAULTS_PG_BIN)"
                .into()
        })
}

pub(crate) fn as_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|out| String::from_utf8_lossy(&out.stdout).trim() == "0")
}

/// Runs `command`; its output is shown only when it fails.
pub(crate) fn succeed(command: &mut Command) -> Result<(), String> {
    let output = command.output().map_err(|e| format!("{command:?}: {e}"))?;
    if output.status.success() {
        return Ok(());
    }
    Err(format!(
        "{command:?}: {}\n{}{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    ))
}
