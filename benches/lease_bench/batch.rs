//! Measurement 8, batch claims: workers claim up to n queued jobs with `claim_batch` and finish
//! the whole batch with one `release_rows`, against the same SQL by hand, prepared once (the
//! like-for-like baseline), and against selecting the candidates and then claiming each by id;
//! and one row's `claim_row` against the bare changesets composed by hand.
//!
//! As in `suite.rs`, every hand-written statement is checked at start-up to be the very SQL (and
//! binds) the library sends, as recorded by Diesel's instrumentation.
use std::cell::RefCell;
use std::fmt::Write as _;
use std::marker::PhantomData;
use std::sync::Barrier;
use std::time::{Duration, Instant};

use diesel::backend::Backend;
use diesel::connection::SimpleConnection;
use diesel::prelude::*;
use diesel::query_builder::{AstPass, Query, QueryFragment, QueryId};
use diesel::result::{DatabaseErrorKind, Error as DieselError};
use diesel::sql_types::BigInt;
use diesel_lease::backend::read;
use diesel_lease::prelude::*;

use crate::measure::{interleave, median, paired_ratio, Plan, StatementLog, Variant};
use crate::results::{Better, Goal, Results, Row};
use crate::suite::{new_token, LEASE_MICROS, OWNER};
use crate::text::number;
use crate::{check, hand_statement, read_one, split_placeholders, Bind, Options, PreparedSql, Res};

/// The measurement's number, in `--only` and in docs/benchmarks.md.
pub const SECTION: u32 = 8;
/// Worker threads, each on its own pooled connection.
const THREADS: [usize; 3] = [1, 4, 16];
/// The most jobs one claim takes.
const BATCHES: [usize; 3] = [1, 10, 100];
/// How much longer than one slice the library would take to drain a cell's queue, at the rate
/// of its warm-up (within the plan's bounds): the slice, not the queue, ends most samples.
const QUEUE_SLACK: f64 = 1.25;
/// The goals: the library against the same SQL by hand, prepared once (jobs/s)...
const LIKE_FOR_LIKE: f64 = 0.95;
/// ... against select-then-claim-each at the largest batch (jobs/s) ...
const OVER_NAIVE: f64 = 5.0;
/// ... and `claim_row` against the bare changesets (µs per claim).
const CLAIM_ROW: f64 = 1.03;

const LIBRARY: &str = "library";
const HAND: &str = "same SQL by hand, prepared once";
const NAIVE: &str = "select, then claim each by id";
const BARE: &str = "bare changesets by hand";
/// The same, the row read with `load` (every row collected) rather than `get_result`.
const BARE_COLLECTED: &str = "bare changesets by hand, read with load";

diesel::table! {
    use diesel::sql_types::*;
    use diesel_lease::sql_types::UtcTimestamp;

    /// The queue of measurement 8.
    bench_jobs (id) {
        id -> BigInt,
        status -> Text,
        owner -> Nullable<Text>,
        claim_token -> Nullable<Text>,
        claimed_at -> Nullable<UtcTimestamp>,
    }
}

diesel_lease::claim_lease!(bench_jobs);

/// A job, as `claim_row` and the bare changesets read it back.
#[derive(Debug, Queryable)]
#[diesel(table_name = bench_jobs)]
#[allow(dead_code)] // read back to be decoded, as a caller would
pub struct JobRow {
    pub id: i64,
    pub status: String,
    pub owner: Option<String>,
    pub claim_token: Option<String>,
    pub claimed_at: Option<chrono::DateTime<chrono::Utc>>,
}

/// A job's key, as hand-written SQL reads it.
#[derive(QueryableByName)]
pub struct Id {
    #[diesel(sql_type = BigInt)]
    id: i64,
}

fn ids(rows: Vec<Id>) -> Vec<i64> {
    rows.into_iter().map(|row| row.id).collect()
}

/// A claim that lost a write conflict (a deadlock victim) claimed nothing, as the library says
/// of its own (it runs outside any transaction of the caller's).
fn lost_conflict_claims_nothing(claimed: QueryResult<Vec<Id>>) -> QueryResult<Vec<i64>> {
    match claimed {
        Err(DieselError::DatabaseError(DatabaseErrorKind::SerializationFailure, _)) => {
            Ok(Vec::new())
        }
        other => other.map(ids),
    }
}

/// The figure of a cell of the batch measurement.
fn cell_figure(threads: usize, batch: usize) -> String {
    format!("jobs/s, {threads} thread(s), batch {batch}")
}

const LOST_FIGURE: &str = "lost races, all cells (a claim that found its job taken)";
const CLAIM_ROW_FIGURE: &str = "µs per claim of one row by key";

// ---- Hand-written SQL with a list of keys ----

/// Hand-written SQL where its text says `{keys}`: whether a row's key is among a list, written as
/// the library writes it (`diesel_lease::__private::sql::KeysIn`), known by its marker type.
pub trait KeyedHandSql: 'static {
    fn parts() -> &'static KeyedParts;
}

/// A statement with a list of keys: the key column, and the fragments before `{keys}` and after
/// it, each cut at its placeholders.
pub struct KeyedParts {
    key: &'static str,
    head: Vec<&'static str>,
    tail: Vec<&'static str>,
}

/// `sql` cut at `{keys}`, each side cut at its placeholders; `key` is the key column.
pub fn keyed_parts(key: &'static str, sql: &'static str) -> KeyedParts {
    let (head, tail) = sql.split_once("{keys}").unwrap_or((sql, ""));
    KeyedParts {
        key,
        head: split_placeholders(head),
        tail: split_placeholders(tail),
    }
}

/// Declares the marker of a hand-written statement with a list of keys of column `$key`.
macro_rules! keyed_statement {
    ($marker:ident, $key:expr, $sql:expr) => {
        pub struct $marker;

        impl $crate::batch::KeyedHandSql for $marker {
            fn parts() -> &'static $crate::batch::KeyedParts {
                static PARTS: std::sync::OnceLock<$crate::batch::KeyedParts> =
                    std::sync::OnceLock::new();
                PARTS.get_or_init(|| $crate::batch::keyed_parts($key, $sql))
            }
        }
    };
}

/// The most keys in one `IN` list, as the library writes them: longer lists are joined by `OR`.
const MOST_KEYS_IN_ONE_LIST: usize = 512;

