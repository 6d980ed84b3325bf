// The generated lease columns' scenarios, included once per backend by tests/lease_columns.rs:
// each migration is written to disk and read back by diesel_migrations, as `diesel migration
// run` would, onto a plain table the test makes anew.
use std::path::PathBuf;

use diesel::connection::SimpleConnection;
use diesel::migration::{Migration, MigrationSource};
use diesel::prelude::*;
use diesel_lease::__private::sql::MicrosSince;
use diesel_lease::prelude::*;
use diesel_lease::{ClaimIndex, Error, LeaseColumns};
use diesel_migrations::FileBasedMigrations;

use crate::common::unique_id;

type Backend = <backend::Conn as Connection>::Backend;
type Pooled = diesel::r2d2::PooledConnection<diesel::r2d2::ConnectionManager<backend::Conn>>;

diesel::table! {
    use diesel::sql_types::*;
    use diesel_lease::sql_types::UtcTimestamp;

    ddl_jobs (id) {
        id -> BigInt,
        status -> Text,
        worker -> Nullable<Text>,
        lease_token -> Nullable<Text>,
        leased_at -> Nullable<UtcTimestamp>,
        // A reserved word on every backend: only a quoted name makes the DDL valid.
        order -> BigInt,
    }
}

diesel_lease::claim_lease!(ddl_jobs {
    owner: worker,
    claim_token: lease_token,
    claimed_at: leased_at,
    fence: order,
});

diesel::table! {
    use diesel::sql_types::*;
    use diesel_lease::sql_types::UtcTimestamp;

    ddl_tasks (id) {
        id -> BigInt,
        status -> Text,
        owner -> Nullable<Text>,
        claim_token -> Nullable<Text>,
        claimed_at -> Nullable<UtcTimestamp>,
    }
}

diesel_lease::claim_lease!(ddl_tasks);

diesel::table! {
    use diesel::sql_types::*;
    use diesel_lease::sql_types::UtcTimestamp;

    ddl_queue (id) {
        id -> BigInt,
        status -> Text,
        owner -> Nullable<Text>,
        claim_token -> Nullable<Text>,
        claimed_at -> Nullable<UtcTimestamp>,
    }
}

diesel_lease::claim_lease!(ddl_queue);

/// A line of a plan: the backend's [`backend::PLAN_COLUMNS`] that are not NULL.
struct PlanLine(String);

impl QueryableByName<Backend> for PlanLine {
    fn build<'a>(
        row: &impl diesel::row::NamedRow<'a, Backend>,
    ) -> diesel::deserialize::Result<Self> {
        let mut parts = Vec::new();
        for column in backend::PLAN_COLUMNS {
            let value = diesel::row::NamedRow::get::<
                diesel::sql_types::Nullable<diesel::sql_types::Text>,
                Option<String>,
            >(row, column)?;
            parts.extend(value);
        }
        Ok(PlanLine(parts.join(" ")))
    }
}

/// What the catalog says index `name` covers (its definition, or its columns), if it exists.
fn index_definition(conn: &mut backend::Conn, name: &str) -> Option<String> {
    #[derive(QueryableByName)]
    struct Index {
        #[diesel(sql_type = diesel::sql_types::Text)]
        definition: String,
    }
    diesel::sql_query(backend::INDEX_DEFINITION)
        .bind::<diesel::sql_types::Text, _>(name)
        .get_result::<Index>(conn)
        .optional()
        .expect("the catalog")
        .map(|index| index.definition)
}

/// Each named column of `$table` is gone: a statement that names it fails.
macro_rules! assert_dropped {
    ($conn:expr, $table:ident: $($column:ident),+) => {$(
        let kept = diesel::update($table::table).set($table::$column.eq($table::$column)).execute($conn);
        assert!(kept.is_err(), "{} is dropped", stringify!($column));
    )+};
}

