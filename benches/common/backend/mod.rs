//! The backends behind one trait: each backend's SQL (as the library writes it) and connection
//! type in [`Backend`], and the operations on its connections in [`Ops`], so that every
//! measurement is written once, generic over the backend.
//!
//! [`Ops`] is implemented for each backend by the same file, `ops.rs`, included into each
//! backend's module with its concrete connection type: those operations call the library and
//! Diesel with the concrete connection, whose trait bounds a generic function would have to
//! spell out.
use std::time::Duration;

use diesel::prelude::*;
use diesel::r2d2::{ConnectionManager, CustomizeConnection, Pool, R2D2Connection};
use diesel_lease::{Claim, Keeper, Kept, Lease};
use diesel_lease_agent::AgentConnection;

use crate::shared::Res;
use crate::tables::{bench_kept, LeaseRow};

pub mod mysql;
pub mod pg;
pub mod sqlite;

// `ops.rs` is compiled through `include!` in each backend's module; this declaration, which the
// compiler never sees, is there for rustfmt, which formats the file through it.
#[cfg(rustfmt)]
mod ops;

pub use mysql::Mysql;
pub use pg::Pg;
pub use sqlite::Sqlite;

/// A backend: its connection, and the SQL the library sends on it.
pub trait Backend: 'static {
    type Conn: R2D2Connection + AgentConnection + Send + 'static;
    const NAME: &'static str;
    /// The server's default port (0: no network).
    const DEFAULT_PORT: u16;
    /// The number of the claim cycle's overhead in docs/benchmarks.md (6 for SQLite).
    const OVERHEAD_SECTION: u32 = crate::measurements::OVERHEAD;
    const DDL: &'static str;
    /// `bench_kept`, the table of measurement 9.
    const KEPT_DDL: &'static str;
    /// `bench_growth`, the queue of measurement 11, and its indexes: the token's, and the one
    /// a claim of queued jobs in key order needs (the guide's chapter 6, "Adding the lease columns").
    const GROWTH_DDL: &'static [&'static str];
    /// After `bench_growth` is filled: fresh statistics, so that the planner knows its size,
    /// and the fill's writes flushed, so that they do not slow what is measured next.
    const GROWTH_SETTLE: &'static [&'static str];
    /// The plan of a statement: the prefix that asks for it, and the columns of its answer
    /// that say which index it reads.
    const EXPLAIN: &'static str;
    const PLAN_COLUMNS: &'static [&'static str];
    const CLAIM: &'static str;
    /// The claim's row read back by key and token, where the claim has no `RETURNING`.
    const READ_BACK: Option<&'static str>;
    const RENEW: &'static str;
    const RELEASE: &'static str;
    const CLAIM_CHAT: &'static str;
    const CLAIM_USER: &'static str;
    const RELEASE_CHAT: &'static str;
    const RELEASE_USER: &'static str;
    /// Both locks of an agent turn taken by one multi-table `UPDATE`, where the library acquires
    /// them so (MySQL/MariaDB); otherwise the hand-written acquire is a transaction of two claims.
    const ACQUIRE_BOTH: Option<&'static str> = None;
    /// Both locks of an agent turn released by one multi-table `UPDATE`, likewise.
    const RELEASE_BOTH: Option<&'static str> = None;
    /// The server's settings reported with the results: (label, query of a `value` column).
    const SETTINGS: &'static [(&'static str, &'static str)];
    /// The advisory lock of measurement 4, by name, if the backend has one.
    const ADVISORY: Option<&'static str>;
    /// Whether measurement 5 (`FOR UPDATE NOWAIT`) runs.
    const NOWAIT: bool;

    /// Measurement 11's namespace for its queue of `rows` jobs (a schema on PostgreSQL, a
    /// database on MySQL/MariaDB, a file on SQLite), created if missing: the URL of a connection
    /// into it. A namespace a size, so that the queues of every size stand side by side and their
    /// rounds interleave.
    fn growth_namespace(url: &str, rows: i64) -> Res<String>;

    /// That namespace dropped, with its queue.
    fn drop_growth_namespace(url: &str, rows: i64) -> Res<()>;

    /// Sets a connection up (SQLite's pragmas; nothing elsewhere).
    fn configure(_conn: &mut Self::Conn) -> QueryResult<()> {
        Ok(())
    }

    /// The pool's connection customizer, if the backend needs one.
    fn customizer() -> Option<Box<dyn CustomizeConnection<Self::Conn, diesel::r2d2::Error>>> {
        None
    }

    /// The claim of the cycle through `diesel::update`, its row read back as the library
    /// reads it.
    fn diesel_update_claim(
        conn: &mut Self::Conn,
        id: i64,
        claim: &Claim,
        lease: Lease,
    ) -> QueryResult<Option<LeaseRow>>;

    /// The first of `SELECT .. FOR UPDATE NOWAIT`: is the row held and fresh?
    fn nowait_busy(conn: &mut Self::Conn, id: i64, micros: i64) -> QueryResult<bool>;

    fn advisory_lock(conn: &mut Self::Conn, key: i64) -> QueryResult<bool>;

    fn advisory_unlock_all(conn: &mut Self::Conn) -> QueryResult<()>;
}

