//! What every integration test shares: which backends are configured, the test tables, and the
//! test kit's race harness and bounded wait with the scenarios' patience.
#![allow(dead_code, unreachable_pub, unused_macros)]

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use diesel::connection::InstrumentationEvent;

use diesel::r2d2::{ConnectionManager, CustomizeConnection, Pool, R2D2Connection};
use diesel::RunQueryDsl;

/// The scenarios of a test binary, once per backend: `all` in a module of each backend whose
/// feature is on, with `backend` naming its support module; `postgres`, `mysql` and `sqlite`
/// beside them in that backend's module alone. A server backend whose URL was not set when the
/// tests were built (build.rs) has, instead of its scenarios, one test reported as ignored with
/// the reason; the binary's `every_backend_that_ci_requires_is_configured` fails the run when
/// `LEASE_TEST_REQUIRE_ALL_BACKENDS` is set.
macro_rules! on_every_backend {
    (
        all: { $($all:tt)* }
        $(postgres: { $($postgres:tt)* })?
        $(mysql: { $($mysql:tt)* })?
        $(sqlite: { $($sqlite:tt)* })?
    ) => {
        #[test]
        fn every_backend_that_ci_requires_is_configured() {
            crate::common::assert_configured(&[
                (cfg!(feature = "postgres"), cfg!(lease_test_postgres), "PG_DATABASE_URL"),
                (cfg!(feature = "mysql"), cfg!(lease_test_mysql), "MYSQL_DATABASE_URL"),
            ]);
        }

        #[cfg(all(feature = "postgres", lease_test_postgres))]
        mod postgres {
            use crate::common::postgres as backend;
            $($all)*
            $($($postgres)*)?
        }

        #[cfg(all(feature = "postgres", not(lease_test_postgres)))]
        mod postgres {
            #[test]
            #[ignore = "PG_DATABASE_URL is not set"]
            fn not_configured() {}
        }

        #[cfg(all(feature = "mysql", lease_test_mysql))]
        mod mysql {
            use crate::common::mysql as backend;
            $($all)*
            $($($mysql)*)?
        }

        #[cfg(all(feature = "mysql", not(lease_test_mysql)))]
        mod mysql {
            #[test]
            #[ignore = "MYSQL_DATABASE_URL is not set"]
            fn not_configured() {}
        }

        #[cfg(feature = "sqlite")]
        mod sqlite {
            use crate::common::sqlite as backend;
            $($all)*
            $($($sqlite)*)?
        }
    };
}

/// The support module of a server backend: its URL from `$variable`, the shared pool with the
/// test tables, pools and connections of their own, and a session in a far time zone; every
/// connection set up by `$customizer` (an `Option` of a boxed `CustomizeConnection`), if any.
macro_rules! server_backend {
    ($conn:ty, $name:literal, $variable:literal, $ddl:expr, $far_time_zone:literal) => {
        server_backend!($conn, $name, $variable, $ddl, $far_time_zone, None);
    };
    ($conn:ty, $name:literal, $variable:literal, $ddl:expr, $far_time_zone:literal, $customizer:expr) => {
        use std::sync::OnceLock;

        use diesel::prelude::*;
        use diesel::r2d2::{ConnectionManager, Pool};

        pub type Conn = $conn;

        /// Starts a transaction that will write.
        pub const BEGIN_WRITE: &str = "BEGIN";

        /// The server's URL.
        pub fn url() -> &'static str {
            static URL: OnceLock<String> = OnceLock::new();
            URL.get_or_init(|| super::server_url($name, $variable))
        }

        fn customizer() -> super::Customizer<Conn> {
            $customizer
        }

        /// The shared pool, with the test tables made anew.
        pub fn pool() -> Pool<ConnectionManager<Conn>> {
            static POOL: OnceLock<Pool<ConnectionManager<Conn>>> = OnceLock::new();
            POOL.get_or_init(|| super::shared_pool(url(), customizer(), $ddl))
                .clone()
        }

        /// A pool of its own with `size` connections.
        pub fn pool_of(size: u32) -> Pool<ConnectionManager<Conn>> {
            pool();
            super::build_pool(url(), size, customizer())
        }

        /// A pool of `size` connections to the database at `url`, set up as this backend's,
        /// that leaves the test tables as they are: a child process's, whose parent made them.
        pub fn worker_pool(url: &str, size: u32) -> Pool<ConnectionManager<Conn>> {
            super::build_pool(url, size, customizer())
        }

        /// A pool of its own with `size` connections, whose checkout waits up to `timeout`.
        pub fn pool_waiting(
            size: u32,
            timeout: std::time::Duration,
        ) -> Pool<ConnectionManager<Conn>> {
            pool();
            super::build_pool_waiting(url(), size, timeout, customizer())
        }

        /// A pool of its own with `size` connections, and how many `UPDATE`s they have run.
        pub fn pool_counting_updates(size: u32) -> (Pool<ConnectionManager<Conn>>, super::Counter) {
            pool();
            super::pool_counting_updates(url(), size, customizer())
        }

        /// A pool of its own with `size` connections, and how many statements they have run.
        pub fn pool_counting_statements(
            size: u32,
        ) -> (Pool<ConnectionManager<Conn>>, super::Counter) {
            pool();
            super::pool_counting_statements(url(), size, customizer())
        }

        /// A connection of its own, outside any pool (for session settings that must not leak).
        pub fn connect() -> Conn {
            pool();
            let mut conn = Conn::establish(url()).expect("a connection");
            if let Some(customizer) = customizer() {
                customizer
                    .on_acquire(&mut conn)
                    .expect("the connection set up");
            }
            conn
        }

        /// A connection whose session time zone is far from UTC, at an odd offset.
        pub fn connect_in_far_time_zone() -> Conn {
            let mut conn = connect();
            diesel::sql_query($far_time_zone)
                .execute(&mut conn)
                .expect("a far time zone");
            conn
        }
    };
}

