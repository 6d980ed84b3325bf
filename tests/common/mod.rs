//! What every integration test shares: which backends are configured, the test tables, and the
//! test kit's race harness and bounded wait with the scenarios' patience.
#![allow(dead_code, unreachable_pub, unused_macros)]
// Each test binary uses a part of what the files below give it, re-exported here.
#![allow(unused_imports)]

use diesel::r2d2::{ConnectionManager, Pool, R2D2Connection};

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
mod pools;
#[cfg(feature = "postgres")]
pub mod postgres;
#[cfg(feature = "sqlite")]
pub mod sqlite;
mod waits;

pub use pools::*;
pub use waits::*;

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
