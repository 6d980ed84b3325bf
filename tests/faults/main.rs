//! The fault suite of `docs/reliability.md`: worker processes SIGKILLed, clocks skewed, a
//! PostgreSQL server restarted and crashed, a Galera cluster with a node killed, the keeper
//! under faults, PgBouncer in transaction mode, nodes killed and started again under their
//! names, a server whose packets are dropped, a keeper's handles dropped while its server is
//! stopped (SIGSTOP), a PostgreSQL cluster under Patroni whose primary fails; each scenario
//! bounded in time and on loopback.
//! Every outcome is counted in the database, never in the workers' logs.
//!
//! ```text
//! LEASE_FAULTS=1 PG_DATABASE_URL=postgres://postgres@127.0.0.1:5432/faults \
//! MYSQL_DATABASE_URL=mysql://root@127.0.0.1:3306/faults \
//!     cargo test --all-features --test faults
//! ```
//!
//! Without `LEASE_FAULTS=1` it says it is skipped and succeeds, so that `cargo test` stays fast;
//! CI runs it through `.ci/faults`. `LEASE_FAULTS_ONLY=killed,skewed` runs those scenarios
//! alone. Workers are this binary again, told by `LEASE_FAULTS_WORKER` what to do. The run
//! rewrites the generated blocks of `docs/reliability.md` and exits non-zero if an assertion
//! failed, saying which.
#![allow(clippy::unwrap_used, clippy::expect_used)]
#![forbid(unsafe_code)]

use std::process::ExitCode;
use std::time::Instant;

mod agent_locks;
mod calls;
mod db;
mod db_conn;
mod drops;
mod failover;
mod failover_load;
mod failover_reckoning;
mod failover_skew;
mod fleet;
mod galera;
mod galera_cluster;
mod galera_contention;
mod galera_queue;
mod galera_sync_wait;
mod keeper;
mod keeper_killed;
mod keeper_setup;
mod keeper_stopped;
mod keeper_taken;
mod killed;
mod partition;
mod patroni_cluster;
mod pgbouncer;
mod queue;
mod report;
mod restarted;
mod restarts;
mod server;
mod shared;
mod skewed;
mod soak;
mod unanswered;

use db::Kind;
use report::Outcome;

/// Calls the generic `function` with the connection type of `kind`.
macro_rules! on_backend {
    ($kind:expr, $($function:ident)::+ ($($arg:expr),*)) => {
        match $kind {
            Kind::Postgres => $($function)::+::<diesel::PgConnection>($($arg),*),
            Kind::Mysql => $($function)::+::<diesel::MysqlConnection>($($arg),*),
            Kind::Sqlite => $($function)::+::<diesel::SqliteConnection>($($arg),*),
        }
    };
}

type Run = fn(Kind, &str, &mut Outcome) -> Result<(), String>;

/// The scenarios in order: name (of its block in docs/reliability.md), and how it runs on a
/// backend. The restarts, the keeper's stopped server, the partition and the drops bring their
/// own PostgreSQL, Galera its own cluster, the failover its own Patroni cluster; the restarts,
/// Galera, PgBouncer, the drops and the failover run once.
const SCENARIOS: [(&str, Run); 12] = [
    ("killed", |kind, url, outcome| {
        on_backend!(kind, killed::run(url, outcome))
    }),
    ("skewed", |kind, url, outcome| {
        on_backend!(kind, skewed::run(url, outcome))
    }),
    ("agent", |kind, url, outcome| {
        on_backend!(kind, agent_locks::run(url, outcome))
    }),
    ("restarts", |_, _, outcome| restarts::run(outcome)),
    ("galera", |_, _, outcome| galera::run(outcome)),
    ("keeper", |kind, url, outcome| {
        on_backend!(kind, keeper::run(url, outcome))
    }),
    ("pgbouncer", |_, _, outcome| pgbouncer::run(outcome)),
    ("restarted", |kind, url, outcome| {
        on_backend!(kind, restarted::run(url, outcome))
    }),
    ("unanswered", |kind, url, outcome| {
        on_backend!(kind, unanswered::run(url, outcome))
    }),
    ("drops", |_, _, outcome| drops::run(outcome)),
    ("failover", |_, _, outcome| failover::run(outcome)),
    // Run by hand only (.ci/soak): named in LEASE_FAULTS_ONLY.
    ("soak", |kind, url, outcome| {
        on_backend!(kind, soak::run(url, outcome))
    }),
];