/// A pooled connection and a plain `table` made anew, with three queued rows and no lease
/// column.
fn plain_table(table: &str) -> Pooled {
    let mut conn = backend::pool().get().expect("a pooled connection");
    conn.batch_execute(&format!(
        "DROP TABLE IF EXISTS {table};
         CREATE TABLE {table} (id BIGINT PRIMARY KEY, status VARCHAR(16) NOT NULL);
         INSERT INTO {table} (id, status) VALUES (1, 'queued'), (2, 'queued'), (3, 'queued');"
    ))
    .expect("a plain table");
    conn
}

/// The migration of `columns` on this backend, written to a directory of its own and read back
/// by diesel_migrations; the directory is for the caller to remove.
fn written(columns: &LeaseColumns) -> (Box<dyn Migration<Backend>>, PathBuf) {
    let dir = std::env::temp_dir().join(unique_id("lease-migrations"));
    columns
        .write_migration::<Backend>(&dir, "2026-11-30-000000_lease_columns")
        .expect("valid names, written");
    let source = FileBasedMigrations::from_path(&dir).expect("a migrations directory");
    let mut migrations = MigrationSource::<Backend>::migrations(&source).expect("readable");
    assert_eq!(migrations.len(), 1);
    (migrations.pop().expect("one migration"), dir)
}

fn minute() -> Lease {
    Lease::from_secs(60).expect("lease")
}