/// Hand-written SQL with `B` binds, then the list of keys, then `A` binds. The keys are written as
/// the library writes a key list: one key as Diesel's equality, `((key = ?))`; several as
/// `((key) IN (?, ?, ..))`, padded to a power of two with the last key so that the text comes in a
/// few lengths, in lists of at most 512 joined by `OR`. It has no static query id: Diesel prepares
/// it once per connection and text, as it does the library's key lists.
pub struct KeyedSql<'a, M, const B: usize, const A: usize> {
    before: [Bind<'a>; B],
    keys: &'a [i64],
    after: [Bind<'a>; A],
    marker: PhantomData<M>,
}

impl<'a, M: KeyedHandSql, const B: usize, const A: usize> KeyedSql<'a, M, B, A> {
    pub fn new(before: [Bind<'a>; B], keys: &'a [i64], after: [Bind<'a>; A]) -> Self {
        debug_assert_eq!(M::parts().head.len(), B + 1, "one bind per placeholder");
        debug_assert_eq!(M::parts().tail.len(), A + 1, "one bind per placeholder");
        Self {
            before,
            keys,
            after,
            marker: PhantomData,
        }
    }
}

/// Cached by its SQL text, which varies with the number of keys.
impl<M, const B: usize, const A: usize> QueryId for KeyedSql<'_, M, B, A> {
    type QueryId = ();
    const HAS_STATIC_QUERY_ID: bool = false;
}

impl<M, const B: usize, const A: usize> Query for KeyedSql<'_, M, B, A> {
    type SqlType = diesel::sql_types::Untyped;
}

/// Pushes `fragments` with `binds` between them.
fn walk_fragments<'b, DB>(
    fragments: &[&'static str],
    binds: &'b [Bind<'_>],
    mut out: AstPass<'_, 'b, DB>,
) -> QueryResult<()>
where
    DB: Backend
        + diesel::sql_types::HasSqlType<diesel::sql_types::Text>
        + diesel::sql_types::HasSqlType<BigInt>,
    str: diesel::serialize::ToSql<diesel::sql_types::Text, DB>,
    i64: diesel::serialize::ToSql<BigInt, DB>,
{
    for (n, fragment) in fragments.iter().enumerate() {
        out.push_sql(fragment);
        match binds.get(n) {
            Some(Bind::Text(text)) => out.push_bind_param::<diesel::sql_types::Text, _>(*text)?,
            Some(Bind::BigInt(value)) => out.push_bind_param::<BigInt, _>(value)?,
            None => {}
        }
    }
    Ok(())
}

impl<M, const B: usize, const A: usize, DB> QueryFragment<DB> for KeyedSql<'_, M, B, A>
where
    M: KeyedHandSql,
    DB: Backend
        + diesel::sql_types::HasSqlType<diesel::sql_types::Text>
        + diesel::sql_types::HasSqlType<BigInt>,
    str: diesel::serialize::ToSql<diesel::sql_types::Text, DB>,
    i64: diesel::serialize::ToSql<BigInt, DB>,
{
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        let KeyedParts { key, head, tail } = M::parts();
        walk_fragments(head, &self.before, out.reborrow())?;
        out.push_sql("(");
        match self.keys {
            [] => out.push_sql("1 = 0"),
            [only] => {
                out.push_sql("(");
                out.push_sql(key);
                out.push_sql(" = ");
                out.push_bind_param::<BigInt, _>(only)?;
                out.push_sql(")");
            }
            keys => {
                let padded = keys.len().next_power_of_two();
                let last = keys.last().into_iter().cycle();
                for (n, key_value) in keys.iter().chain(last).take(padded).enumerate() {
                    let within = n % MOST_KEYS_IN_ONE_LIST;
                    if within == 0 {
                        if n > 0 {
                            out.push_sql(") OR ");
                        }
                        out.push_sql("(");
                        out.push_sql(key);
                        out.push_sql(") IN (");
                    } else {
                        out.push_sql(", ");
                    }
                    out.push_bind_param::<BigInt, _>(key_value)?;
                }
                out.push_sql(")");
            }
        }
        out.push_sql(")");
        walk_fragments(tail, &self.after, out.reborrow())
    }
}

impl<M, const B: usize, const A: usize, C> RunQueryDsl<C> for KeyedSql<'_, M, B, A> {}

/// A hand-written statement cached by its SQL text rather than by its marker type, as the
/// library caches a statement without a static query id (MariaDB's batch candidates).
pub struct ByText<Q>(pub Q);

impl<Q> QueryId for ByText<Q> {
    type QueryId = ();
    const HAS_STATIC_QUERY_ID: bool = false;
}

impl<Q: Query> Query for ByText<Q> {
    type SqlType = Q::SqlType;
}

impl<Q: QueryFragment<DB>, DB: Backend> QueryFragment<DB> for ByText<Q> {
    fn walk_ast<'b>(&'b self, out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        self.0.walk_ast(out)
    }
}

impl<Q, C> RunQueryDsl<C> for ByText<Q> {}

/// The fence the library reads back beside a claimed row: `NULL` on a table without one.
pub fn no_fence() -> diesel_lease::sql::Null<diesel::sql_types::Nullable<BigInt>> {
    diesel_lease::sql::Null::default()
}

// ---- Each backend's statements, as the library writes them ----

/// The hand-written batch of a backend with `RETURNING`: the claim is one statement
/// (`HandClaim`, with the binds `claim_binds` gives), the release another (`HandRelease`).
macro_rules! returning_backend {
    () => {
        hand_statement!(HandClaim, CLAIM);
        keyed_statement!(HandRelease, KEY, RELEASE);
        keyed_statement!(HandReleaseOne, KEY, RELEASE_ONE);

        /// The claim of up to `n` queued jobs for `owner` under `token`: the keys won.
        pub fn hand_claim(
            conn: &mut Conn,
            n: i64,
            owner: &str,
            token: &str,
        ) -> QueryResult<Vec<i64>> {
            let claimed =
                PreparedSql::<HandClaim, 8>::new(claim_binds(n, owner, token)).load::<Id>(conn);
            lost_conflict_claims_nothing(claimed)
        }

        /// The release of `keys` that `token` holds, setting `status`: the keys released. One
        /// key: the `UPDATE` without `RETURNING`, whose matched count says whether the token
        /// still held the row, as the library writes it.
        pub fn hand_release(
            conn: &mut Conn,
            keys: &[i64],
            token: &str,
            status: &str,
        ) -> QueryResult<Vec<i64>> {
            if let [key] = keys {
                let matched = KeyedSql::<HandReleaseOne, 1, 2>::new(
                    [Bind::Text(status)],
                    keys,
                    [Bind::Text(token), Bind::Text(token)],
                )
                .execute(conn)?;
                return Ok(if matched > 0 { vec![*key] } else { Vec::new() });
            }
            KeyedSql::<HandRelease, 1, 2>::new(
                [Bind::Text(status)],
                keys,
                [Bind::Text(token), Bind::Text(token)],
            )
            .load::<Id>(conn)
            .map(ids)
        }

        /// The claim of one row composed from the library's changesets, its row read back by
        /// `RETURNING`: with `get_result`, or (`COLLECT`) with `load`, every row the statement
        /// returns collected, as the library's claims do.
        pub fn bare_claim_row<const COLLECT: bool>(
            conn: &mut Conn,
            id: i64,
            lease: Lease,
            claim: &Claim,
        ) -> QueryResult<Option<JobRow>> {
            let t = bench_jobs::table;
            // The library reads the fence beside the row: NULL on a table without one.
            let statement = diesel_lease::update(t.find(id).filter(t.claimable(lease)))
                .set((bench_jobs::status.eq("running"), t.taken(claim)))
                .returning((bench_jobs::all_columns, no_fence()));
            let won: Option<(JobRow, Option<i64>)> = if COLLECT {
                statement.load(conn)?.pop()
            } else {
                statement.get_result(conn).optional()?
            };
            Ok(won.map(|(row, _)| row))
        }
    };
}

/// PostgreSQL's batch statements.
pub mod pg_batch {
    use super::*;

