//! An AI-agent chat application's turn and user locks, on several nodes at once.
//!
//! ```text
//! cargo run --example agent_turns                    # embedded SQLite, no server
//! DATABASE_URL=postgres://postgres@127.0.0.1/test cargo run --example agent_turns --features postgres
//! DATABASE_URL=mysql://root@127.0.0.1/test cargo run --example agent_turns --features mysql
//! ```
//!
//! Threads stand for nodes. It prints a timeline of who holds what, then a summary, and exits
//! non-zero if an invariant broke: two turns in one chat, two turns (or a turn and a click) in
//! flight for one user, or a lock left behind at the end. The nodes' code (turns.rs) is written
//! once, generic over the connection, and called with a pool of the backend `DATABASE_URL` names.
use std::process::ExitCode;

#[path = "../support/mod.rs"]
#[macro_use]
mod support;
mod turns;

/// The story, its code generic over the connection, on the backend named.
fn run(backend: &support::Backend) -> support::Outcome {
    on_backend!(backend, 8, |pool| Ok(turns::Story::run(pool)?))
}

fn main() -> ExitCode {
    support::main("agent_turns", run)
}
