// A lease table's health on PostgreSQL, included by tests/health.rs: a REPEATABLE READ
// transaction left open holds the cleanup horizon back and is warned of by its process id; the
// table the lease columns' migration writes keeps renewals HOT, one that indexes claimed_at does
// not; a table of another schema is read by its qualified name.
use std::sync::Mutex;
use std::time::Duration;

use diesel::connection::SimpleConnection;
use diesel::prelude::*;
use diesel_lease::health::TableHealth;
use diesel_lease::LeaseColumns;

/// The tests that hold the cleanup horizon back, or need it to move, one at a time: a snapshot
/// left open keeps every dead row version, so page pruning frees no room for HOT updates.
static HORIZON: Mutex<()> = Mutex::new(());

fn horizon() -> std::sync::MutexGuard<'static, ()> {
    HORIZON
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The process id of the server session `conn` is.
fn backend_pid(conn: &mut backend::Conn) -> u64 {
    let pid: i32 = diesel::select(diesel::dsl::sql::<diesel::sql_types::Integer>(
        "pg_backend_pid()",
    ))
    .get_result(conn)
    .unwrap();
    u64::try_from(pid).unwrap()
}

/// Thresholds that warn of any transaction open over 200 ms.
fn impatient() -> HealthThresholds {
    HealthThresholds::default().max_transaction_age(Duration::from_millis(200))
}

#[test]
fn a_repeatable_read_transaction_left_open_is_warned_of_by_its_session_until_it_ends() {
    let _serial = horizon();
    let holder = &mut backend::connect();
    let pid = backend_pid(holder);
    holder
        .batch_execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
        .unwrap();
    // Its snapshot is taken by its first read, and kept until it ends.
    let _: i64 = lease_jobs::table.count().get_result(holder).unwrap();

    // Read from a session in a far time zone, inside a transaction of its own: PostgreSQL keeps
    // a transaction's first view of the statistics unless told otherwise, and each reading
    // must be fresh all the same.
    let reader = &mut backend::connect_in_far_time_zone();
    reader
        .transaction(|reader| {
            let health = open_transaction_warned_of_until_it_ends(
                pid,
                "(idle in transaction;",
                "at most 200 ms",
                || {
                    lease_jobs::table
                        .health()
                        .thresholds(impatient())
                        .run(reader)
                        .unwrap()
                },
                || holder.batch_execute("COMMIT").unwrap(),
            );
            assert!(
                health.get(Metric::OldestTransactionXids).is_some(),
                "{health}"
            );
            diesel::QueryResult::Ok(())
        })
        .unwrap();
}

diesel::table! {
    use diesel::sql_types::*;
    use diesel_lease::sql_types::UtcTimestamp;

    /// A table made anew by each HOT test, with the lease columns its migration adds.
    hot_jobs (id) {
        id -> BigInt,
        status -> Text,
        owner -> Nullable<Text>,
        claim_token -> Nullable<Text>,
        claimed_at -> Nullable<UtcTimestamp>,
    }
}

diesel_lease::claim_lease!(hot_jobs);

/// How many rows `hot_jobs` has, claimed in batches of [`BATCH`].
const ROWS: i64 = 1_000;
const BATCH: usize = 10;
/// How many times each batch is renewed.
const ROUNDS: usize = 20;

/// `hot_jobs` made anew as a plain table with [`ROWS`] queued rows, given its lease columns by
/// the generated migration, and then `extra_ddl`.
fn made_hot_jobs(conn: &mut backend::Conn, extra_ddl: &str) {
    conn.batch_execute(&format!(
        "DROP TABLE IF EXISTS hot_jobs;
         CREATE TABLE hot_jobs (id BIGINT PRIMARY KEY, status VARCHAR(16) NOT NULL);
         INSERT INTO hot_jobs (id, status) SELECT n, 'queued' FROM generate_series(1, {ROWS}) n;"
    ))
    .unwrap();
    let up = LeaseColumns::new("hot_jobs")
        .up_sql::<diesel::pg::Pg>()
        .unwrap();
    conn.batch_execute(&up).unwrap();
    if !extra_ddl.is_empty() {
        conn.batch_execute(extra_ddl).unwrap();
    }
}

/// `hot_jobs`'s health once its statistics count at least `updates` updates.
fn hot_jobs_health(conn: &mut backend::Conn, updates: u64) -> TableHealth {
    // This session's counts are sent at its next idle moment rather than up to a second later.
    conn.batch_execute("SELECT pg_stat_force_next_flush()")
        .unwrap();
    let reader = &mut backend::connect();
    let mut counted = None;
    crate::common::eventually(&format!("{updates} updates counted"), || {
        let health = hot_jobs::table.health().run(reader).unwrap();
        if health.get(Metric::Updates).and_then(Measure::as_count) >= Some(updates) {
            counted = Some(health);
        }
        counted.is_some()
    });
    counted.unwrap()
}

/// The counts of updates and of HOT updates `health` read.
fn updates_of(health: &TableHealth) -> (u64, u64) {
    let count = |metric| health.get(metric).and_then(Measure::as_count).unwrap();
    (count(Metric::Updates), count(Metric::HotUpdates))
}

/// How long a transaction that holds the horizon back may run during a measurement before the
/// measurement is not counted: while it runs, no page pruning makes room for HOT updates.
const QUIET: Duration = Duration::from_millis(100);

