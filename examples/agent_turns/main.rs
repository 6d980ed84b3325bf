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
//! flight for one user, or a lock left behind at the end.
use std::process::ExitCode;

#[path = "../support/mod.rs"]
#[macro_use]
mod support;

on_every_backend!("turns.rs");

fn main() -> ExitCode {
    support::main("agent_turns", run)
}

// The file `on_every_backend!` includes, declared for rustfmt alone and never compiled: rustfmt
// does not follow `include!`, so `cargo fmt` formats and checks it through this declaration.
#[cfg(any())]
mod turns;
