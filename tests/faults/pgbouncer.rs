//! Scenario 7, PgBouncer in transaction mode (at `PGBOUNCER_DATABASE_URL`, which
//! `.ci/services.sh` sets up on 127.0.0.1:6432): scenario 1's queue and scenario 3's agent locks
//! (`run_migrations` included), their worker processes SIGKILLed as there, every pool set up
//! with `diesel_lease::pg::PgTransactionPooling`; asserted as there. Then, without the setup,
//! the same queue for 2 s and `run_migrations`, whose failures are published as observed, not
//! asserted.
use crate::shared::{errors_text, lock};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use diesel::{Connection, PgConnection};

use crate::db::{self, FaultConn};
use crate::report::Outcome;
use crate::{agent_locks, fleet, queue};

/// How long the queue runs without the setup.
const WITHOUT: Duration = Duration::from_secs(2);

pub fn run(outcome: &mut Outcome) -> Result<(), String> {
    let url = std::env::var("PGBOUNCER_DATABASE_URL")
        .ok()
        .filter(|url| !url.is_empty())
        .ok_or(
            "PGBOUNCER_DATABASE_URL is not set (PgBouncer on 127.0.0.1:6432: .ci/services.sh)",
        )?;
    outcome.backend = "PostgreSQL through PgBouncer";
    outcome.figure("PgBouncer", bouncer_version());
    db::set_pooling(true);
    let with = with_setup(&url, outcome);
    db::set_pooling(false);
    with?;
    without_setup(&url, outcome)
}

/// PgBouncer's version, as its program says.
fn bouncer_version() -> String {
    std::process::Command::new("pgbouncer")
        .arg("--version")
        .output()
        .ok()
        .and_then(|out| {
            String::from_utf8_lossy(&out.stdout)
                .lines()
                .next()
                .map(str::to_owned)
        })
        .filter(|version| !version.is_empty())
        .map_or_else(
            || "pool_mode = transaction".into(),
            |version| format!("{version}, pool_mode = transaction"),
        )
}

fn with_setup(url: &str, outcome: &mut Outcome) -> Result<(), String> {
    let mut queue = Outcome::new("");
    queue::with_kills::<PgConnection>(url, &[None; 4], &mut queue)
        .map(|tally| {
            queue.check(tally.unexpected_errors() == 0, || {
                format!("worker errors: {}", tally.errors_text())
            });
        })
        .unwrap_or_else(|error| queue.fail(error));
    merge(outcome, "queue: ", queue);
    let mut agent = Outcome::new("");
    if let Err(error) = agent_locks::run::<PgConnection>(url, &mut agent) {
        agent.fail(error);
    }
    merge(outcome, "agent locks: ", agent);
    Ok(())
}

fn merge(outcome: &mut Outcome, prefix: &str, part: Outcome) {
    for (label, value) in part.figures {
        outcome.figure(&format!("{prefix}{label}"), value);
    }
    for failure in part.failures {
        outcome.fail(format!("{prefix}{failure}"));
    }
}

/// The queue by 4 threads for 2 s, and `run_migrations`, through the pooler with Diesel's
/// statement cache on: what happens is published, not asserted.
fn without_setup(url: &str, outcome: &mut Outcome) -> Result<(), String> {
    // The queue made with the setup, so that the part observed is the workers'.
    db::set_pooling(true);
    let prepared = queue::prepare::<PgConnection>(url);
    db::set_pooling(false);
    drop(prepared?);
    let errors: Arc<Mutex<BTreeMap<String, u64>>> = Arc::default();
    let cycles = Arc::new(Mutex::new(0_u64));
    let stop = Arc::new(AtomicBool::new(false));
    let workers: Vec<_> = (0..4)
        .map(|n| {
            let (url, errors, cycles, stop) = (
                url.to_owned(),
                Arc::clone(&errors),
                Arc::clone(&cycles),
                Arc::clone(&stop),
            );
            std::thread::spawn(move || {
                let pool = db::pool::<PgConnection>(&url, 1);
                let name = format!("uncached-{n}");
                while !stop.load(Ordering::SeqCst) {
                    let cycle =
                        pool.get()
                            .map_err(diesel_lease::Error::from)
                            .and_then(|mut conn| {
                                let batch = conn.claim_jobs(5, queue::lease(), &name)?;
                                conn.finish_jobs(&batch)
                            });
                    match cycle {
                        Ok(_) => *lock(&cycles) += 1,
                        Err(error) => {
                            *lock(&errors).entry(fleet::error_kind(&error)).or_default() += 1;
                        }
                    }
                }
            })
        })
        .collect();
    // run_migrations alongside, on a connection of its own, as an application's start would.
    std::thread::sleep(WITHOUT / 2);
    let migrations = PgConnection::establish(url)
        .map_err(|e| e.to_string())
        .and_then(|mut conn| {
            let mut last = Ok(());
            for _ in 0..5 {
                last = diesel_lease_agent::run_migrations(&mut conn).map_err(|e| e.to_string());
                if last.is_err() {
                    break;
                }
            }
            last
        });
    std::thread::sleep(WITHOUT / 2);
    stop.store(true, Ordering::SeqCst);
    for worker in workers {
        let _ = worker.join();
    }
    let errors = std::mem::take(&mut *lock(&errors));
    let cycles = *lock(&cycles);
    let label = "without the setup (observed)";
    outcome.figure(
        &format!(
            "{label}: claim cycles through, in {} s by 4 threads",
            WITHOUT.as_secs()
        ),
        cycles,
    );
    outcome.figure(&format!("{label}: errors, by kind"), errors_text(&errors));
    outcome.figure(
        &format!("{label}: run_migrations, 5 times on one connection"),
        match migrations {
            Ok(()) => "ok".into(),
            Err(error) => format!(
                "failed: {}",
                error
                    .lines()
                    .next()
                    .unwrap_or_default()
                    .chars()
                    .take(120)
                    .collect::<String>()
            ),
        },
    );
    Ok(())
}