    pub const NAME: &str = <crate::backend::Pg as crate::backend::Backend>::NAME;
    pub type Conn = PgConnection;
    pub const DDL: &[&str] = &[
        "CREATE TABLE bench_jobs (id BIGINT PRIMARY KEY, status VARCHAR(16) NOT NULL, \
         owner VARCHAR(255), claim_token VARCHAR(255), claimed_at TIMESTAMPTZ)",
        "CREATE INDEX bench_jobs_queue ON bench_jobs (status, id)",
    ];
    pub const EMPTY: &str = "TRUNCATE bench_jobs";
    /// After a fresh queue: statistics, so that every variant's plans see the same table.
    pub const AFTER_FILL: Option<&str> = Some("ANALYZE bench_jobs");
    /// After rows were claimed and freed again: their dead versions gone.
    pub const AFTER_FREE: Option<&str> = Some("VACUUM bench_jobs");
    /// Whether a batch claim locks its candidates in rounds, which the start-up check then also
    /// compares past a first round that came back short.
    pub const LOCKS_IN_ROUNDS: bool = false;
    /// The key column, as key lists name it.
    pub const KEY: &str = r#""bench_jobs"."id""#;
    pub const CLAIM: &str = r#"WITH candidates AS MATERIALIZED (SELECT "bench_jobs"."id" FROM "bench_jobs" WHERE ((("bench_jobs"."claim_token" IS NULL) OR ("bench_jobs"."claimed_at" < (statement_timestamp() - $1 * INTERVAL '1 microsecond'))) AND ("bench_jobs"."status" = $2)) ORDER BY "bench_jobs"."id" LIMIT $3 FOR UPDATE SKIP LOCKED) UPDATE "bench_jobs" SET "status" = $4, "owner" = $5, "claim_token" = $6, "claimed_at" = statement_timestamp() WHERE ("bench_jobs"."id") IN (SELECT * FROM candidates) AND ((("bench_jobs"."claim_token" IS NULL) OR ("bench_jobs"."claimed_at" < (statement_timestamp() - $7 * INTERVAL '1 microsecond'))) AND ("bench_jobs"."status" = $8)) RETURNING "bench_jobs"."id", "bench_jobs"."id", NULL"#;
    pub const RELEASE: &str = r#"UPDATE "bench_jobs" SET "status" = $1, "owner" = NULL, "claim_token" = NULL, "claimed_at" = NULL WHERE ({keys} AND ("bench_jobs"."claim_token" = $2 AND ("bench_jobs"."claim_token")::text COLLATE "C" = $3)) RETURNING "bench_jobs"."id""#;
    /// The release of one key: its matched count says whether the token still held the row.
    pub const RELEASE_ONE: &str = r#"UPDATE "bench_jobs" SET "status" = $1, "owner" = NULL, "claim_token" = NULL, "claimed_at" = NULL WHERE ({keys} AND ("bench_jobs"."claim_token" = $2 AND ("bench_jobs"."claim_token")::text COLLATE "C" = $3))"#;

    fn claim_binds<'a>(n: i64, owner: &'a str, token: &'a str) -> [Bind<'a>; 8] {
        [
            Bind::BigInt(LEASE_MICROS),
            Bind::Text("queued"),
            Bind::BigInt(n),
            Bind::Text("running"),
            Bind::Text(owner),
            Bind::Text(token),
            Bind::BigInt(LEASE_MICROS),
            Bind::Text("queued"),
        ]
    }

    returning_backend!();
}

/// SQLite's batch statements.
pub mod sqlite_batch {
    use super::*;

    pub const NAME: &str = <crate::backend::Sqlite as crate::backend::Backend>::NAME;
    pub type Conn = SqliteConnection;
    pub const DDL: &[&str] = &[
        "CREATE TABLE bench_jobs (id BIGINT PRIMARY KEY NOT NULL, status TEXT NOT NULL, \
         owner TEXT, claim_token TEXT, claimed_at TEXT)",
        "CREATE INDEX bench_jobs_queue ON bench_jobs (status, id)",
    ];
    pub const EMPTY: &str = "DELETE FROM bench_jobs";
    pub const AFTER_FILL: Option<&str> = None;
    pub const AFTER_FREE: Option<&str> = None;
    /// Whether a batch claim locks its candidates in rounds, which the start-up check then also
    /// compares past a first round that came back short.
    pub const LOCKS_IN_ROUNDS: bool = false;
    /// The key column, as key lists name it.
    pub const KEY: &str = "`bench_jobs`.`id`";
    pub const CLAIM: &str = "UPDATE `bench_jobs` SET `status` = ?, `owner` = ?, `claim_token` = ?, `claimed_at` = strftime('%Y-%m-%d %H:%M:%f', 'now') WHERE (`bench_jobs`.`id`) IN (SELECT `bench_jobs`.`id` FROM `bench_jobs` WHERE (((`bench_jobs`.`claim_token` IS NULL) OR (`bench_jobs`.`claimed_at` < strftime('%Y-%m-%d %H:%M:%f', 'now', printf('%+.6f seconds', -(?) / 1000000.0)))) AND (`bench_jobs`.`status` = ?)) ORDER BY `bench_jobs`.`id` LIMIT ?) AND (((`bench_jobs`.`claim_token` IS NULL) OR (`bench_jobs`.`claimed_at` < strftime('%Y-%m-%d %H:%M:%f', 'now', printf('%+.6f seconds', -(?) / 1000000.0)))) AND (`bench_jobs`.`status` = ?)) RETURNING `bench_jobs`.`id`, `bench_jobs`.`id`, NULL";
    pub const RELEASE: &str = "UPDATE `bench_jobs` SET `status` = ?, `owner` = NULL, `claim_token` = NULL, `claimed_at` = NULL WHERE ({keys} AND (`bench_jobs`.`claim_token` = ? AND `bench_jobs`.`claim_token` COLLATE BINARY = ?)) RETURNING `bench_jobs`.`id`";
    /// The release of one key: its matched count says whether the token still held the row.
    pub const RELEASE_ONE: &str = "UPDATE `bench_jobs` SET `status` = ?, `owner` = NULL, `claim_token` = NULL, `claimed_at` = NULL WHERE ({keys} AND (`bench_jobs`.`claim_token` = ? AND `bench_jobs`.`claim_token` COLLATE BINARY = ?))";

    fn claim_binds<'a>(n: i64, owner: &'a str, token: &'a str) -> [Bind<'a>; 8] {
        [
            Bind::Text("running"),
            Bind::Text(owner),
            Bind::Text(token),
            Bind::BigInt(LEASE_MICROS),
            Bind::Text("queued"),
            Bind::BigInt(n),
            Bind::BigInt(LEASE_MICROS),
            Bind::Text("queued"),
        ]
    }

    returning_backend!();
}

/// MySQL/MariaDB's batch statements: candidates read without a lock, then short READ COMMITTED
/// transactions.
pub mod mysql_batch {
    use super::*;

