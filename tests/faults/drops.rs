//! Scenario 10, drops on a stopped server: a throwaway PostgreSQL, reached with docs/operations.md's libpq
//! settings, has every process stopped (SIGSTOP) while two keepers keep claims on it. Dropping a
//! `Kept`, `Keeper::shutdown(within)` and dropping the other `Keeper` each return within their
//! bound, though every statement they send waits until the server runs again; once it does
//! (SIGCONT), a rival claim wins every row once the lease has passed since the row's last renewal,
//! by the database's clock. Each drop runs on a thread of the scenario's, so that one that never
//! returns fails the run instead of hanging it.
use std::collections::BTreeSet;
use std::sync::mpsc;
use std::time::Duration;

use diesel::connection::SimpleConnection;
use diesel::r2d2::ConnectionManager;
use diesel::{Connection, PgConnection};
use diesel_lease::prelude::*;
use diesel_lease::{Error, Keeper};

use crate::db::{self, FaultConn, Kind, Pool, Witness};
use crate::keeper_setup::{keep, settings, wait_rounds, LEASE};
use crate::report::{micros, millis, Outcome};
use crate::server::{succeed, Server};
use crate::unanswered::PG_SETTINGS;

/// Claims of the first keeper, one of them dropped, the rest left to its shutdown.
const CLAIMS: usize = 8;
/// Claims of the second keeper, which is dropped.
const DROPPED_WITH_KEEPER: usize = 4;
const ROWS_PER_CLAIM: usize = 2;
const SHUTDOWN_WITHIN: Duration = Duration::from_millis(300);
/// What a bounded wait may overrun its bound by: the waiting thread wakes once the bound has
/// passed (a channel's `recv_timeout`), after starting the release's thread; the overrun is a
/// thread's start and wake-up, a few ms, tens under load on a shared 2-core machine.
const WAKE: Duration = Duration::from_millis(100);
/// How long the scenario waits for a drop before calling it hung (it then ends once the server
/// runs again).
const PATIENCE: Duration = Duration::from_secs(10);
/// The rival's lease: longer than the scenario, so that it never takes over its own rows.
const RIVAL_LEASE: Duration = Duration::from_secs(60);

