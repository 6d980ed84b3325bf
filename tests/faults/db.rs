//! The suite's tables, the triggers that log every claim and takeover by the database's own
//! clock, and what a scenario asks of a connection, written once for the three backends: the
//! trait here, its implementation in db_conn.rs.
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use diesel::prelude::*;
use diesel::r2d2::{ConnectionManager, R2D2Connection};
use diesel_lease::prelude::*;
use diesel_lease::Node;
use diesel_lease_agent::AgentConnection;

diesel::table! {
    use diesel::sql_types::*;
    use diesel_lease::sql_types::UtcTimestamp;

    /// The queue: a token-guarded finish sets `done` and counts itself in `done_count`.
    fault_jobs (id) {
        id -> BigInt,
        status -> Text,
        done_count -> BigInt,
        worker -> Nullable<Text>,
        lease_token -> Nullable<Text>,
        leased_at -> Nullable<UtcTimestamp>,
        fence -> BigInt,
    }
}

diesel_lease::claim_lease!(fault_jobs {
    owner: worker,
    claim_token: lease_token,
    claimed_at: leased_at,
    fence: fence,
});

diesel::table! {
    use diesel::sql_types::*;

    /// A token replaced by another on a leased row, with the age of the replaced claim (by the
    /// triggers' record of when it was taken, not by the library's `claimed_at`).
    fault_takeovers (id) {
        id -> BigInt,
        tbl -> Text,
        row_id -> Text,
        age_us -> Nullable<BigInt>,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use diesel_lease::sql_types::UtcTimestamp;

    /// Every claim (a token set, or its lease restarted), when the database says it happened.
    fault_claims (id) {
        id -> BigInt,
        tbl -> Text,
        row_id -> Text,
        token -> Text,
        at -> UtcTimestamp,
    }
}

/// The backend a connection type talks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Postgres,
    Mysql,
    Sqlite,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Postgres => "PostgreSQL",
            Kind::Mysql => "MariaDB",
            Kind::Sqlite => "SQLite",
        }
    }

    /// As a worker is told which backend it runs on.
    pub fn arg(self) -> &'static str {
        match self {
            Kind::Postgres => "postgres",
            Kind::Mysql => "mysql",
            Kind::Sqlite => "sqlite",
        }
    }

    pub fn parse(arg: &str) -> Option<Kind> {
        [Kind::Postgres, Kind::Mysql, Kind::Sqlite]
            .into_iter()
            .find(|kind| kind.arg() == arg)
    }

    /// The clock the library reads on this backend, fixed for one statement on all three.
    pub fn now(self) -> &'static str {
        match self {
            Kind::Postgres => "statement_timestamp()",
            Kind::Mysql => "UTC_TIMESTAMP(6)",
            Kind::Sqlite => "strftime('%Y-%m-%d %H:%M:%f', 'now')",
        }
    }

    /// Microseconds from `since` to the clock, as a BIGINT.
    pub fn micros_since(self, since: &str) -> String {
        match self {
            Kind::Postgres => format!(
                "CAST(EXTRACT(EPOCH FROM (statement_timestamp() - {since})) * 1000000 AS BIGINT)"
            ),
            Kind::Mysql => format!("TIMESTAMPDIFF(MICROSECOND, {since}, UTC_TIMESTAMP(6))"),
            // SQLite's clock has milliseconds; Julian days are doubles, hence the rounding.
            Kind::Sqlite => format!(
                "CAST(ROUND((julianday('now') - julianday({since})) * 86400000) AS INTEGER) * 1000"
            ),
        }
    }

    /// Microseconds from the Unix epoch to `at` (a UTC timestamp of the backend's), as a BIGINT.
    pub fn epoch_micros(self, at: &str) -> String {
        match self {
            Kind::Postgres => format!("CAST(EXTRACT(EPOCH FROM {at}) * 1000000 AS BIGINT)"),
            Kind::Mysql => format!("TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', {at})"),
            Kind::Sqlite => {
                format!("CAST(ROUND((julianday({at}) - 2440587.5) * 86400000) AS INTEGER) * 1000")
            }
        }
    }

    fn text(self, value: &str) -> String {
        match self {
            Kind::Mysql => format!("CAST({value} AS CHAR)"),
            Kind::Postgres | Kind::Sqlite => format!("CAST({value} AS TEXT)"),
        }
    }

    /// The suite's own tables, made anew, with the claims of `fault_jobs` logged.
    pub fn schema(self) -> Vec<String> {
        let (serial, timestamp, token, jobs_extra) = match self {
            Kind::Postgres => ("BIGSERIAL PRIMARY KEY", "TIMESTAMPTZ", "VARCHAR(255)", ""),
            Kind::Mysql => (
                "BIGINT AUTO_INCREMENT PRIMARY KEY",
                "DATETIME(6)",
                "VARCHAR(255) COLLATE utf8mb4_bin",
                ", INDEX fault_jobs_token (lease_token)",
            ),
            Kind::Sqlite => ("INTEGER PRIMARY KEY", "TEXT", "TEXT", ""),
        };
        let mut sql = vec![
            "DROP TABLE IF EXISTS fault_jobs".to_owned(),
            "DROP TABLE IF EXISTS fault_takeovers".to_owned(),
            "DROP TABLE IF EXISTS fault_claims".to_owned(),
            format!(
                "CREATE TABLE fault_jobs (id BIGINT PRIMARY KEY, status VARCHAR(16) NOT NULL, \
                 done_count BIGINT NOT NULL DEFAULT 0, worker VARCHAR(255), lease_token {token}, \
                 leased_at {timestamp}, fence BIGINT NOT NULL DEFAULT 0{jobs_extra})"
            ),
            format!(
                "CREATE TABLE fault_takeovers (id {serial}, tbl VARCHAR(64) NOT NULL, \
                 row_id VARCHAR(255) NOT NULL, age_us BIGINT)"
            ),
            format!(
                "CREATE TABLE fault_claims (id {serial}, tbl VARCHAR(64) NOT NULL, \
                 row_id VARCHAR(255) NOT NULL, token {token} NOT NULL, at {timestamp} NOT NULL)"
            ),
            "CREATE INDEX fault_claims_row ON fault_claims (tbl, row_id, token)".to_owned(),
        ];
        sql.extend(self.log_claims("fault_jobs", "id", "lease_token", "leased_at"));
        sql
    }

    /// Triggers on `table` that log each claim into `fault_claims` and each takeover (a token
    /// replaced by another) into `fault_takeovers` with the replaced claim's age: the clock is
    /// the statement's own, the one the claim itself compared with.
    pub fn log_claims(self, table: &str, key: &str, token: &str, at: &str) -> Vec<String> {
        let now = self.now();
        let (old_key, new_key) = (
            self.text(&format!("OLD.{key}")),
            self.text(&format!("NEW.{key}")),
        );
        let age = self.micros_since("max(at)");
        let takeover = format!(
            "INSERT INTO fault_takeovers (tbl, row_id, age_us) SELECT '{table}', {old_key}, {age} \
             FROM fault_claims WHERE tbl = '{table}' AND row_id = {old_key} AND token = OLD.{token}"
        );
        let claim = format!(
            "INSERT INTO fault_claims (tbl, row_id, token, at) VALUES ('{table}', {new_key}, NEW.{token}, {now})"
        );
        let name = format!("fault_log_{table}");
        match self {
            Kind::Postgres => vec![
                format!("DROP TRIGGER IF EXISTS {name} ON {table}"),
                format!(
                    "CREATE OR REPLACE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN \
                     IF NEW.{token} IS NOT NULL AND (OLD.{token} IS DISTINCT FROM NEW.{token} \
                         OR OLD.{at} IS DISTINCT FROM NEW.{at}) THEN \
                       IF OLD.{token} IS NOT NULL AND OLD.{token} <> NEW.{token} THEN {takeover}; END IF; \
                       {claim}; \
                     END IF; RETURN NEW; END $$"
                ),
                format!("CREATE TRIGGER {name} BEFORE UPDATE ON {table} FOR EACH ROW EXECUTE FUNCTION {name}()"),
            ],
            Kind::Mysql => vec![
                format!("DROP TRIGGER IF EXISTS {name}"),
                format!(
                    "CREATE TRIGGER {name} BEFORE UPDATE ON {table} FOR EACH ROW BEGIN \
                     IF NEW.{token} IS NOT NULL AND (NOT (OLD.{token} <=> NEW.{token}) \
                         OR NOT (OLD.{at} <=> NEW.{at})) THEN \
                       IF OLD.{token} IS NOT NULL AND OLD.{token} <> NEW.{token} THEN {takeover}; END IF; \
                       {claim}; \
                     END IF; END"
                ),
            ],
            // SQLite's triggers have no IF: the takeover and the claim are two triggers, and
            // the takeover's reads only claims of the old token, whichever trigger runs first.
            Kind::Sqlite => vec![
                format!("DROP TRIGGER IF EXISTS {name}"),
                format!("DROP TRIGGER IF EXISTS {name}_takeover"),
                format!(
                    "CREATE TRIGGER {name} BEFORE UPDATE ON {table} FOR EACH ROW \
                     WHEN NEW.{token} IS NOT NULL AND (OLD.{token} IS NOT NEW.{token} OR OLD.{at} IS NOT NEW.{at}) \
                     BEGIN {claim}; END"
                ),
                format!(
                    "CREATE TRIGGER {name}_takeover BEFORE UPDATE ON {table} FOR EACH ROW \
                     WHEN OLD.{token} IS NOT NULL AND NEW.{token} IS NOT NULL AND OLD.{token} <> NEW.{token} \
                     BEGIN {takeover}; END"
                ),
            ],
        }
    }
}