#[test]
fn the_migration_adds_columns_that_claim_release_and_fence_and_drops_them_again() {
    let mut conn = plain_table("ddl_jobs");
    let conn = &mut *conn;
    let columns = LeaseColumns::new("ddl_jobs")
        .owner("worker")
        .claim_token("lease_token")
        .claimed_at("leased_at")
        .fence("order");
    let (migration, dir) = written(&columns);
    migration.run(conn).expect("up.sql");
    let index = index_definition(conn, "ddl_jobs_lease_token_idx");
    assert!(
        index.as_deref().is_some_and(|index| index
            .replace("ddl_jobs_lease_token_idx", "")
            .contains("lease_token")),
        "up.sql made the token's index, on the token: {index:?}"
    );

    let outcome = ddl_jobs::table
        .claim_row(1, minute())
        .by(&Claim::new("worker-1").unwrap())
        .set(ddl_jobs::status.eq("running"))
        .returning(ddl_jobs::id)
        .run::<i64>(conn)
        .unwrap();
    let won = outcome.won().expect("a row without a claim is free");
    assert_eq!(won.fence(), 1, "the fence starts at 0");
    assert!(won
        .release()
        .set(ddl_jobs::status.eq("queued"))
        .run(conn)
        .unwrap());

    let batch = ddl_jobs::table
        .claim_batch(10, minute())
        .by(&Claim::new("worker-2").unwrap())
        .set(ddl_jobs::status.eq("running"))
        .returning((ddl_jobs::id, ddl_jobs::order))
        .run::<(i64, i64)>(conn)
        .unwrap();
    let mut fences = batch.rows().to_vec();
    fences.sort();
    assert_eq!(fences, [(1, 2), (2, 1), (3, 1)], "every take counts");
    let mut done = batch
        .release()
        .set(ddl_jobs::status.eq("done"))
        .run(conn)
        .unwrap();
    done.sort();
    assert_eq!(done, [1, 2, 3]);

    migration.revert(conn).expect("down.sql");
    assert_dropped!(conn, ddl_jobs: worker, lease_token, leased_at, order);
    assert_eq!(
        index_definition(conn, "ddl_jobs_lease_token_idx"),
        None,
        "down.sql dropped the index"
    );
    // The migration applies and reverts again.
    migration.run(conn).expect("up.sql again");
    migration.revert(conn).expect("down.sql again");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn the_default_columns_hold_exact_tokens_and_utc_whatever_the_session_time_zone() {
    let mut conn = plain_table("ddl_tasks");
    let conn = &mut *conn;
    let (migration, dir) = written(&LeaseColumns::new("ddl_tasks"));
    migration.run(conn).expect("up.sql");

    // Taken in a far time zone, read in the pool's: claimed_at is the same instant to both.
    let holder = Claim::with_token("worker-1", &unique_id("Token")).unwrap();
    let outcome = ddl_tasks::table
        .claim_row(2, minute())
        .by(&holder)
        .returning(ddl_tasks::id)
        .run::<i64>(&mut backend::connect_in_far_time_zone())
        .unwrap();
    assert!(outcome.is_won());
    let age: Option<i64> = ddl_tasks::table
        .find(2_i64)
        .select(MicrosSince::new(ddl_tasks::claimed_at))
        .first(conn)
        .unwrap();
    let hour = 3_600_000_000;
    assert!(
        age.is_some_and(|age| age.abs() < hour),
        "claimed {age:?} µs ago, not hours"
    );

    let impostor = Claim::with_token("worker-1", &holder.token().to_lowercase()).unwrap();
    let released = ddl_tasks::table
        .held_rows(&impostor, vec![2])
        .release()
        .run(conn)
        .unwrap();
    assert!(
        released.is_empty(),
        "a token that differs in case holds nothing"
    );
    let released = ddl_tasks::table
        .held_rows(&holder, vec![2])
        .release()
        .run(conn)
        .unwrap();
    assert_eq!(released, [2]);

    migration.revert(conn).expect("down.sql");
    assert_dropped!(conn, ddl_tasks: owner, claim_token, claimed_at);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn names_that_are_not_plain_identifiers_are_refused() {
    let refused = |columns: LeaseColumns| {
        matches!(
            columns.up_sql::<Backend>(),
            Err(Error::InvalidIdentifier(_))
        )
    };
    assert!(refused(LeaseColumns::new("")), "an empty table name");
    assert!(
        refused(LeaseColumns::new("jobs").owner("")),
        "an empty column name"
    );
    assert!(
        refused(LeaseColumns::new("public.jobs")),
        "a qualified name"
    );
    assert!(refused(LeaseColumns::new("1jobs")), "a leading digit");
    assert!(refused(LeaseColumns::new("jobs").claimed_at("leased at")));
    assert!(refused(
        LeaseColumns::new("jobs").claim_token("t\"; DROP TABLE jobs; --")
    ));
    assert!(refused(LeaseColumns::new("jobs").claim_token("t`")));
    assert!(refused(LeaseColumns::new("jöbs")), "non-ASCII");
    assert!(
        refused(LeaseColumns::new("j".repeat(64))),
        "longer than PostgreSQL's 63"
    );
    assert!(
        refused(LeaseColumns::new("j".repeat(40)).claim_token("t".repeat(20))),
        "the index's name, jjj.._ttt.._idx, is longer than 63"
    );
    assert!(!refused(
        LeaseColumns::new("j".repeat(40)).claim_token("t".repeat(18))
    ));
}

#[test]
fn two_lease_columns_of_one_name_are_refused() {
    let refused = |columns: LeaseColumns| {
        matches!(
            columns.up_sql::<Backend>(),
            Err(Error::InvalidIdentifier(_))
        )
    };
    assert!(refused(LeaseColumns::new("jobs").owner("claim_token")));
    assert!(refused(LeaseColumns::new("jobs").claimed_at("owner")));
    assert!(refused(LeaseColumns::new("jobs").claimed_at("claim_token")));
    assert!(
        refused(LeaseColumns::new("jobs").fence("Claimed_At")),
        "alike, ignoring case"
    );
    assert!(!refused(LeaseColumns::new("jobs").fence("fence")));
}

#[test]
fn a_bad_migration_name_or_an_existing_migration_writes_nothing() {
    let dir = std::env::temp_dir().join(unique_id("lease-migrations"));
    let columns = LeaseColumns::new("jobs");
    for name in ["", "..", "../escape", "a/b", "with space"] {
        let written = columns.write_migration::<Backend>(&dir, name);
        assert!(
            matches!(written, Err(Error::InvalidMigrationName(_))),
            "{name:?}"
        );
    }
    assert!(!dir.exists(), "nothing written");

    let path = columns
        .write_migration::<Backend>(&dir, "2026-11-30-000000_lease_columns")
        .unwrap();
    assert_eq!(
        std::fs::read_to_string(path.join("down.sql")).unwrap(),
        columns.down_sql::<Backend>().unwrap()
    );
    std::fs::write(path.join("up.sql"), "-- edited").unwrap();
    let again = columns.write_migration::<Backend>(&dir, "2026-11-30-000000_lease_columns");
    assert!(matches!(again, Err(Error::MigrationFiles(_))));
    assert_eq!(
        std::fs::read_to_string(path.join("up.sql")).unwrap(),
        "-- edited",
        "never overwritten"
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn the_claim_index_is_the_one_a_claim_of_queued_rows_in_key_order_reads() {
    let mut conn = plain_table("ddl_queue");
    let conn = &mut *conn;
    // 20,000 jobs, the oldest 90% of them done and kept, as a queue keeps them.
    let values: Vec<String> = (4..=20_000)
        .map(|id| format!("({id}, '{}')", if id <= 18_000 { "done" } else { "queued" }))
        .collect();
    conn.batch_execute(&format!(
        "UPDATE ddl_queue SET status = 'done'; INSERT INTO ddl_queue (id, status) VALUES {}",
        values.join(", ")
    ))
    .unwrap();
    let columns =
        LeaseColumns::new("ddl_queue").claim_index(ClaimIndex::rows_where("status", "queued"));
    let (migration, dir) = written(&columns);
    migration.run(conn).expect("up.sql");
    let index = index_definition(conn, "ddl_queue_claimable_idx").expect("up.sql made it");
    assert!(
        index.contains("status") && index.contains("id"),
        "on the key, over the queued rows: {index}"
    );
    conn.batch_execute(&format!("{} ddl_queue", backend::ANALYZE))
        .unwrap();

    // The read a claim of queued rows in key order makes of its candidates.
    let plan: Vec<String> = diesel::sql_query(format!(
        "{} SELECT id FROM ddl_queue WHERE status = 'queued' \
         AND (claim_token IS NULL OR claimed_at IS NULL) ORDER BY id LIMIT 10",
        backend::EXPLAIN
    ))
    .load::<PlanLine>(conn)
    .unwrap()
    .into_iter()
    .map(|line| line.0)
    .collect();
    assert!(
        plan.iter()
            .any(|line| line.contains("ddl_queue_claimable_idx")),
        "the claim's read goes through the claim index: {plan:?}"
    );
    let batch = ddl_queue::table
        .claim_batch(10, minute())
        .by(&Claim::new("worker").unwrap())
        .filter(ddl_queue::status.eq("queued"))
        .order_by(ddl_queue::id)
        .set(ddl_queue::status.eq("running"))
        .returning(ddl_queue::id)
        .run::<i64>(conn)
        .unwrap();
    let mut claimed = batch.keys().to_vec();
    claimed.sort();
    assert_eq!(
        claimed,
        (18_001..=18_010).collect::<Vec<_>>(),
        "the first queued jobs"
    );

    migration.revert(conn).expect("down.sql");
    assert_eq!(
        index_definition(conn, "ddl_queue_claimable_idx"),
        None,
        "down.sql dropped it"
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_claim_index_of_names_or_a_value_that_are_not_plain_is_refused() {
    for index in [
        ClaimIndex::rows_where("status", "it's"),
        ClaimIndex::rows_where("status", "back\\slash"),
        ClaimIndex::rows_where("status", ""),
        ClaimIndex::rows_where("sta tus", "queued"),
        ClaimIndex::rows_where("status", "queued").in_order_of("id; DROP TABLE x"),
    ] {
        let refused = LeaseColumns::new("ddl_queue")
            .claim_index(index.clone())
            .up_sql::<Backend>();
        assert!(
            matches!(refused, Err(Error::InvalidIdentifier(_))),
            "{index:?}: {refused:?}"
        );
    }
}