pub fn run(outcome: &mut Outcome) -> Result<(), String> {
    let server = Server::start()?;
    let url = format!("{}?{PG_SETTINGS}", server.url());
    let pool = db::pool::<PgConnection>(&url, 2);
    let rows = (CLAIMS + DROPPED_WITH_KEEPER) * ROWS_PER_CLAIM;
    {
        let conn = &mut *pool.get().map_err(|e| e.to_string())?;
        db::execute(conn, &Kind::Postgres.schema()).map_err(|e| format!("the schema: {e}"))?;
        conn.insert_jobs(rows as i64)
            .map_err(|e| format!("the jobs: {e}"))?;
    }
    let settings = settings();
    let drop_within = settings.drops_within();
    let start = |settings| {
        // Connections open and idle at the stop, as in a pool that has been busy: a release takes
        // one and waits on the stopped server (with none, its checkout would give up after a
        // renewal interval, the connection not made).
        let pool = PgConnection::customized(
            Pool::builder()
                .max_size(3)
                .min_idle(Some(3))
                .connection_timeout(Duration::from_secs(1)),
        )
        .build(ConnectionManager::new(&url))
        .map_err(|e| format!("the keeper's pool: {e}"))?;
        Keeper::start(pool, settings).map_err(|e| e.to_string())
    };
    let (shut_down, dropped) = (start(settings)?, start(settings)?);
    let mut tokens = Vec::new();
    let mut kept = Vec::new();
    for (keeper, claims, name) in [
        (&shut_down, CLAIMS, "shut"),
        (&dropped, DROPPED_WITH_KEEPER, "dropped"),
    ] {
        for n in 0..claims {
            let (_, token, one) = keep(keeper, &pool, ROWS_PER_CLAIM, &format!("{name}-{n}"))?;
            tokens.push(token);
            kept.push(one);
        }
    }
    wait_rounds(&shut_down, 3);
    wait_rounds(&dropped, 3);
    outcome.figure(
        "lease; renewed every; drop_within (the default); shutdown's bound; allowed past a bound",
        format!(
            "{}; {}; {}; {}; {}",
            millis(LEASE),
            millis(settings.renews_every()),
            millis(drop_within),
            millis(SHUTDOWN_WITHIN),
            millis(WAKE)
        ),
    );

    let mut probe =
        PgConnection::establish(&url).map_err(|e| format!("the probe's connection: {e}"))?;
    let conn = &mut *pool.get().map_err(|e| e.to_string())?;
    // The moment every process had stopped, stamped by the suite's other PostgreSQL on this
    // machine's clock: a claim logged later ran after the SIGCONT.
    let mut witness = Witness::connect()?;
    let stopped = Stopped::all_of(&server)?;
    let stop_at = witness.micros()?;
    let stopped_at = crate::timer();
    let (answered, probe_answer) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = answered.send(probe.batch_execute("SELECT 1"));
    });
    // A round of each keeper is due within `every` of the stop: past it, one is under way,
    // waiting on the stopped server with the claims it chose, when the drops come.
    std::thread::sleep(settings.renews_every() + Duration::from_millis(100));
    // The first keeper's first claim: it leaves `kept` and is dropped.
    let first = kept.remove(0);
    let kept_drop = timed(move || drop(first));
    let shutdown = timed(move || shut_down.shutdown(SHUTDOWN_WITHIN));
    let keeper_drop = timed(move || drop(dropped));
    let probe_answered = probe_answer.try_recv().is_ok();
    let processes = stopped.pids.len();
    drop(stopped);
    let resumed = crate::timer();
    let stopped_for = stopped_at.elapsed();

    outcome.figure(
        "server stopped (SIGSTOP, then SIGCONT): its processes; for",
        format!("{processes}; {}", millis(stopped_for)),
    );
    outcome.check(!probe_answered, || {
        "a SELECT 1 sent after the SIGSTOP was answered before the SIGCONT: the server ran".into()
    });
    let mut bounded = |label: &str, took: &Result<Duration, String>, bound: Duration| {
        outcome.figure(
            label,
            took.as_ref()
                .map_or_else(Clone::clone, |took| millis(*took)),
        );
        let ok = took.as_ref().is_ok_and(|took| *took <= bound + WAKE);
        outcome.check(ok, || {
            format!(
                "{label}: {}, not within {} + {}",
                took.as_ref()
                    .map_or_else(Clone::clone, |took| millis(*took)),
                millis(bound),
                millis(WAKE)
            )
        });
    };
    bounded(
        &format!(
            "(i) drop of a Kept ({ROWS_PER_CLAIM} rows), beside {} other claims: took",
            CLAIMS - 1
        ),
        &kept_drop.map(|(took, ())| took),
        drop_within,
    );
    let answer = match &shutdown {
        Ok((_, answer)) => format!("{answer:?}"),
        Err(hung) => hung.clone(),
    };
    bounded(
        &format!(
            "(ii) shutdown({}) of that keeper, {} claims left: took",
            millis(SHUTDOWN_WITHIN),
            CLAIMS - 1
        ),
        &shutdown
            .as_ref()
            .map(|(took, _)| *took)
            .map_err(Clone::clone),
        SHUTDOWN_WITHIN,
    );
    bounded(
        &format!("(iii) drop of a second Keeper keeping {DROPPED_WITH_KEEPER} claims: took"),
        &keeper_drop.map(|(took, ())| took),
        drop_within,
    );
    outcome.figure("(ii) the shutdown's answer", &answer);
    outcome.check(
        matches!(shutdown, Ok((_, Err(Error::StopTimedOut(_))))),
        || format!("the shutdown answered {answer}, not StopTimedOut"),
    );

    freed(conn, &tokens, stop_at, resumed, outcome)?;
    // The other handles: their releases find the rival's token and change nothing.
    drop(kept);
    Ok(())
}