/// A table whose `claimed_at` has the backend's own timestamp type rather than `UtcTimestamp`.
macro_rules! native_jobs {
    ($timestamp:ident, $ddl:literal) => {
        pub mod native {
            diesel::table! {
                use diesel::sql_types::*;

                native_jobs (id) {
                    id -> Text,
                    owner -> Nullable<Text>,
                    claim_token -> Nullable<Text>,
                    claimed_at -> Nullable<$timestamp>,
                }
            }

            diesel_lease::claim_lease!(native_jobs);

            pub const DDL: &str = $ddl;
        }
    };
}

#[cfg(all(feature = "postgres", feature = "mysql", feature = "sqlite"))]
pub mod any;
pub mod items;
pub mod jobs;
#[cfg(feature = "mysql")]
pub mod mysql;
#[cfg(feature = "postgres")]
pub mod pooler;
#[cfg(feature = "postgres")]
pub mod postgres;
#[cfg(feature = "sqlite")]
pub mod sqlite;

/// Set by CI: a backend whose server is not configured fails the run instead of being skipped.
pub const REQUIRE_ALL_BACKENDS: &str = "LEASE_TEST_REQUIRE_ALL_BACKENDS";

/// With [`REQUIRE_ALL_BACKENDS`] set, fails unless every backend of `backends` (whether its
/// feature is on, whether its URL was set when the tests were built, the URL's variable) whose
/// feature is on is configured.
pub fn assert_configured(backends: &[(bool, bool, &str)]) {
    if std::env::var_os(REQUIRE_ALL_BACKENDS).is_none() {
        return;
    }
    let missing: Vec<&str> = backends
        .iter()
        .filter(|(compiled, configured, _)| *compiled && !*configured)
        .map(|(.., variable)| *variable)
        .collect();
    assert!(
        missing.is_empty(),
        "{REQUIRE_ALL_BACKENDS} requires every backend; not set: {} (their tests did not run)",
        missing.join(", ")
    );
}

/// The URL of a server backend whose tests were built because `$variable` was set.
pub fn server_url(backend: &str, variable: &str) -> String {
    match std::env::var(variable) {
        Ok(url) if !url.trim().is_empty() => url,
        _ => panic!(
            "{backend}: {variable} was set when the tests were built and is not set now: \
             run them through cargo, which rebuilds them without the {backend} tests"
        ),
    }
}

/// An id no other test, run or process has used.
pub fn unique_id(prefix: &str) -> String {
    format!("{prefix}-{}", uuid::Uuid::new_v4().simple())
}

/// How a backend sets up each of its connections, if at all.
pub type Customizer<C> = Option<Box<dyn CustomizeConnection<C, diesel::r2d2::Error>>>;

/// A pool of at most `size` connections to `url`.
pub fn build_pool<C: R2D2Connection + 'static>(
    url: &str,
    size: u32,
    customizer: Customizer<C>,
) -> Pool<ConnectionManager<C>> {
    build_pool_waiting(url, size, Duration::from_secs(30), customizer)
}