    pub const NAME: &str = <crate::backend::Mysql as crate::backend::Backend>::NAME;
    pub type Conn = MysqlConnection;
    pub const DDL: &[&str] = &[
        "CREATE TABLE bench_jobs (id BIGINT PRIMARY KEY, status VARCHAR(16) NOT NULL, \
         owner VARCHAR(255), claim_token VARCHAR(255), claimed_at DATETIME(6), \
         INDEX bench_jobs_queue (status, id), INDEX bench_jobs_token (claim_token)) ENGINE = InnoDB",
    ];
    pub const EMPTY: &str = "TRUNCATE TABLE bench_jobs";
    pub const AFTER_FILL: Option<&str> = None;
    pub const AFTER_FREE: Option<&str> = None;
    /// Whether a batch claim locks its candidates in rounds, which the start-up check then also
    /// compares past a first round that came back short.
    pub const LOCKS_IN_ROUNDS: bool = true;
    /// The key column, as key lists name it.
    pub const KEY: &str = "`bench_jobs`.`id`";
    pub const READ_COMMITTED: &str = "SET TRANSACTION ISOLATION LEVEL READ COMMITTED";
    /// The candidates of a batch, read before its transaction without a lock.
    pub const CANDIDATES: &str = "SELECT `bench_jobs`.`id` FROM `bench_jobs` WHERE (((`bench_jobs`.`claim_token` IS NULL) OR (`bench_jobs`.`claimed_at` < (UTC_TIMESTAMP(6) - INTERVAL ? MICROSECOND))) AND (`bench_jobs`.`status` = ?)) ORDER BY `bench_jobs`.`id` LIMIT ? OFFSET ?";
    /// A round of the batch's locking: candidates locked through the primary key.
    pub const LOCK_KEYS: &str = "SELECT `bench_jobs`.`id` FROM `bench_jobs` FORCE INDEX (PRIMARY) WHERE {keys} AND (((`bench_jobs`.`claim_token` IS NULL) OR (`bench_jobs`.`claimed_at` < (UTC_TIMESTAMP(6) - INTERVAL ? MICROSECOND))) AND (`bench_jobs`.`status` = ?)) LIMIT ? FOR UPDATE SKIP LOCKED";
    pub const CLAIM_KEYS: &str = "UPDATE `bench_jobs` FORCE INDEX (PRIMARY) SET `status` = ?, `owner` = ?, `claim_token` = ?, `claimed_at` = UTC_TIMESTAMP(6) WHERE ({keys} AND (((`bench_jobs`.`claim_token` IS NULL) OR (`bench_jobs`.`claimed_at` < (UTC_TIMESTAMP(6) - INTERVAL ? MICROSECOND))) AND (`bench_jobs`.`status` = ?)))";
    pub const READ_BACK: &str = "SELECT `bench_jobs`.`id`, `bench_jobs`.`id`, NULL FROM `bench_jobs` WHERE ({keys} AND (`bench_jobs`.`claim_token` = ? AND CAST(CONVERT(`bench_jobs`.`claim_token` USING utf8mb4) AS BINARY) = ?))";
    pub const LOCK_HELD: &str = "SELECT `bench_jobs`.`id` FROM `bench_jobs` FORCE INDEX (PRIMARY) WHERE ({keys} AND (`bench_jobs`.`claim_token` = ? AND CAST(CONVERT(`bench_jobs`.`claim_token` USING utf8mb4) AS BINARY) = ?)) FOR UPDATE";
    pub const RELEASE: &str = "UPDATE `bench_jobs` FORCE INDEX (PRIMARY) SET `status` = ?, `owner` = NULL, `claim_token` = NULL, `claimed_at` = NULL WHERE ({keys} AND (`bench_jobs`.`claim_token` = ? AND CAST(CONVERT(`bench_jobs`.`claim_token` USING utf8mb4) AS BINARY) = ?))";

    hand_statement!(HandCandidates, CANDIDATES);
    keyed_statement!(HandLockKeys, KEY, LOCK_KEYS);
    keyed_statement!(HandClaimKeys, KEY, CLAIM_KEYS);
    keyed_statement!(HandReadBack, KEY, READ_BACK);
    keyed_statement!(HandLockHeld, KEY, LOCK_HELD);
    keyed_statement!(HandRelease, KEY, RELEASE);
    hand_statement!(HandCommit, "COMMIT");

    /// `body` in a short READ COMMITTED transaction, as the library runs its own: begun by
    /// Diesel's transaction manager, committed by a prepared `COMMIT` (one round trip, where
    /// Diesel's plain-text one is three), rolled back as Diesel's `transaction` does.
    fn short_transaction<T>(
        conn: &mut Conn,
        body: impl FnOnce(&mut Conn) -> QueryResult<T>,
    ) -> QueryResult<T> {
        use diesel::connection::{
            AnsiTransactionManager, TransactionDepthChange, TransactionManager,
            TransactionManagerStatus,
        };
        conn.batch_execute(READ_COMMITTED)?;
        AnsiTransactionManager::begin_transaction(conn)?;
        let commit = |conn: &mut Conn| -> QueryResult<()> {
            PreparedSql::<HandCommit, 0>::new([]).execute(conn)?;
            match AnsiTransactionManager::transaction_manager_status_mut(conn) {
                TransactionManagerStatus::Valid(status) => {
                    status.change_transaction_depth(TransactionDepthChange::DecreaseDepth)
                }
                TransactionManagerStatus::InError => {
                    Err(diesel::result::Error::BrokenTransactionManager)
                }
            }
        };
        match body(conn).and_then(|done| commit(conn).map(|()| done)) {
            Ok(done) => Ok(done),
            Err(error) => match AnsiTransactionManager::rollback_transaction(conn) {
                Ok(()) | Err(diesel::result::Error::BrokenTransactionManager) => Err(error),
                Err(rollback_error) => Err(rollback_error),
            },
        }
    }

    /// The further windows of candidates a batch reads at the most, as the library.
    const MOST_FURTHER_WINDOWS: i64 = 16;

    /// How many candidates a batch of `n` reads, as the library: four times its size and 16.
    fn window(n: i64) -> i64 {
        n.saturating_mul(4).saturating_add(16)
    }