/// What the database says of the queue at the end.
#[derive(Debug, Clone, Copy)]
pub struct JobCounts {
    pub jobs: i64,
    /// Not done: lost, if the run is over.
    pub open: i64,
    /// Done more than once.
    pub twice: i64,
    /// Claims made in all (the fences' sum).
    pub claims: i64,
}

/// The takeovers `fault_takeovers` logged on a table, and the youngest claim taken over.
#[derive(Debug, Clone, Copy)]
pub struct Takeovers {
    pub count: i64,
    pub min_age: Option<Duration>,
    /// Takeovers of a claim younger than the lease.
    pub early: i64,
    /// Takeovers of a claim the log never saw made (none, unless the triggers are wrong).
    pub unknown: i64,
}

/// What the scenarios ask of a connection, beyond the library's own calls.
pub trait FaultConn: R2D2Connection + AgentConnection + 'static {
    const KIND: Kind;

    /// Claims up to `size` jobs not done yet, by the database's clock, under a new claim of
    /// `worker`'s.
    fn claim_jobs(
        &mut self,
        size: usize,
        lease: Lease,
        worker: &str,
    ) -> Result<Batch<i64, fault_jobs::table>, diesel_lease::Error>;

    /// Frees at once the jobs an earlier life of `node` held (a process of its name that was
    /// killed): they go back to the queue.
    fn free_earlier_lives(&mut self, node: &Node) -> Result<Vec<i64>, diesel_lease::Error>;

    /// The token-guarded finish of `batch`: done, and counted; the jobs the claim still held.
    fn finish_jobs(
        &mut self,
        batch: &Batch<i64, fault_jobs::table>,
    ) -> Result<Vec<i64>, diesel_lease::Error>;

    fn open_jobs(&mut self) -> QueryResult<i64>;

    fn insert_jobs(&mut self, count: i64) -> QueryResult<()>;

    fn job_counts(&mut self) -> QueryResult<JobCounts>;

    fn takeovers(&mut self, table: &str, lease: Lease) -> QueryResult<Takeovers>;

    /// The database's clock.
    fn clock(&mut self) -> QueryResult<chrono::DateTime<chrono::Utc>>;

    /// The agent tables, by the library's migrations.
    fn migrate_agent(&mut self) -> Result<(), diesel_lease_agent::Error>;

    /// Empties the agent tables and makes `chats` conversations over `users` users (chat `n`
    /// belongs to user `n % users`).
    fn reset_chats(&mut self, chats: usize, users: usize) -> QueryResult<()>;

    /// The conversations still locked: (chat, its user, the turn holding it).
    fn locked_chats(&mut self) -> QueryResult<Vec<(String, String, String)>>;

    /// How many conversations and users are locked.
    fn locked_counts(&mut self) -> QueryResult<(i64, i64)>;

    /// What a pool of these connections needs.
    fn customized(builder: PoolBuilder<Self>) -> PoolBuilder<Self>;

    /// What a pool of these connections needs behind a transaction pooler (PgBouncer).
    fn pooled(builder: PoolBuilder<Self>) -> PoolBuilder<Self> {
        Self::customized(builder)
    }

    /// The first column, `n`, of the first row of `sql` (a BIGINT, or NULL).
    fn number(&mut self, sql: &str) -> QueryResult<Option<i64>>;

    /// The column `n` of every row of `sql`.
    fn numbers(&mut self, sql: &str) -> QueryResult<Vec<Option<i64>>>;

    /// A write by a holder, guarded by its token (and, with `fresh`, by its lease by the
    /// database's clock): counts itself in `done_count`; how many rows it changed.
    fn guarded_write(
        &mut self,
        token: &str,
        ids: &[i64],
        fresh: Option<Lease>,
    ) -> QueryResult<usize>;
}