/// A pool of at most `size` connections to `url`, whose checkout waits up to `timeout`.
pub fn build_pool_waiting<C: R2D2Connection + 'static>(
    url: &str,
    size: u32,
    timeout: Duration,
    customizer: Customizer<C>,
) -> Pool<ConnectionManager<C>> {
    let builder = Pool::builder()
        .max_size(size)
        .min_idle(Some(0)) // opened as needed
        .connection_timeout(timeout);
    let builder = match customizer {
        Some(customizer) => builder.connection_customizer(customizer),
        None => builder,
    };
    builder
        .build(ConnectionManager::new(url))
        .expect("a connection pool")
}

/// How many statements (of a kind) the connections of a pool have run without an error.
pub type Counter = Arc<AtomicU64>;

/// A pool of at most `size` connections to `url`, set up by `inner`, each counting in the
/// `Counter` given back the `UPDATE` statements it ran without an error.
pub fn pool_counting_updates<C: R2D2Connection + 'static>(
    url: &str,
    size: u32,
    inner: Customizer<C>,
) -> (Pool<ConnectionManager<C>>, Counter) {
    pool_counting(url, size, inner, |sql| {
        sql.trim_start().starts_with("UPDATE")
    })
}

/// A pool of at most `size` connections to `url`, set up by `inner`, each counting in the
/// `Counter` given back every statement it ran without an error.
pub fn pool_counting_statements<C: R2D2Connection + 'static>(
    url: &str,
    size: u32,
    inner: Customizer<C>,
) -> (Pool<ConnectionManager<C>>, Counter) {
    pool_counting(url, size, inner, |_| true)
}

/// A pool of at most `size` connections to `url`, set up by `inner`, each counting in the
/// `Counter` given back the statements it ran without an error whose SQL `counts` (Diesel's
/// instrumentation sees every statement, whatever sends it).
fn pool_counting<C: R2D2Connection + 'static>(
    url: &str,
    size: u32,
    inner: Customizer<C>,
    counts: fn(&str) -> bool,
) -> (Pool<ConnectionManager<C>>, Counter) {
    let counter = Counter::default();
    let counting = Counting {
        inner,
        counter: Arc::clone(&counter),
        counts,
    };
    (build_pool(url, size, Some(Box::new(counting))), counter)
}

struct Counting<C> {
    inner: Customizer<C>,
    counter: Counter,
    counts: fn(&str) -> bool,
}

impl<C> std::fmt::Debug for Counting<C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Counting")
            .field("counter", &self.counter)
            .finish_non_exhaustive()
    }
}

impl<C: R2D2Connection + 'static> CustomizeConnection<C, diesel::r2d2::Error> for Counting<C> {
    fn on_acquire(&self, conn: &mut C) -> Result<(), diesel::r2d2::Error> {
        if let Some(inner) = &self.inner {
            inner.on_acquire(conn)?;
        }
        let (counter, counts) = (Arc::clone(&self.counter), self.counts);
        conn.set_instrumentation(move |event: InstrumentationEvent<'_>| {
            if let InstrumentationEvent::FinishQuery {
                query, error: None, ..
            } = event
            {
                if counts(&query.to_string()) {
                    counter.fetch_add(1, Ordering::SeqCst);
                }
            }
        });
        Ok(())
    }
}

/// The test tables of a backend: each one's name and DDL.
pub type Tables = [(&'static str, &'static str); 5];

/// The pool the tests of one backend share, with the test tables made anew and the agent tables
/// and the task locks' table migrated.
pub fn shared_pool<C>(
    url: &str,
    customizer: Customizer<C>,
    tables: Tables,
) -> Pool<ConnectionManager<C>>
where
    C: R2D2Connection + AgentTables + TaskTables + 'static,
    diesel::query_builder::SqlQuery: diesel::query_dsl::methods::ExecuteDsl<C>,
{
    let pool = build_pool(url, 8, customizer);
    let conn = &mut *pool.get().expect("a connection");
    // Made anew by each run, so that a run always tests the DDL it shows.
    for (table, ddl) in tables {
        diesel::sql_query(format!("DROP TABLE IF EXISTS {table}"))
            .execute(conn)
            .expect("drop a test table");
        // A table and its indexes: statements separated by `;`, sent one by one.
        for statement in ddl
            .split(';')
            .filter(|statement| !statement.trim().is_empty())
        {
            diesel::sql_query(statement)
                .execute(conn)
                .expect("create a test table");
        }
    }
    conn.agent_tables();
    conn.task_tables();
    pool
}

