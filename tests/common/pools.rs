//! How the tests of a backend get their connections: pools, set up and counting as a test
//! needs, and the pool each backend's tests share, with the test tables made anew.
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use diesel::connection::InstrumentationEvent;
use diesel::r2d2::{ConnectionManager, CustomizeConnection, Pool, R2D2Connection};
use diesel::RunQueryDsl;

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
    C: R2D2Connection + diesel_migrations::MigrationHarness<C::Backend> + 'static,
    C::Backend: diesel_lease_agent::AgentMigrations + diesel_lease_tasks::TaskMigrations,
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
    diesel_lease_agent::run_migrations(conn).expect("the agent tables");
    diesel_lease_tasks::run_migrations(conn).expect("the task locks' table");
    pool
}