/// What the measurements do on a backend's connections: the library's operations and the same
/// SQL by hand, through `sql_query` (`CACHED = false`) or prepared once (`CACHED = true`).
pub trait Ops: Backend {
    /// The benchmark's tables, fresh, with free rows 1..=32 and the hot row, and the agent
    /// tables without rows of the benchmark's.
    fn setup(conn: &mut Self::Conn) -> Res<()>;
    fn teardown(conn: &mut Self::Conn) -> Res<()>;
    /// `bench_growth` anew: `rows` jobs, the first `done` of them done, the rest queued.
    fn growth_setup(conn: &mut Self::Conn, rows: i64, done: i64) -> Res<()>;
    /// One claim of up to `batch` queued jobs of `bench_growth` in key order, and their finish,
    /// which sets their status to `then` (`queued`: back in the queue): the jobs it claimed.
    fn growth_cycle(
        conn: &mut Self::Conn,
        batch: usize,
        lease: Lease,
        then: &'static str,
    ) -> Res<usize>;
    /// The cycle of `growth_cycle`, its claim from `cursor` when one is given (in key order
    /// too).
    fn growth_cycle_from(
        conn: &mut Self::Conn,
        batch: usize,
        lease: Lease,
        then: &'static str,
        cursor: Option<&diesel_lease::ClaimCursor<i64>>,
    ) -> Res<usize>;
    /// `bench_growth` dropped.
    fn growth_teardown(conn: &mut Self::Conn) -> Res<()>;
    /// The plan of the claim's read of its candidates, one line a step.
    fn growth_plan(conn: &mut Self::Conn) -> Res<String>;
    /// Frees rows 1..=32.
    fn free_rows(conn: &mut Self::Conn) -> Res<()>;
    /// The value of each of [`Backend::SETTINGS`].
    fn settings(conn: &mut Self::Conn) -> Res<Vec<(String, String)>>;

    /// Claim (getting the row back), renew, release: through the library, with
    /// `diesel_lease::update`, which Diesel prepares once per connection.
    fn lib_cycle(conn: &mut Self::Conn, id: i64, claim: &Claim, lease: Lease) -> Res<()>;
    /// The same through `diesel::update`, which Diesel prepares at every execution.
    fn lib_cycle_diesel_update(
        conn: &mut Self::Conn,
        id: i64,
        claim: &Claim,
        lease: Lease,
    ) -> Res<()>;
    /// Row `id` of `bench_leases` taken by `claim`, whoever held it.
    fn hold(conn: &mut Self::Conn, id: i64, claim: &Claim) -> Res<()>;
    /// The library's claim of row `id`: whether it won.
    fn lib_claim(conn: &mut Self::Conn, id: i64, claim: Claim, lease: Lease) -> Res<bool>;
    /// The claim by hand: the same SQL and binds.
    fn hand_claim<const CACHED: bool>(
        conn: &mut Self::Conn,
        id: i64,
        owner: &str,
        token: &str,
        micros: i64,
    ) -> QueryResult<Option<LeaseRow>>;
    /// Claim, renew, release by hand.
    fn hand_cycle<const CACHED: bool>(
        conn: &mut Self::Conn,
        id: i64,
        owner: &str,
        token: &str,
        micros: i64,
    ) -> Res<()>;

