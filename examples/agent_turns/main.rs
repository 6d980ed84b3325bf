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
mod support;

use support::Backend;

#[cfg(feature = "sqlite")]
mod on_sqlite {
    type Conn = diesel::SqliteConnection;
    include!("turns.rs");
}

#[cfg(feature = "postgres")]
mod on_postgres {
    type Conn = diesel::PgConnection;
    include!("turns.rs");
}

#[cfg(feature = "mysql")]
mod on_mysql {
    type Conn = diesel::MysqlConnection;
    include!("turns.rs");
}

fn run(backend: &Backend) -> Result<bool, String> {
    match backend {
        #[cfg(feature = "sqlite")]
        Backend::Sqlite(path) => on_sqlite::run(path, true).map_err(|e| e.to_string()),
        #[cfg(feature = "postgres")]
        Backend::Postgres(url) => on_postgres::run(url, false).map_err(|e| e.to_string()),
        #[cfg(feature = "mysql")]
        Backend::Mysql(url) => on_mysql::run(url, false).map_err(|e| e.to_string()),
        #[allow(unreachable_patterns)]
        other => Err(support::feature_off(other)),
    }
}

fn main() -> ExitCode {
    support::main("agent_turns", run)
}