/// What the health call says holds the horizon back, if it has for longer than [`QUIET`]: the
/// server is shared, and a transaction id held anywhere on it holds back pruning here too.
fn held_back(reader: &mut backend::Conn) -> Option<String> {
    let health = hot_jobs::table.health().run(reader).unwrap();
    let age = health.get(Metric::OldestTransactionAge)?.as_age()?;
    (age >= QUIET).then(|| {
        health
            .get(Metric::OldestTransaction)
            .map_or_else(String::new, ToString::to_string)
    })
}

/// `hot_jobs` made anew with `extra_ddl`, every row claimed in batches of [`BATCH`], and the
/// renewals alone: each batch renewed [`ROUNDS`] times, one statement a batch, as a keeper or a
/// worker renews what it holds. The share of the renewals that were HOT, and the table's health
/// after them, both as the health call reads them. A measurement during which the health call
/// saw a transaction hold the horizon back is made again, up to five times.
fn renewals_hot_share(conn: &mut backend::Conn, extra_ddl: &str) -> (f64, TableHealth) {
    let reader = &mut backend::connect();
    let mut holders = Vec::new();
    for _ in 0..5 {
        made_hot_jobs(conn, extra_ddl);
        let batches: Vec<_> = (0..ROWS / BATCH as i64)
            .map(|n| {
                let batch = hot_jobs::table
                    .claim_batch(BATCH, minute())
                    .by(&Claim::new(&format!("worker-{n}")).unwrap())
                    .order_by(hot_jobs::id)
                    .set(hot_jobs::status.eq("running"))
                    .returning(hot_jobs::id)
                    .run::<i64>(conn)
                    .unwrap();
                assert_eq!(batch.len(), BATCH);
                batch
            })
            .collect();
        let claimed = hot_jobs_health(conn, ROWS.unsigned_abs());
        let mut disturbed = None;
        for _ in 0..ROUNDS {
            for batch in &batches {
                assert_eq!(batch.renew().run(conn).unwrap().len(), BATCH);
            }
            disturbed = disturbed.or_else(|| held_back(reader));
        }
        let renewals = (ROWS.unsigned_abs()) * ROUNDS as u64;
        let renewed = hot_jobs_health(conn, ROWS.unsigned_abs() + renewals);
        if let Some(holder) = disturbed {
            holders.push(holder);
            continue;
        }
        let (before, hot_before) = updates_of(&claimed);
        let (after, hot_after) = updates_of(&renewed);
        assert_eq!(after - before, renewals, "only the renewals updated it");
        #[allow(clippy::cast_precision_loss)]
        let share = (hot_after - hot_before) as f64 / renewals as f64;
        return (share, renewed);
    }
    panic!("the horizon was held back during every measurement, by: {holders:?}");
}

#[test]
fn renewals_of_the_table_the_lease_columns_migration_writes_stay_hot() {
    let _serial = horizon();
    let conn = &mut backend::connect();
    let (share, health) = renewals_hot_share(conn, "");
    assert!(
        share >= 0.95,
        "{:.1}% of the renewals were HOT:\n{health}",
        share * 100.0
    );
    assert!(health.warning(Metric::HotUpdateShare).is_none(), "{health}");
    assert_eq!(
        health.get(Metric::Fillfactor),
        Some(&Measure::Share(0.9)),
        "the migration leaves a tenth of each page for renewals:\n{health}"
    );
    assert!(
        health
            .get(Metric::HotUpdateShare)
            .and_then(Measure::as_share)
            .is_some_and(|share| share >= 0.9),
        "the claims, which write the indexed token, are few beside the renewals:\n{health}"
    );
}

#[test]
fn renewals_of_a_table_that_indexes_claimed_at_are_not_hot_and_the_health_says_so() {
    let _serial = horizon();
    let conn = &mut backend::connect();
    let (share, health) = renewals_hot_share(
        conn,
        "CREATE INDEX hot_jobs_claimed_at_idx ON hot_jobs (claimed_at)",
    );
    assert!(
        share < 0.05,
        "{:.1}% of the renewals were HOT:\n{health}",
        share * 100.0
    );
    let warning = health
        .warning(Metric::HotUpdateShare)
        .map(ToString::to_string);
    assert!(
        warning
            .as_deref()
            .is_some_and(|warning| warning.starts_with("hot_update_share is ")
                && warning.contains("past its threshold (at least 90.0%)")
                && warning.contains("keep claimed_at")),
        "{warning:?}\n{health}"
    );
}

diesel::table! {
    /// A table of a schema the connections' search_path does not name.
    health_schema.schema_jobs (id) {
        id -> BigInt,
    }
}

diesel::table! {
    /// The same table's name, unqualified: where the search_path looks, there is none.
    #[sql_name = "schema_jobs"]
    unqualified_schema_jobs (id) {
        id -> BigInt,
    }
}

#[test]
fn a_table_of_another_schema_is_read_by_its_qualified_name() {
    let conn = &mut connection();
    conn.batch_execute(
        "CREATE SCHEMA IF NOT EXISTS health_schema;
         DROP TABLE IF EXISTS health_schema.schema_jobs;
         CREATE TABLE health_schema.schema_jobs (id BIGINT PRIMARY KEY);
         INSERT INTO health_schema.schema_jobs (id) VALUES (1), (2);",
    )
    .unwrap();
    let health = unqualified_schema_jobs::table.health().run(conn);
    assert!(matches!(health, Err(Error::TableNotFound(_))), "{health:?}");
    let health = schema_jobs::table.health().run(conn).unwrap();
    assert_eq!(health.table(), "health_schema.schema_jobs");
    assert_eq!(
        health.get(Metric::Pages),
        Some(&Measure::Count(1)),
        "{health}"
    );
}