fn main() -> ExitCode {
    if let Ok(worker) = std::env::var(fleet::WORKER) {
        return worker_main(&worker);
    }
    if std::env::var("LEASE_FAULTS").as_deref() != Ok("1") {
        println!("faults: skipped (LEASE_FAULTS=1 runs the fault suite; see docs/reliability.md)");
        return ExitCode::SUCCESS;
    }
    let started = timer();
    let backends = match backends() {
        Ok(backends) => backends,
        Err(error) => {
            eprintln!("faults: {error}");
            return ExitCode::FAILURE;
        }
    };
    let only = std::env::var("LEASE_FAULTS_ONLY").unwrap_or_default();
    let mut failed = false;
    for (name, run) in SCENARIOS {
        let named = only.split(',').any(|chosen| chosen.trim() == name);
        if (!only.is_empty() || name == "soak") && !named {
            continue;
        }
        println!("== {name}");
        let scenario_started = timer();
        // The restarts, the drops, the failover and the soak bring their own servers, and
        // PgBouncer is PostgreSQL's: they run once, not per backend.
        let on: Vec<&(Kind, String)> = match name {
            "restarts" | "pgbouncer" | "drops" | "failover" | "soak" => backends
                .iter()
                .filter(|(kind, _)| *kind == Kind::Postgres)
                .take(1)
                .collect(),
            // A cluster of the suite's own, of MariaDB's servers.
            "galera" => backends
                .iter()
                .filter(|(kind, _)| *kind == Kind::Mysql)
                .take(1)
                .collect(),
            _ => backends.iter().collect(),
        };
        let mut outcomes = Vec::new();
        for (kind, url) in on {
            let backend_started = timer();
            let mut outcome = Outcome::new(kind.name());
            if let Err(error) = run(*kind, url, &mut outcome) {
                outcome.fail(error);
            }
            if outcome.not_run.is_none() {
                outcome.figure(
                    "wall time",
                    format!("{:.1} s", backend_started.elapsed().as_secs_f64()),
                );
            }
            if let Some(why) = outcome.not_run {
                println!("  {} | not run: {why}", kind.name());
            }
            for (label, value) in &outcome.figures {
                println!("  {} | {label}: {value}", kind.name());
            }
            for failure in &outcome.failures {
                println!("  {} | FAILED: {failure}", kind.name());
            }
            failed |= !outcome.failures.is_empty();
            outcomes.push(outcome);
        }
        report::publish(
            name,
            &report::markdown(&outcomes, scenario_started.elapsed()),
        );
    }
    if let Some((_, path)) = backends.iter().find(|(kind, _)| *kind == Kind::Sqlite) {
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{path}{suffix}"));
        }
    }
    println!(
        "faults: {} in {:.0} s",
        if failed { "FAILED" } else { "passed" },
        started.elapsed().as_secs_f64()
    );
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// The backends to run on: the servers named by `PG_DATABASE_URL` and `MYSQL_DATABASE_URL`, and
/// an SQLite file in the temporary directory. A server not named is skipped, or is an error
/// under `LEASE_TEST_REQUIRE_ALL_BACKENDS`.
fn backends() -> Result<Vec<(Kind, String)>, String> {
    let mut backends = Vec::new();
    for (kind, variable) in [
        (Kind::Postgres, "PG_DATABASE_URL"),
        (Kind::Mysql, "MYSQL_DATABASE_URL"),
    ] {
        match std::env::var(variable) {
            Ok(url) if !url.is_empty() => backends.push((kind, url)),
            _ if std::env::var_os("LEASE_TEST_REQUIRE_ALL_BACKENDS").is_some() => {
                return Err(format!("{variable} is not set, and LEASE_TEST_REQUIRE_ALL_BACKENDS requires every backend"));
            }
            _ => println!("faults: {} skipped ({variable} is not set)", kind.name()),
        }
    }
    let file = std::env::temp_dir().join(format!("diesel-lease-faults-{}.db", std::process::id()));
    backends.push((Kind::Sqlite, file.to_string_lossy().into_owned()));
    Ok(backends)
}

/// A worker process: what `LEASE_FAULTS_WORKER` says, `<role> <backend> <name>`.
fn worker_main(spec: &str) -> ExitCode {
    let mut words = spec.split(' ');
    let (Some(role), Some(kind), Some(name)) = (
        words.next(),
        words.next().and_then(Kind::parse),
        words.next(),
    ) else {
        eprintln!("faults: a worker told {spec:?}");
        return ExitCode::FAILURE;
    };
    let url = std::env::var(fleet::URL).unwrap_or_default();
    db::set_pooling(std::env::var(db::POOLING_ENV).as_deref() == Ok("1"));
    if role.starts_with(soak::ROLE) {
        on_backend!(kind, soak::work(&url, name, role))
    } else if role.starts_with(fleet::NODE) {
        on_backend!(kind, restarted::work(&url, name, role))
    } else if role.starts_with("queue") {
        on_backend!(kind, queue::work(&url, name, role))
    } else {
        on_backend!(kind, agent_locks::work(&url, name))
    }
}

/// The suite's own timing of its runs (no lease is decided by it).
#[allow(clippy::disallowed_methods)]
fn timer() -> Instant {
    Instant::now()
}
