//! A scheduled task on three nodes, each running it every second for ten seconds under the
//! task's lock: each tick runs exactly once, on the first node to reach it, checked in the
//! database.
//!
//! ```text
//! cargo run --example scheduled_tasks                # embedded SQLite, no server
//! DATABASE_URL=postgres://postgres@127.0.0.1/test cargo run --example scheduled_tasks --features postgres
//! DATABASE_URL=mysql://root@127.0.0.1/test cargo run --example scheduled_tasks --features mysql
//! ```
//!
//! Threads stand for nodes, each with a pool of its own, and their clocks disagree: node-b's is
//! 120 ms ahead of node-a's, node-c's 250 ms. Each node fires the task at every second by its
//! own clock, so the node whose clock is furthest ahead fires first and runs it; a run holds the
//! lock at least 600 ms, by the database's clock, so the nodes that fire the same tick later
//! are refused, and say who holds the lock. node-c is stopped after tick 5, and node-b, whose
//! clock is next furthest ahead, runs the ticks after it. The task records each tick it runs in a table; the
//! example prints a timeline, then the ticks as the table has them, and exits non-zero unless
//! every tick ran exactly once. A node whose statements stall (behind a busy disk, say) longer
//! than the shortest hold allows for does not run a tick twice: under the lock, the task reads
//! the table first; refused by a late run of the tick before, a node tries again as it frees. The nodes' code (schedule.rs) is written once, generic over the
//! connection, and called with pools of the backend `DATABASE_URL` names.
use std::process::ExitCode;

#[path = "../support/mod.rs"]
#[macro_use]
mod support;
mod schedule;

/// The schedule, its code generic over the connection, on the backend named.
fn run(backend: &support::Backend) -> support::Outcome {
    on_backend!(backend, 2, |pool| Ok(schedule::Schedule::run(
        pool,
        backend.url()
    )?))
}

fn main() -> ExitCode {
    support::main("scheduled_tasks", run)
}