/// A connection on which the shared pool makes the agent's tables: by the agent's migrations
/// when the `agent` feature is on, and not at all without it.
pub trait AgentTables {
    fn agent_tables(&mut self);
}

#[cfg(feature = "agent")]
impl<C> AgentTables for C
where
    C: diesel_migrations::MigrationHarness<C::Backend> + diesel::Connection,
    C::Backend: diesel_lease::agent::AgentMigrations,
{
    fn agent_tables(&mut self) {
        diesel_lease::agent::run_migrations(self).expect("the agent tables");
    }
}

#[cfg(not(feature = "agent"))]
impl<C> AgentTables for C {
    fn agent_tables(&mut self) {}
}

/// A connection on which the shared pool makes the task locks' table: by their migrations when
/// the `tasks` feature is on, and not at all without it.
pub trait TaskTables {
    fn task_tables(&mut self);
}

#[cfg(feature = "tasks")]
impl<C> TaskTables for C
where
    C: diesel_migrations::MigrationHarness<C::Backend> + diesel::Connection,
    C::Backend: diesel_lease::tasks::TaskMigrations,
{
    fn task_tables(&mut self) {
        diesel_lease::tasks::run_migrations(self).expect("the task locks' table");
    }
}

#[cfg(not(feature = "tasks"))]
impl<C> TaskTables for C {
    fn task_tables(&mut self) {}
}

/// Runs `write` for each of `keys`, a statement that changes the one row of that key, each in a
/// transaction of its own. A test's UPDATE of many rows at once would lock more than its own
/// rows on MySQL/MariaDB: a key list that is a large part of a small table is a scan of the
/// whole index, and a range locks the row after it; a batch claim of another test that ran
/// meanwhile would pass those rows by (`SKIP LOCKED`), and win fewer than it should. Nor are
/// the rows written in one transaction: holding the first rows' locks while it waits for the
/// next, it deadlocks with a keeper renewing the same rows in another order.
pub fn by_key_alone<C, K, E: std::fmt::Debug>(
    conn: &mut C,
    keys: &[K],
    write: impl Fn(&mut C, &K) -> Result<usize, E>,
) {
    for key in keys {
        assert_eq!(
            write(conn, key).expect("written, by key"),
            1,
            "one row a key"
        );
    }
}

/// The kit's race: `racers` threads on connections of their own, released together.
pub use diesel_lease::testkit::race;

/// Runs `workers` racers ([`race`]) that take work until none is left, and gives back all they
/// took: `take` takes one batch on the racer's connection and gives back what it took, nothing
/// when nothing could be taken right then (all of it held by other racers, or a lost conflict),
/// which is not the end; `left` says whether any work is left to take.
pub fn drain<C, K, Take, Left>(
    pool: &Pool<ConnectionManager<C>>,
    workers: usize,
    take: Take,
    left: Left,
) -> Vec<K>
where
    C: R2D2Connection + 'static,
    K: Send,
    Take: Fn(usize, &mut C) -> Vec<K> + Sync,
    Left: Fn(&mut C) -> bool + Sync,
{
    let taken = race(pool, workers, |worker, conn| {
        let mut taken = Vec::new();
        for _ in 0..10_000 {
            let batch = take(worker, conn);
            if batch.is_empty() && !left(conn) {
                return taken;
            }
            taken.extend(batch);
        }
        panic!("worker {worker} never saw the work done");
    });
    taken.into_iter().flatten().collect()
}

/// How long a scenario waits for what it asserts before it fails: about 30 s.
const PATIENCE: Duration = Duration::from_secs(30);

/// The kit's bounded wait ([`diesel_lease::testkit::eventually`]), with the scenarios' patience:
/// tests wait for what they assert, they do not time it.
pub fn eventually(what: &str, done: impl FnMut() -> bool) {
    diesel_lease::testkit::eventually(what, PATIENCE, done);
}

/// Waits until `keeper` has made `rounds` more rounds of renewals: tests count rounds, they do
/// not time them.
pub fn after_rounds<C: R2D2Connection>(keeper: &diesel_lease::Keeper<C>, rounds: u64) {
    let until = keeper.rounds() + rounds;
    eventually(&format!("{rounds} rounds of the keeper"), || {
        keeper.rounds() >= until
    });
}