    /// The claim of up to `n` queued jobs for `owner` under `token`, as the library makes it: the
    /// first candidates in the queue's order, read without a lock; then, in a READ COMMITTED
    /// transaction, those locked through the primary key in rounds, skipping rows other claims
    /// hold (the first round the first `n`, `LIMIT n`; while short, the next 4 × missing,
    /// `LIMIT` missing); the rows locked claimed by key and read back by key and token. The keys
    /// won.
    pub fn hand_claim(conn: &mut Conn, n: i64, owner: &str, token: &str) -> QueryResult<Vec<i64>> {
        let candidates_from = |offset: i64, conn: &mut Conn| -> QueryResult<Vec<i64>> {
            let candidates: Vec<Id> = read(
                ByText(PreparedSql::<HandCandidates, 4>::new([
                    Bind::BigInt(LEASE_MICROS),
                    Bind::Text("queued"),
                    Bind::BigInt(window(n)),
                    Bind::BigInt(offset),
                ])),
                conn,
            )?;
            Ok(ids(candidates))
        };
        let wanted = usize::try_from(n).unwrap_or(usize::MAX);
        // Locks, of `candidates`, rows until `taken` has `wanted`: the first round of the first
        // window asks for exactly the rows missing, later rounds look at four times as many.
        let lock_some =
            |candidates: &[i64], first_window: bool, taken: &mut Vec<i64>, conn: &mut Conn| {
                let mut rest = candidates;
                while taken.len() < wanted && !rest.is_empty() {
                    let missing = wanted - taken.len();
                    let look = if first_window && taken.is_empty() && rest.len() == candidates.len()
                    {
                        missing
                    } else {
                        missing.saturating_mul(4)
                    };
                    let (round, later) = rest.split_at(look.min(rest.len()));
                    rest = later;
                    let locked: Vec<Id> = read(
                        KeyedSql::<HandLockKeys, 0, 3>::new(
                            [],
                            round,
                            [
                                Bind::BigInt(LEASE_MICROS),
                                Bind::Text("queued"),
                                Bind::BigInt(i64::try_from(missing).unwrap_or(i64::MAX)),
                            ],
                        ),
                        conn,
                    )?;
                    taken.extend(ids(locked));
                }
                QueryResult::Ok(())
            };
        let claimed = (|| {
            let candidates = candidates_from(0, conn)?;
            if candidates.is_empty() {
                return Ok(Vec::new());
            }
            short_transaction(conn, |conn| {
                let mut taken: Vec<i64> = Vec::with_capacity(wanted);
                lock_some(&candidates, true, &mut taken, conn)?;
                // Every candidate held by other claims: the next windows, as the library reads
                // them, up to 16.
                let mut last_read = candidates.len();
                for further in 1..=MOST_FURTHER_WINDOWS {
                    if taken.len() >= wanted || i64::try_from(last_read) != Ok(window(n)) {
                        break;
                    }
                    let more = candidates_from(window(n).saturating_mul(further), conn)?;
                    lock_some(&more, false, &mut taken, conn)?;
                    last_read = more.len();
                }
                if taken.is_empty() {
                    return Ok(Vec::new());
                }
                KeyedSql::<HandClaimKeys, 3, 2>::new(
                    [Bind::Text("running"), Bind::Text(owner), Bind::Text(token)],
                    &taken,
                    [Bind::BigInt(LEASE_MICROS), Bind::Text("queued")],
                )
                .execute(conn)?;
                read(
                    KeyedSql::<HandReadBack, 0, 2>::new(
                        [],
                        &taken,
                        [Bind::Text(token), Bind::Text(token)],
                    ),
                    conn,
                )
            })
        })();
        lost_conflict_claims_nothing(claimed)
    }

    /// The release of `keys` that `token` holds, setting `status`: the keys released. One key:
    /// the `UPDATE` alone, whose matched count says whether the token still held the row.
    /// Several: lock the rows the token still holds, then update them.
    pub fn hand_release(
        conn: &mut Conn,
        keys: &[i64],
        token: &str,
        status: &str,
    ) -> QueryResult<Vec<i64>> {
        let release = KeyedSql::<HandRelease, 1, 2>::new(
            [Bind::Text(status)],
            keys,
            [Bind::Text(token), Bind::Text(token)],
        );
        if let [key] = keys {
            let matched = release.execute(conn)?;
            return Ok(if matched > 0 { vec![*key] } else { Vec::new() });
        }
        short_transaction(conn, |conn| {
            let held: Vec<Id> = read(
                KeyedSql::<HandLockHeld, 0, 2>::new(
                    [],
                    keys,
                    [Bind::Text(token), Bind::Text(token)],
                ),
                conn,
            )?;
            let held = ids(held);
            if !held.is_empty() {
                release.execute(conn)?;
            }
            Ok(held)
        })
    }

    /// The claim of one row composed from the library's changesets; MySQL has no `RETURNING`,
    /// so the row is read back by its key and the claim's token: with `get_result`, or
    /// (`COLLECT`) with `load`, as the library does.
    pub fn bare_claim_row<const COLLECT: bool>(
        conn: &mut Conn,
        id: i64,
        lease: Lease,
        claim: &Claim,
    ) -> QueryResult<Option<JobRow>> {
        let t = bench_jobs::table;
        let claimed = diesel_lease::update(t.find(id).filter(t.claimable(lease)))
            .set((bench_jobs::status.eq("running"), t.taken(claim)))
            .execute(conn)?;
        if claimed == 0 {
            return Ok(None);
        }
        let read_back = t
            .find(id)
            .filter(t.held_by(claim.token()))
            .select((bench_jobs::all_columns, no_fence()));
        let won: Option<(JobRow, Option<i64>)> = if COLLECT {
            read(read_back, conn)?.pop()
        } else {
            read_one(read_back, conn).optional()?
        };
        Ok(won.map(|(row, _)| row))
    }
}

// ---- The measurement, instantiated for each backend ----

/// How a worker claims its jobs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Way {
    /// `claim_batch`, then the batch's release.
    Library = 0,
    /// The same SQL by hand, prepared once.
    Hand = 1,
    /// `SELECT id .. LIMIT n`, then one conditional `UPDATE` per id with the lease changesets;
    /// the jobs won are finished by the hand-written release.
    Naive = 2,
}

/// What workers did: jobs finished, claims that found their job taken, claims that came back
/// empty while jobs were still queued (their rows locked by other workers' claims).
#[derive(Debug, Clone, Copy, Default)]
pub struct Tally {
    pub finished: u64,
    pub lost: u64,
    pub empty: u64,
}

impl std::ops::AddAssign for Tally {
    fn add_assign(&mut self, other: Self) {
        self.finished += other.finished;
        self.lost += other.lost;
        self.empty += other.empty;
    }
}

/// Runs `claim` on rows 1, 2, .. (up to `rows`) for `slice` at most: the mean time of one claim
/// in microseconds, and the last row claimed. Row 1 is claimed first, untimed.
fn micros_per_claim(
    slice: Duration,
    rows: i64,
    mut claim: impl FnMut(i64) -> Res<()>,
) -> Res<(f64, i64)> {
    claim(1)?;
    let start = Instant::now();
    let mut id = 1;
    while id < rows && start.elapsed() < slice {
        id += 1;
        claim(id)?;
    }
    check(id > 1, "no row left to claim")?;
    Ok((start.elapsed().as_secs_f64() * 1e6 / (id - 1) as f64, id))
}

