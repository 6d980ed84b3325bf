//! Scenario 3, agent locks under SIGKILL: 4 worker processes run turns over 20 chats of 5
//! users with a 1 s lease, one SIGKILLed every 0.5 s and replaced. Triggers on both lock tables
//! log every takeover with the age of the lock taken over: none may be younger than the lease.
//! After a final sweep of stale locks (`release_stale`), every lock is free.
use std::process::ExitCode;
use std::time::Duration;

use diesel_lease::Lease;
use diesel_lease_agent::{AgentLocks, Error, TurnRef};

use crate::db::{self, FaultConn};
use crate::fleet::{self, Fleet};
use crate::report::Outcome;

const CHATS: usize = 20;
const USERS: usize = 5;
const LEASE: Duration = Duration::from_secs(1);
/// How long the workers run while they are being killed.
const KILLING: usize = 16;

fn lease() -> Lease {
    Lease::new(LEASE).expect("a valid lease")
}

pub fn run<C: FaultConn>(url: &str, outcome: &mut Outcome) -> Result<(), String> {
    let pool = db::pool::<C>(url, 2);
    {
        let conn = &mut *pool
            .get()
            .map_err(|e| format!("a connection to {url}: {e}"))?;
        db::execute(conn, &C::KIND.schema()).map_err(|e| format!("the schema: {e}"))?;
        conn.migrate_agent()
            .map_err(|e| format!("the agent tables: {e}"))?;
        for (table, key) in [("conversations", "id"), ("user_settings", "user_id")] {
            db::execute(
                conn,
                &C::KIND.log_claims(table, key, "busy_turn_ref", "busy_since"),
            )
            .map_err(|e| format!("the triggers on {table}: {e}"))?;
        }
        conn.reset_chats(CHATS, USERS)
            .map_err(|e| format!("the chats: {e}"))?;
    }
    let mut fleet = Fleet::start("agent", C::KIND, url, &[None; 4])?;
    fleet.every(
        Duration::from_millis(500),
        KILLING,
        |_| true,
        Fleet::kill_one,
    )?;
    fleet.finish(Duration::from_secs(10));
    let conn = &mut *pool.get().map_err(|e| e.to_string())?;
    let swept = sweep(conn)?;
    let (chats, users) = conn.locked_counts().map_err(|e| e.to_string())?;
    let tally = std::mem::take(&mut *fleet.tally.lock().unwrap_or_else(|e| e.into_inner()));
    outcome.figure("kills (SIGKILL)", fleet.kills);
    outcome.figure("turns run (said by the workers)", tally.turns);
    outcome.figure("refusals (chat or user busy)", tally.refused);
    let mut taken_over = 0;
    for table in ["conversations", "user_settings"] {
        let takeovers = conn.takeovers(table, lease()).map_err(|e| e.to_string())?;
        taken_over += takeovers.count;
        outcome.takeovers(&format!("{table}: "), &takeovers, LEASE);
    }
    outcome.figure("stale locks freed by the final sweep", swept);
    outcome.figure(
        "locks held after the sweep (chats, users)",
        format!("{chats}, {users}"),
    );
    outcome.figure("worker errors, by kind", tally.errors_text());
    outcome.fail_all(std::mem::take(&mut fleet.failures));
    outcome.check(chats == 0 && users == 0, || {
        format!("{chats} chats and {users} users still locked after the sweep")
    });
    outcome.check(tally.unexpected_errors() == 0, || {
        format!("worker errors: {}", tally.errors_text())
    });
    outcome.check(taken_over > 0, || {
        "no lock of a killed worker was taken over: nothing was tested".into()
    });
    Ok(())
}

/// Frees what dead workers left, as an operator's sweep would: each lock once it is older than
/// the lease, by the database's clock (a lock still fresh is tried again, for up to 10 s).
fn sweep<C: FaultConn>(conn: &mut C) -> Result<usize, String> {
    let locks = AgentLocks::new("sweeper", lease()).map_err(|e| e.to_string())?;
    let started = crate::timer();
    let mut swept = 0;
    loop {
        let held = conn.locked_chats().map_err(|e| e.to_string())?;
        if held.is_empty() || started.elapsed() > Duration::from_secs(10) {
            return Ok(swept);
        }
        for (chat, user, turn) in held {
            let turn = TurnRef::new(&turn).map_err(|e| e.to_string())?;
            if locks
                .release_stale(conn, &chat, &user, &turn)
                .map_err(|e| e.to_string())?
            {
                swept += 1;
            }
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The worker process: turns on chats picked at random, each holding both locks for 30 ms,
/// until told to stop.
pub fn work<C: FaultConn>(url: &str, name: &str) -> ExitCode {
    fleet::watch_stdin();
    let pool = db::pool::<C>(url, 1);
    let Ok(locks) = AgentLocks::new(name, lease()) else {
        return ExitCode::FAILURE;
    };
    let mut random = u64::from(std::process::id());
    let mut turns = 0_u64;
    while !fleet::stopping() {
        random = random
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        let chat = (random >> 33) as usize % CHATS;
        turns += 1;
        match turn(&pool, &locks, chat, &format!("{name}-{turns}")) {
            Ok(()) => println!("turn"),
            Err(Error::ConversationBusy(_) | Error::TurnInFlight(_) | Error::ClickInFlight(_)) => {
                println!("refused");
                std::thread::sleep(Duration::from_millis(5));
            }
            Err(Error::Lease(error)) => {
                println!("error {}", fleet::error_kind(&error));
                std::thread::sleep(Duration::from_millis(50));
            }
            Err(other) => println!("error Agent: {other}"),
        }
    }
    ExitCode::SUCCESS
}

fn turn<C: FaultConn>(
    pool: &db::Pool<C>,
    locks: &AgentLocks,
    chat: usize,
    turn: &str,
) -> Result<(), Error> {
    let conn = &mut *pool.get()?;
    let turn = TurnRef::new(turn)?;
    let (chat, user) = (db::chat(chat), db::user(chat % USERS));
    locks.acquire(conn, &chat, &user, &turn)?;
    std::thread::sleep(Duration::from_millis(30));
    locks.release(conn, &chat, &user, &turn)?;
    Ok(())
}
