//! The two locks of an AI-agent chat application, built on the generic lease layer.
//!
//! A **turn** of the agent holds its conversation's lock (one turn per chat) and its user's lock
//! (one turn in flight per user, so parallel chats cannot run past a limit). A **click** on a
//! confirmation card takes the user's lock alone, for a short hold. Both locks are rows of
//! [`schema::conversations`] and [`schema::user_settings`], claimed through
//! [`ClaimLease`](diesel_lease::ClaimLease): never advisory locks, which would pin a pool connection for
//! the whole turn.
//!
//! A lock is held by a turn or click **on a node**: its reference (the row's `busy_turn_ref`)
//! and the node of its [`AgentLocks`] (`busy_owner`) together. The reference is the caller's and
//! may reach two nodes, as when a request is retried onto another; the second node is refused,
//! with the refusal naming the node that holds the lock, and it can neither check, keep nor
//! release that lock. Only the node holding it may take it again with the same reference, to
//! restart its lease. [`AgentLocks::fresh`] and [`AgentLocks::release_stale`] ask about the turn
//! wherever it runs.
//!
//! ```
//! # include!("doctest_setup.rs");
//! use diesel_lease_agent::{AgentLocks, ClickRef, Error, TurnRef};
//! use diesel_lease::Lease;
//!
//! # fn main() -> Result<(), Error> {
//! # let conn = &mut agent_connection()?;
//! let locks = AgentLocks::new("node-a", Lease::from_secs(120)?)?;
//! let turn = TurnRef::new("turn-1")?;
//! locks.acquire(conn, "chat-1", "user-1", &turn)?;
//! // ... the agent runs, checking `held` before each round ...
//! locks.release(conn, "chat-1", "user-1", &turn)?;
//!
//! let click = ClickRef::new();
//! locks.acquire_user(conn, "user-1", &click, Lease::from_secs(10)?)?;
//! locks.release_user(conn, "user-1", &click)?;
//! # Ok(())
//! # }
//! ```
#![doc = include_str!("GUIDE.md")]
#![forbid(unsafe_code)]
#![warn(missing_docs, missing_debug_implementations, unreachable_pub)]
#![warn(clippy::unwrap_used, clippy::expect_used)]

// The doctests' shared setup, which they pull in with `include!`, declared for rustfmt alone and
// never compiled as part of the library.
#[cfg(any())]
mod doctest_setup;

mod connection;
mod error;
mod kept;
mod locks;
mod migrations;
mod multi_connection;
#[cfg(feature = "mysql")]
mod mysql;
mod reads;
mod refs;
pub mod schema;
mod transaction;

#[doc(hidden)]
pub use connection::Sealed;
pub use connection::{AgentBackend, AgentConnection};
pub use error::Error;
pub use kept::KeptTurn;
pub use locks::AgentLocks;
pub use migrations::{run_migrations, AgentMigrations};
pub use refs::{ClickRef, Holder, HolderKind, TurnRef};

#[doc(hidden)]
pub use diesel_lease as __lease;