macro_rules! batch_suite {
    ($module:ident, $sql:ident, $suite:ident) => {
        pub mod $module {
            use super::*;
            use super::$sql as sql;
            type B = crate::backend::$suite;
            type Conn = <B as crate::backend::Backend>::Conn;
            type ConnPool = crate::backend::ConnPool<B>;
            use crate::backend::{connect, pool};

            fn same_statements(what: &str, library: Vec<String>, hand: Vec<String>) -> Res<()> {
                crate::suite::same_statements(sql::NAME, what, library, hand)
            }

            pub fn setup(conn: &mut Conn) -> Res<()> {
                diesel::sql_query("DROP TABLE IF EXISTS bench_jobs").execute(conn)?;
                for ddl in sql::DDL {
                    diesel::sql_query(*ddl).execute(conn)?;
                }
                Ok(())
            }

            pub fn teardown(conn: &mut Conn) -> Res<()> {
                diesel::sql_query("DROP TABLE IF EXISTS bench_jobs").execute(conn)?;
                Ok(())
            }

            /// A fresh queue: jobs 1..=`jobs`, all queued.
            pub fn fill(conn: &mut Conn, jobs: usize) -> Res<()> {
                diesel::sql_query(sql::EMPTY).execute(conn)?;
                let mut first = 1;
                while first <= jobs {
                    let last = (first + 999).min(jobs);
                    let values: Vec<String> = (first..=last).map(|id| format!("({id}, 'queued')")).collect();
                    diesel::sql_query(format!("INSERT INTO bench_jobs (id, status) VALUES {}", values.join(", ")))
                        .execute(conn)?;
                    first = last + 1;
                }
                if let Some(after) = sql::AFTER_FILL {
                    diesel::sql_query(after).execute(conn)?;
                }
                Ok(())
            }

            /// Jobs 1..=`last` queued and unclaimed again.
            fn free(conn: &mut Conn, last: i64) -> Res<()> {
                diesel::sql_query(format!(
                    "UPDATE bench_jobs SET status = 'queued', owner = NULL, claim_token = NULL, claimed_at = NULL WHERE id <= {last}"
                ))
                .execute(conn)?;
                if let Some(after) = sql::AFTER_FREE {
                    diesel::sql_query(after).execute(conn)?;
                }
                Ok(())
            }

            fn count(conn: &mut Conn, status: &str) -> QueryResult<i64> {
                read_one(bench_jobs::table.filter(bench_jobs::status.eq(status)).count(), conn)
            }

            fn lease() -> Res<Lease> {
                Ok(Lease::new(Duration::from_micros(LEASE_MICROS as u64))?)
            }

            // ---- The three ways to claim and finish a batch ----

            pub fn lib_claim(conn: &mut Conn, n: usize, lease: Lease) -> Res<Batch<i64, bench_jobs::table>> {
                Ok(bench_jobs::table
                    .claim_batch(n, lease)
                    .by(&Claim::new(OWNER)?)
                    .filter(bench_jobs::status.eq("queued"))
                    .order_by(bench_jobs::id)
                    .set(bench_jobs::status.eq("running"))
                    .returning(bench_jobs::id)
                    .run::<i64>(conn)?)
            }

            pub fn lib_release(conn: &mut Conn, batch: &Batch<i64, bench_jobs::table>) -> Res<Vec<i64>> {
                Ok(batch.release().set(bench_jobs::status.eq("done")).run(conn)?)
            }

            /// Select the candidates, then claim each by id, as naive callers do.
            fn naive_claim(conn: &mut Conn, n: usize, lease: Lease, claim: &Claim) -> Res<Option<(Vec<i64>, u64)>> {
                let t = bench_jobs::table;
                let candidates: Vec<i64> = read(
                    t.select(bench_jobs::id)
                        .filter(bench_jobs::status.eq("queued"))
                        .filter(t.claimable(lease))
                        .order(bench_jobs::id)
                        .limit(n as i64),
                    conn,
                )?;
                if candidates.is_empty() {
                    return Ok(None);
                }
                let mut won = Vec::with_capacity(candidates.len());
                let mut lost = 0;
                for id in candidates {
                    let claimed = diesel_lease::update(
                        t.find(id).filter(t.claimable(lease)).filter(bench_jobs::status.eq("queued")),
                    )
                    .set((bench_jobs::status.eq("running"), t.taken(claim)))
                    .execute(conn);
                    match claimed {
                        Ok(1) => won.push(id),
                        Ok(_) | Err(DieselError::DatabaseError(DatabaseErrorKind::SerializationFailure, _)) => lost += 1,
                        Err(error) => return Err(error.into()),
                    }
                }
                Ok(Some((won, lost)))
            }

            /// One worker's step: claim a batch and finish it. `None` when the claim came back empty.
            fn step(way: Way, conn: &mut Conn, n: usize, lease: Lease) -> Res<Option<Tally>> {
                let (claimed, finished, lost) = match way {
                    Way::Library => {
                        let batch = lib_claim(conn, n, lease)?;
                        if batch.is_empty() {
                            return Ok(None);
                        }
                        (batch.len(), lib_release(conn, &batch)?.len(), 0)
                    }
                    Way::Hand => {
                        let token = new_token();
                        let keys = sql::hand_claim(conn, n as i64, OWNER, &token)?;
                        if keys.is_empty() {
                            return Ok(None);
                        }
                        (keys.len(), sql::hand_release(conn, &keys, &token, "done")?.len(), 0)
                    }
                    Way::Naive => {
                        let claim = Claim::new(OWNER)?;
                        let Some((won, lost)) = naive_claim(conn, n, lease, &claim)? else {
                            return Ok(None);
                        };
                        let finished = if won.is_empty() {
                            0
                        } else {
                            sql::hand_release(conn, &won, claim.token(), "done")?.len()
                        };
                        (won.len(), finished, lost)
                    }
                };
                // A job claimed and then not finished was lost too (taken over meanwhile).
                Ok(Some(Tally {
                    finished: finished as u64,
                    lost: lost + (claimed - finished) as u64,
                    empty: 0,
                }))
            }

            /// One sample: `threads` workers, each on its own pooled connection, claim and finish
            /// jobs `way` until no job is left queued or `slice` has passed. Jobs finished per
            /// second, and what the workers did.
            pub fn drain(pool: &ConnPool, threads: usize, slice: Duration, n: usize, lease: Lease, way: Way) -> Res<(f64, Tally)> {
                let barrier = Barrier::new(threads);
                let outcomes: Vec<Res<(Tally, f64)>> = std::thread::scope(|scope| {
                    let handles: Vec<_> = (0..threads)
                        .map(|_| {
                            let barrier = &barrier;
                            scope.spawn(move || -> Res<(Tally, f64)> {
                                let conn = pool.get();
                                barrier.wait();
                                let mut conn = conn?;
                                let mut tally = Tally::default();
                                let start = Instant::now();
                                while start.elapsed() < slice {
                                    match step(way, &mut conn, n, lease)? {
                                        Some(done) => tally += done,
                                        None if count(&mut conn, "queued")? == 0 => break,
                                        None => tally.empty += 1,
                                    }
                                }
                                Ok((tally, start.elapsed().as_secs_f64()))
                            })
                        })
                        .collect();
                    handles
                        .into_iter()
                        .map(|handle| handle.join().unwrap_or_else(|_| Err("a worker panicked".into())))
                        .collect()
                });
                let mut tally = Tally::default();
                let mut seconds = 0f64;
                for outcome in outcomes {
                    let (t, s) = outcome?;
                    tally += t;
                    seconds = seconds.max(s);
                }
                Ok((tally.finished as f64 / seconds, tally))
            }

            // ---- Checks that the hand-written SQL is the library's ----

            /// `f` while another session, `other`, holds job 1 locked in a transaction.
            fn with_job_1_locked<T>(other: &mut Conn, f: impl FnOnce() -> Res<T>) -> Res<T> {
                other.transaction(|o| {
                    diesel::sql_query("SELECT id FROM bench_jobs WHERE id = 1 FOR UPDATE").load::<Id>(o)?;
                    f()
                })
            }

            pub fn verify(url: &str, conn: &mut Conn) -> Res<()> {
                let lease = lease()?;
                // Two jobs (key lists) and one (a key's equality), of three queued.
                for n in [2, 1] {
                    fill(conn, 3)?;
                    let mut token = String::new();
                    let library = StatementLog::texts_of(conn, |c| {
                        let batch = lib_claim(c, n, lease)?;
                        check(batch.len() == n, "the library's batch did not claim all it asked for")?;
                        token = batch.claim().token().to_owned();
                        check(lib_release(c, &batch)?.len() == n, "the library's release did not finish its batch")
                    })?;
                    fill(conn, 3)?;
                    let hand = StatementLog::texts_of(conn, |c| {
                        let keys = sql::hand_claim(c, n as i64, OWNER, &token)?;
                        check(keys.len() == n, "the hand-written batch did not claim all it asked for")?;
                        check(sql::hand_release(c, &keys, &token, "done")?.len() == n, "the hand-written release did not finish its batch")
                    })?;
                    same_statements(&format!("batch claim and release of {n} job(s)"), library, hand)?;
                }
                if sql::LOCKS_IN_ROUNDS {
                    // Job 1 locked by another session: the first round (jobs 1 and 2) comes back
                    // with job 2 alone, and a second round locks job 3, a list of one key.
                    let other = &mut connect::<B>(url)?;
                    fill(conn, 3)?;
                    let mut token = String::new();
                    let library = with_job_1_locked(other, || {
                        StatementLog::texts_of(conn, |c| {
                            let batch = lib_claim(c, 2, lease)?;
                            check(batch.keys() == [2, 3], "the library's batch did not claim jobs 2 and 3 past job 1, locked")?;
                            token = batch.claim().token().to_owned();
                            check(lib_release(c, &batch)?.len() == 2, "the library's release did not finish its batch")
                        })
                    })?;
                    fill(conn, 3)?;
                    let hand = with_job_1_locked(other, || {
                        StatementLog::texts_of(conn, |c| {
                            let keys = sql::hand_claim(c, 2, OWNER, &token)?;
                            check(keys == [2, 3], "the hand-written batch did not claim jobs 2 and 3 past job 1, locked")?;
                            check(sql::hand_release(c, &keys, &token, "done")?.len() == 2, "the hand-written release did not finish its batch")
                        })
                    })?;
                    same_statements("batch claim and release past a locked job (two rounds)", library, hand)?;
                }

                fill(conn, 3)?;
                let claim = Claim::with_token(OWNER, "bench-verify-token")?;
                let library = StatementLog::texts_of(conn, |c| {
                    let won = bench_jobs::table
                        .claim_row(1_i64, lease)
                        .by(&claim)
                        .set(bench_jobs::status.eq("running"))
                        .run::<JobRow>(c)?;
                    check(won.is_won(), "the library's claim_row lost")
                })?;
                free(conn, 1)?;
                let bare = StatementLog::texts_of(conn, |c| {
                    check(sql::bare_claim_row::<false>(c, 1, lease, &claim)?.is_some(), "the bare changesets' claim lost")
                })?;
                same_statements("claim of one row", library, bare)?;
                println!("  the hand-written batch statements are the library's, binds included");
                Ok(())
            }

            // ---- 8: batch claim-and-finish throughput ----

            pub fn batches(url: &str, conn: &mut Conn, plan: &Plan, results: &mut Results) -> Res<()> {
                let lease = lease()?;
                let tallies = RefCell::new([Tally::default(); 3]);
                let conn = RefCell::new(conn);
                let slice = plan.batch_slice;
                let (fewest, most) = plan.batch_jobs;
                for threads in THREADS {
                    let pool = pool::<B>(url, threads as u32, false)?;
                    for n in BATCHES {
                        // A fresh queue of `jobs`, drained `way` for `slice` at most; every job
                        // finished was finished once, and none is left claimed.
                        let sample = |way: Way, jobs: usize, slice: Duration| -> Res<(f64, Tally)> {
                            fill(&mut conn.borrow_mut(), jobs)?;
                            let (rate, tally) = drain(&pool, threads, slice, n, lease, way)?;
                            let c = &mut **conn.borrow_mut();
                            check(count(c, "done")? as u64 == tally.finished, "the jobs done are not the jobs the workers finished")?;
                            check(count(c, "running")? == 0, "a claimed job was left unfinished")?;
                            Ok((rate, tally))
                        };
                        // Untimed: each way once on a small queue, so that every connection has
                        // prepared what it caches; the library's rate sizes the cell's queue, for
                        // it and the same SQL by hand to drain it in about one slice.
                        let (rate, _) = sample(Way::Library, fewest, slice / 3)?;
                        sample(Way::Hand, fewest, slice / 3)?;
                        sample(Way::Naive, fewest, slice / 3)?;
                        let jobs = ((rate * slice.as_secs_f64() * QUEUE_SLACK) as usize).clamp(fewest, most);
                        println!("  {threads} thread(s), batch {n}: a queue of {jobs} jobs");
                        let timed = |way: Way| -> Res<f64> {
                            let (rate, tally) = sample(way, jobs, slice)?;
                            tallies.borrow_mut()[way as usize] += tally;
                            Ok(rate)
                        };
                        let mut variants = [
                            Variant::new(LIBRARY, || timed(Way::Library)),
                            Variant::new(HAND, || timed(Way::Hand)),
                            Variant::new(NAIVE, || timed(Way::Naive)),
                        ];
                        let samples = interleave(plan.batch_rounds, &mut variants)?;
                        let largest = BATCHES[BATCHES.len() - 1];
                        for (k, baseline_name, goal) in [
                            (Way::Hand as usize, HAND, Some(Goal::RatioAtLeast(LIKE_FOR_LIKE))),
                            (Way::Naive as usize, NAIVE, (n == largest).then_some(Goal::RatioAtLeast(OVER_NAIVE))),
                        ] {
                            let (ratio, min, max) = paired_ratio(&samples[0], &samples[k]);
                            results.push(Row {
                                section: SECTION,
                                backend: sql::NAME,
                                figure: cell_figure(threads, n),
                                baseline_name: baseline_name.into(),
                                baseline: median(&samples[k]),
                                library_name: LIBRARY.into(),
                                library: median(&samples[0]),
                                unit: "jobs/s",
                                ratio,
                                range: Some((min, max)),
                                better: Better::Higher,
                                goal,
                            });
                        }
                    }
                }
                let [library, hand, naive] = tallies.into_inner();
                results.push(Row {
                    section: SECTION,
                    backend: sql::NAME,
                    figure: LOST_FIGURE.into(),
                    baseline_name: NAIVE.into(),
                    baseline: naive.lost as f64,
                    library_name: LIBRARY.into(),
                    library: library.lost as f64,
                    unit: "",
                    ratio: library.lost as f64 / naive.lost as f64,
                    range: None,
                    better: Better::Lower,
                    goal: Some(Goal::LibraryAtMost(0.0)),
                });
                results.note(format!(
                    "{}: batch claims: jobs finished over all rounds: library {}, {HAND} {}, {NAIVE} {}; lost races of {HAND}: {}; \
                     claims that came back empty while jobs were still queued (their rows locked by other workers' claims): library {}, {HAND} {}, {NAIVE} {}",
                    sql::NAME,
                    number(library.finished as f64, ""),
                    number(hand.finished as f64, ""),
                    number(naive.finished as f64, ""),
                    hand.lost,
                    library.empty,
                    hand.empty,
                    naive.empty,
                ));
                Ok(())
            }

            // ---- 8: the claim of one row ----

            pub fn claim_one_row(conn: &mut Conn, plan: &Plan, results: &mut Results) -> Res<()> {
                let lease = lease()?;
                let rows = plan.claim_rows as i64;
                fill(conn, plan.claim_rows)?;
                let conn = RefCell::new(conn);
                let slice = plan.slice;
                let bare = |collect: bool| -> Res<f64> {
                    let c = &mut **conn.borrow_mut();
                    let (micros, last) = micros_per_claim(slice, rows, |id| {
                        let claim = Claim::new(OWNER)?;
                        let won = if collect {
                            sql::bare_claim_row::<true>(c, id, lease, &claim)?
                        } else {
                            sql::bare_claim_row::<false>(c, id, lease, &claim)?
                        };
                        check(won.is_some(), "the bare changesets' claim lost")
                    })?;
                    free(c, last)?;
                    Ok(micros)
                };
                let mut variants = [
                    Variant::new(BARE, || bare(false)),
                    Variant::new("claim_row", || {
                        let c = &mut **conn.borrow_mut();
                        let (micros, last) = micros_per_claim(slice, rows, |id| {
                            let won = bench_jobs::table
                                .claim_row(id, lease)
                                .by(&Claim::new(OWNER)?)
                                .set(bench_jobs::status.eq("running"))
                                .run::<JobRow>(c)?;
                            check(won.is_won(), "the library's claim_row lost")
                        })?;
                        free(c, last)?;
                        Ok(micros)
                    }),
                    Variant::new(BARE_COLLECTED, || bare(true)),
                ];
                let samples = interleave(plan.rounds, &mut variants)?;
                for (k, baseline_name, goal) in [(0, BARE, Some(Goal::RatioAtMost(CLAIM_ROW))), (2, BARE_COLLECTED, None)] {
                    let (ratio, min, max) = paired_ratio(&samples[1], &samples[k]);
                    results.push(Row {
                        section: SECTION,
                        backend: sql::NAME,
                        figure: CLAIM_ROW_FIGURE.into(),
                        baseline_name: baseline_name.into(),
                        baseline: median(&samples[k]),
                        library_name: "claim_row".into(),
                        library: median(&samples[1]),
                        unit: "µs/claim",
                        ratio,
                        range: Some((min, max)),
                        better: Better::Lower,
                        goal,
                    });
                }
                Ok(())
            }

            pub fn run(url: &str, options: &Options, results: &mut Results) -> Res<()> {
                println!("-- {SECTION}. batch claims ({})", sql::NAME);
                let mut conn = connect::<B>(url)?;
                setup(&mut conn)?;
                let outcome = (|| -> Res<()> {
                    verify(url, &mut conn)?;
                    batches(url, &mut conn, &options.plan, results)?;
                    claim_one_row(&mut conn, &options.plan, results)
                })();
                let cleaned = teardown(&mut conn);
                outcome.and(cleaned)
            }
        }
    };
}