/// A row of [`FaultConn::number`].
#[derive(Debug, QueryableByName)]
pub struct Number {
    #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::BigInt>)]
    pub n: Option<i64>,
}

pub type Pool<C> = diesel::r2d2::Pool<ConnectionManager<C>>;

pub type PoolBuilder<C> = diesel::r2d2::Builder<ConnectionManager<C>>;

pub fn chat(n: usize) -> String {
    format!("chat-{n}")
}

pub fn user(n: usize) -> String {
    format!("user-{n}")
}

/// Whether the pools made now go through a transaction pooler, and so need its setup.
static POOLING: AtomicBool = AtomicBool::new(false);

/// Said to worker processes, which set their pools up the same way.
pub const POOLING_ENV: &str = "LEASE_FAULTS_POOLING";

/// From now on, pools are (or are not) set up for a transaction pooler.
pub fn set_pooling(on: bool) {
    POOLING.store(on, Ordering::SeqCst);
}

pub fn pooling() -> bool {
    POOLING.load(Ordering::SeqCst)
}

/// A pool as the suite uses it: opened lazily (a worker may start while the server is down),
/// a checkout given up after 1 s so that a worker learns of an outage and tries again, and on
/// SQLite the library's pragmas (WAL, a writer waited for); behind a transaction pooler
/// ([`set_pooling`]), `PgTransactionPooling`.
pub fn pool<C: FaultConn>(url: &str, size: u32) -> Pool<C> {
    let builder = Pool::builder()
        .max_size(size)
        .min_idle(Some(0))
        .connection_timeout(Duration::from_secs(1));
    let builder = if pooling() {
        C::pooled(builder)
    } else {
        C::customized(builder)
    };
    builder.build_unchecked(ConnectionManager::new(url))
}

/// Runs each statement of `sql` on `conn`.
pub fn execute<C: FaultConn>(conn: &mut C, sql: &[String]) -> QueryResult<()> {
    sql.iter()
        .try_for_each(|statement| conn.batch_execute(statement))
}

/// The suite's own PostgreSQL, at PG_DATABASE_URL, which no scenario stops or cuts off: it
/// stamps a moment while a scenario's server is down or unreachable. Both read this machine's
/// clock.
pub struct Witness(diesel::PgConnection);

impl Witness {
    pub fn connect() -> Result<Witness, String> {
        let url = std::env::var("PG_DATABASE_URL").map_err(|_| "PG_DATABASE_URL is not set")?;
        diesel::PgConnection::establish(&url)
            .map(Witness)
            .map_err(|e| format!("the witness: {e}"))
    }

    /// Now, by the witness's clock, in microseconds since the epoch.
    pub fn micros(&mut self) -> Result<i64, String> {
        self.0
            .number(&format!(
                "SELECT {} AS n",
                Kind::Postgres.epoch_micros("clock_timestamp()")
            ))
            .map_err(|e| format!("the witness's clock: {e}"))?
            .ok_or_else(|| "the witness's clock: NULL".into())
    }
}