/// After the SIGCONT: a rival claim wins every row of the claims of `tokens` once their lease has
/// passed; no row of the dropped `Kept` (the first token's) was renewed after `stop_at` (µs since
/// the epoch, when every process had stopped).
fn freed(
    conn: &mut PgConnection,
    tokens: &[String],
    stop_at: i64,
    resumed: std::time::Instant,
    outcome: &mut Outcome,
) -> Result<(), String> {
    let rows = tokens.len() * ROWS_PER_CLAIM;
    let list = |tokens: &[String]| {
        tokens
            .iter()
            .map(|token| format!("'{token}'"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let (first_token, others) = (list(&tokens[..1]), list(&tokens[1..]));
    let tokens = list(tokens);
    let won = rival_wins(conn, &tokens, rows)?;
    // Rows renewed by a statement that ran after the SIGCONT: the dropped `Kept`'s, and the others'.
    let mut renewed_late = |tokens: &str| -> Result<i64, String> {
        conn.number(&format!(
            "SELECT COUNT(*) AS n FROM fault_claims WHERE tbl = 'fault_jobs' \
             AND token IN ({tokens}) AND {} > {stop_at}",
            Kind::Postgres.epoch_micros("at")
        ))
        .map_err(|e| format!("the late renewals: {e}"))
        .map(|n| n.unwrap_or(0))
    };
    let late = (renewed_late(&first_token)?, renewed_late(&others)?);
    let taken_over = conn
        .takeovers("fault_jobs", crate::keeper_setup::lease())
        .map_err(|e| format!("the takeovers: {e}"))?;
    outcome.figure(
        "rows a rival claim won once the lease had passed since their last renewal (by the database's clock); after the SIGCONT",
        format!("{} of {rows}; {}", won.len(), millis(resumed.elapsed())),
    );
    outcome.figure(
        "of them: freed by a release that landed after the SIGCONT; taken over, their lease run out",
        format!(
            "{}; {}",
            won.len() as i64 - taken_over.count,
            taken_over.count
        ),
    );
    outcome.figure(
        "rows renewed after the SIGCONT by a round under way at the drops: the dropped Kept's; the other claims' (their keepers stopped)",
        format!("{}; {}", late.0, late.1),
    );
    // Renewals stop at the drop: a round that waited through it chooses its claims again. (A
    // renewal sent in the microseconds before its backend stopped would be counted too.)
    outcome.check(late.0 == 0, || {
        format!("{} rows of the dropped Kept renewed after its drop", late.0)
    });
    outcome.takeovers("", &taken_over, LEASE);
    outcome.check(won.len() == rows, || {
        format!("a rival won {} of {rows} rows", won.len())
    });
    Ok(())
}

/// Claims the scenario's rows for a rival, each once the lease has passed since the last renewal
/// of the claims of `tokens` (an SQL list) by the database's clock (a renewal in flight at the
/// stop lands after the SIGCONT); the rows it won.
fn rival_wins(conn: &mut PgConnection, tokens: &str, rows: usize) -> Result<BTreeSet<i64>, String> {
    let last_renewal = format!(
        "SELECT {} - {} AS n FROM fault_claims WHERE tbl = 'fault_jobs' AND token IN ({tokens})",
        Kind::Postgres.epoch_micros("MAX(at)"),
        Kind::Postgres.epoch_micros("statement_timestamp()"),
    );
    let rival = Lease::new(RIVAL_LEASE).map_err(|e| e.to_string())?;
    let mut won = BTreeSet::new();
    let started = crate::timer();
    while won.len() < rows && started.elapsed() < LEASE + PATIENCE {
        // Microseconds since the last renewal, negated.
        let since = conn
            .number(&last_renewal)
            .map_err(|e| format!("the last renewal: {e}"))?
            .unwrap_or(0);
        let left = since + micros(LEASE);
        if left > 0 {
            // A real expiry: the lease runs out by the database's clock.
            std::thread::sleep(Duration::from_micros(left.unsigned_abs()));
            continue;
        }
        let batch = conn
            .claim_jobs(rows, rival, "rival")
            .map_err(|e| format!("the rival's claim: {e}"))?;
        won.extend(batch.keys().iter().copied());
        if won.len() < rows {
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    Ok(won)
}

/// Runs `work` on a thread of its own, timed on the process's clock, waiting for it at most
/// [`PATIENCE`].
fn timed<R: Send + 'static>(
    work: impl FnOnce() -> R + Send + 'static,
) -> Result<(Duration, R), String> {
    let (done, answer) = mpsc::channel();
    std::thread::spawn(move || {
        let started = crate::timer();
        let result = work();
        let _ = done.send((started.elapsed(), result));
    });
    answer
        .recv_timeout(PATIENCE)
        .map_err(|_| format!("did not return within {}", millis(PATIENCE)))
}

/// Every process of a server stopped (SIGSTOP): the postmaster first, so that it starts no new
/// backend, then its children, which serve the connections (the postmaster alone stopped, they
/// would answer). Dropped, it sends them all SIGCONT, whatever happened meanwhile.
struct Stopped {
    pids: Vec<String>,
}

impl Stopped {
    fn all_of(server: &Server) -> Result<Stopped, String> {
        let file = server.dir.join("data").join("postmaster.pid");
        let text =
            std::fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
        let postmaster = text
            .lines()
            .next()
            .map(str::trim)
            .filter(|pid| pid.parse::<u32>().is_ok())
            .ok_or_else(|| format!("{}: no pid on its first line", file.display()))?;
        let mut stopped = Stopped {
            pids: vec![postmaster.to_owned()],
        };
        signal("-STOP", &stopped.pids)?;
        let children = children_of(postmaster)?;
        stopped.pids.extend(children.iter().cloned());
        signal("-STOP", &children)?;
        Ok(stopped)
    }
}

impl Drop for Stopped {
    fn drop(&mut self) {
        if let Err(error) = signal("-CONT", &self.pids) {
            eprintln!("faults: SIGCONT to the stopped server: {error}");
        }
    }
}

fn signal(signal: &str, pids: &[String]) -> Result<(), String> {
    if pids.is_empty() {
        return Ok(());
    }
    succeed(
        std::process::Command::new("kill")
            .arg(signal)
            .arg("--")
            .args(pids),
    )
}

/// The processes whose parent is `parent`, from /proc.
fn children_of(parent: &str) -> Result<Vec<String>, String> {
    let entries = std::fs::read_dir("/proc").map_err(|e| format!("/proc: {e}"))?;
    Ok(entries
        .filter_map(|entry| {
            let pid = entry.ok()?.file_name().to_str()?.to_owned();
            pid.parse::<u32>().ok()?;
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            // `pid (comm) state ppid ...`: the name may hold spaces and parentheses.
            let (_, after_name) = stat.rsplit_once(')')?;
            (after_name.split_whitespace().nth(1)? == parent).then_some(pid)
        })
        .collect())
}
