//! What every integration test shares: which backends are configured, and the test jobs table.
#![allow(dead_code, unreachable_pub)]

use std::io::Write;
use std::sync::Mutex;

use diesel::r2d2::{ConnectionManager, CustomizeConnection, Pool, R2D2Connection};
use diesel::RunQueryDsl;

pub mod barrier;

/// The support module of a server backend: its URL from `$variable`, the shared pool with the
/// test tables, pools and connections of their own, and a session in a far time zone; every
/// connection set up by `$customizer` (an `Option` of a boxed `CustomizeConnection`), if any.
macro_rules! server_backend {
    ($conn:ty, $name:literal, $variable:literal, $jobs_ddl:expr, $far_time_zone:literal) => {
        server_backend!($conn, $name, $variable, $jobs_ddl, $far_time_zone, None);
    };
    ($conn:ty, $name:literal, $variable:literal, $jobs_ddl:expr, $far_time_zone:literal, $customizer:expr) => {
        use std::sync::OnceLock;

        use diesel::prelude::*;
        use diesel::r2d2::{ConnectionManager, Pool};

        pub type Conn = $conn;

        /// Whether a writer locks the whole database (SQLite), rather than rows.
        pub const HAS_DATABASE_LOCK: bool = false;

        /// Starts a transaction that will write.
        pub const BEGIN_WRITE: &str = "BEGIN";

        /// The server's URL, when it is configured.
        pub fn url() -> Option<&'static str> {
            static URL: OnceLock<Option<String>> = OnceLock::new();
            URL.get_or_init(|| super::server_url($name, $variable))
                .as_deref()
        }

        fn customizer() -> super::Customizer<Conn> {
            $customizer
        }

        /// The shared pool, with the schema in place; `None` when the server is not configured.
        pub fn pool() -> Option<Pool<ConnectionManager<Conn>>> {
            static POOL: OnceLock<Option<Pool<ConnectionManager<Conn>>>> = OnceLock::new();
            POOL.get_or_init(|| {
                Some(super::shared_pool(
                    url()?,
                    customizer(),
                    [$jobs_ddl, native::DDL],
                ))
            })
            .clone()
        }

        /// A pool of its own with `size` connections.
        pub fn pool_of(size: u32) -> Pool<ConnectionManager<Conn>> {
            pool();
            super::build_pool(url().expect("the server is configured"), size, customizer())
        }

        /// A connection of its own, outside any pool (for session settings that must not leak).
        pub fn connect() -> Conn {
            let mut conn =
                Conn::establish(url().expect("the server is configured")).expect("a connection");
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

/// The URL of a server backend, or `None` (said once on the output) when it is not configured.
pub fn server_url(backend: &str, variable: &str) -> Option<String> {
    static SKIPS_SAID: Mutex<Vec<String>> = Mutex::new(Vec::new());
    match std::env::var(variable) {
        Ok(url) if !url.trim().is_empty() => Some(url),
        _ => {
            assert!(
                std::env::var_os(REQUIRE_ALL_BACKENDS).is_none(),
                "{backend}: {variable} is not set, and {REQUIRE_ALL_BACKENDS} requires every backend"
            );
            let mut said = SKIPS_SAID
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            if !said.iter().any(|name| name == backend) {
                said.push(backend.to_owned());
                // Written to the process's stderr directly: libtest captures only print! macros.
                let _ = writeln!(
                    std::io::stderr(),
                    "SKIPPED {backend} tests: {variable} is not set (set {REQUIRE_ALL_BACKENDS}=1 to fail instead)"
                );
            }
            None
        }
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
    let builder = Pool::builder().max_size(size).min_idle(Some(0)); // opened as needed
    let builder = match customizer {
        Some(customizer) => builder.connection_customizer(customizer),
        None => builder,
    };
    builder
        .build(ConnectionManager::new(url))
        .expect("a connection pool")
}

/// The pool the tests of one backend share, with the jobs tables (`tables`: the DDL of
/// `lease_jobs` and `native_jobs`) made anew and the agent tables migrated.
pub fn shared_pool<C>(
    url: &str,
    customizer: Customizer<C>,
    tables: [&str; 2],
) -> Pool<ConnectionManager<C>>
where
    C: R2D2Connection + AgentTables + 'static,
    diesel::query_builder::SqlQuery: diesel::query_dsl::methods::ExecuteDsl<C>,
{
    let pool = build_pool(url, 8, customizer);
    let conn = &mut *pool.get().expect("a connection");
    // Made anew by each run, so that a run always tests the DDL it shows.
    for (table, ddl) in ["lease_jobs", "native_jobs"].into_iter().zip(tables) {
        diesel::sql_query(format!("DROP TABLE IF EXISTS {table}"))
            .execute(conn)
            .expect("drop a test table");
        diesel::sql_query(ddl)
            .execute(conn)
            .expect("create a test table");
    }
    conn.agent_tables();
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

/// Waits until `keeper` has made `rounds` more rounds of renewals (or says why not, after a
/// generous while): tests count rounds, they do not time them.
pub fn after_rounds<C: diesel::r2d2::R2D2Connection>(
    keeper: &diesel_lease::Keeper<C>,
    rounds: u64,
) {
    let until = keeper.rounds() + rounds;
    for _ in 0..2_000 {
        if keeper.rounds() >= until {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    panic!("the keeper made no {rounds} rounds in 10 s");
}