batch_suite!(pg, pg_batch, Pg);
batch_suite!(mysql, mysql_batch, Mysql);
batch_suite!(sqlite, sqlite_batch, Sqlite);

// ---- The headline of the section in docs/benchmarks.md ----

fn ratio_text(ratio: f64) -> String {
    if ratio.is_finite() {
        format!("{ratio:.2}x")
    } else {
        "—".into()
    }
}

fn met_text(met: bool) -> &'static str {
    if met {
        "yes"
    } else {
        "**no**"
    }
}

/// The section's headline, above its table of every figure: each goal per backend with its
/// worst cell, then the library's rate per thread count and batch size against both baselines.
pub fn markdown(rows: &[&Row]) -> String {
    let mut md = String::new();
    let mut backends: Vec<&'static str> = Vec::new();
    for row in rows {
        if !backends.contains(&row.backend) {
            backends.push(row.backend);
        }
    }
    let find = |backend: &str, figure: &str, baseline: &str| {
        rows.iter()
            .find(|row| {
                row.backend == backend && row.figure == figure && row.baseline_name == baseline
            })
            .copied()
    };
    md.push_str(
        "| Goal | Backend | Cells meeting it | Worst cell | Met |\n|---|---|---:|---|---|\n",
    );
    for backend in &backends {
        for (goal, baseline, batches) in [
            (
                format!("jobs/s ≥ {LIKE_FOR_LIKE:.2}x the {HAND} (like for like: the headline)"),
                HAND,
                &BATCHES[..],
            ),
            (
                format!(
                    "jobs/s ≥ {OVER_NAIVE:.0}x {NAIVE}, at batch {}",
                    BATCHES[BATCHES.len() - 1]
                ),
                NAIVE,
                &BATCHES[BATCHES.len() - 1..],
            ),
        ] {
            let cells: Vec<(usize, usize, &Row)> = THREADS
                .iter()
                .flat_map(|&threads| batches.iter().map(move |&n| (threads, n)))
                .filter_map(|(threads, n)| {
                    find(backend, &cell_figure(threads, n), baseline).map(|row| (threads, n, row))
                })
                .collect();
            let Some((threads, n, worst)) = cells
                .iter()
                .copied()
                .min_by(|a, b| a.2.ratio.total_cmp(&b.2.ratio))
            else {
                continue;
            };
            let met = cells
                .iter()
                .filter(|(_, _, row)| row.met() == Some(true))
                .count();
            let _ = writeln!(
                md,
                "| {goal} | {backend} | {met} of {} | {} ({threads} thread(s), batch {n}) | {} |",
                cells.len(),
                ratio_text(worst.ratio),
                met_text(met == cells.len())
            );
        }
        if let Some(row) = find(backend, LOST_FIGURE, NAIVE) {
            let _ = writeln!(
                md,
                "| no lost race for the library | {backend} | — | library {}, {NAIVE} {} | {} |",
                number(row.library, ""),
                number(row.baseline, ""),
                met_text(row.met() == Some(true))
            );
        }
        if let Some(row) = find(backend, CLAIM_ROW_FIGURE, BARE) {
            let collected = find(backend, CLAIM_ROW_FIGURE, BARE_COLLECTED)
                .map_or(String::new(), |other| {
                    format!("; {} the same read with load", ratio_text(other.ratio))
                });
            let _ = writeln!(
                md,
                "| `claim_row` ≤ {CLAIM_ROW:.2}x the time of the {BARE} | {backend} | — | {} ({} against {}{collected}) | {} |",
                ratio_text(row.ratio),
                number(row.library, row.unit),
                number(row.baseline, row.unit),
                met_text(row.met() == Some(true))
            );
        }
    }
    let _ = writeln!(
        md,
        "\nThe library's jobs per second (claim a batch, finish it in one release), and its ratio to the {HAND} · to {NAIVE}:\n"
    );
    md.push_str("| Backend | Threads |");
    for n in BATCHES {
        let _ = write!(md, " batch {n} |");
    }
    md.push_str("\n|---|---:|");
    for _ in BATCHES {
        md.push_str("---:|");
    }
    md.push('\n');
    for backend in &backends {
        for threads in THREADS {
            let mut line = format!("| {backend} | {threads} |");
            let mut any = false;
            for n in BATCHES {
                let figure = cell_figure(threads, n);
                match (find(backend, &figure, HAND), find(backend, &figure, NAIVE)) {
                    (Some(hand), Some(naive)) => {
                        any = true;
                        let _ = write!(
                            line,
                            " {} ({} · {}) |",
                            number(hand.library, ""),
                            ratio_text(hand.ratio),
                            ratio_text(naive.ratio)
                        );
                    }
                    _ => line.push_str(" — |"),
                }
            }
            if any {
                md.push_str(&line);
                md.push('\n');
            }
        }
    }
    md.push_str("\nEvery figure:\n\n");
    md
}