    /// Acquire an agent turn by hand, as the library does: [`Backend::ACQUIRE_BOTH`], or one
    /// transaction, the chat's lock, then the user's.
    fn hand_acquire<const CACHED: bool>(
        conn: &mut Self::Conn,
        chat: &str,
        user: &str,
        token: &str,
    ) -> Res<()>;
    /// Release by hand, as the library does: [`Backend::RELEASE_BOTH`], or one transaction of
    /// both releases.
    fn hand_release<const CACHED: bool>(
        conn: &mut Self::Conn,
        chat: &str,
        user: &str,
        token: &str,
    ) -> Res<()>;
    /// The chat's release alone, outside a transaction (a probe of round trips).
    fn hand_release_chat<const CACHED: bool>(
        conn: &mut Self::Conn,
        chat: &str,
        token: &str,
    ) -> Res<()>;
    /// Chats `{prefix}-chat-{n}` of users `{prefix}-user-{n}`, both rows created, for n < count.
    fn agent_rows(conn: &mut Self::Conn, prefix: &str, count: usize) -> Res<Vec<(String, String)>>;
    /// The turns of measurement 4 that hold both their locks.
    fn count_holders(conn: &mut Self::Conn) -> Res<i64>;

    /// `bench_kept` with free rows 1..=rows.
    fn kept_setup(conn: &mut Self::Conn, rows: i64) -> Res<()>;
    fn kept_teardown(conn: &mut Self::Conn) -> Res<()>;
    /// Rows 1..=rows of `bench_kept` taken by `claim` (untimed set-up of a measurement).
    fn kept_take(conn: &mut Self::Conn, rows: i64, claim: &Claim) -> Res<()>;
    /// Frees every row of `bench_kept`.
    fn kept_free(conn: &mut Self::Conn) -> Res<()>;
    /// The rows `ids` of `bench_kept` renewed one by one, each by the guarded renewal prepared
    /// once: `diesel_lease::update(t.find(id).filter(t.held_by(token))).set(t.renewed())`.
    fn renew_each(conn: &mut Self::Conn, ids: &[i64], token: &str) -> Res<()>;
    /// `keeper` keeps the rows `ids` of `bench_kept` that `claim` holds.
    fn keep(
        keeper: &Keeper<Self::Conn>,
        claim: Claim,
        ids: Vec<i64>,
    ) -> Res<Kept<bench_kept::table>>;
    /// `kept` released through `conn`, by `Kept::release`: the rows it freed.
    fn kept_release(conn: &mut Self::Conn, kept: &Kept<bench_kept::table>) -> Res<Vec<i64>>;
    /// The claim of measurement 9's cycles: row `id` of `bench_kept` by `claim_row`; its claim.
    fn kept_claim(conn: &mut Self::Conn, id: i64, claim: Claim, lease: Lease) -> Res<Claim>;
    /// The bare renewal and release of row `id` of `bench_kept`, each `diesel_lease::update`.
    fn bare_renew_release(conn: &mut Self::Conn, id: i64, claim: &Claim) -> Res<()>;
}

#[derive(QueryableByName)]
pub struct Flag {
    #[diesel(sql_type = diesel::sql_types::Bool)]
    pub flag: bool,
}

#[derive(QueryableByName)]
pub struct IntFlag {
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    pub flag: i64,
}

/// A benchmark's pool of its own.
pub type ConnPool<B> = Pool<ConnectionManager<<B as Backend>::Conn>>;

/// A connection, set up.
pub fn connect<B: Backend>(url: &str) -> Res<B::Conn> {
    let mut conn = B::Conn::establish(url)?;
    B::configure(&mut conn)?;
    Ok(conn)
}

/// The name of measurement 11's namespace for its queue of `rows` jobs.
fn growth_namespace_name(rows: i64) -> String {
    format!("bench_growth_{rows}")
}

/// Runs `sql` on a connection of its own to `url`: a namespace created or dropped.
fn run_alone<B: Backend>(url: &str, sql: String) -> Res<()> {
    use diesel::connection::SimpleConnection;
    B::Conn::establish(url)?.batch_execute(&sql)?;
    Ok(())
}

/// A pool of `size` connections, all open; `test_on_check_out` is r2d2's `SELECT 1` per
/// checkout.
pub fn pool<B: Backend>(url: &str, size: u32, test_on_check_out: bool) -> Res<ConnPool<B>> {
    let builder = Pool::builder()
        .max_size(size)
        .min_idle(Some(size))
        .test_on_check_out(test_on_check_out)
        .connection_timeout(Duration::from_secs(30));
    let builder = match B::customizer() {
        Some(customizer) => builder.connection_customizer(customizer),
        None => builder,
    };
    Ok(builder.build(ConnectionManager::new(url))?)
}
