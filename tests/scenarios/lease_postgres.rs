// PostgreSQL only, included by tests/lease.rs beside the shared scenarios.
use crate::common::postgres::waits_for_a_lock;

#[derive(QueryableByName)]
struct TransactionStart {
    #[diesel(sql_type = diesel::sql_types::Timestamptz)]
    started: chrono::DateTime<chrono::Utc>,
}

#[test]
fn a_claim_late_in_a_transaction_carries_the_time_it_was_taken() {
    let mut conn = connection();
    let id = queued_job(&mut conn);

    let (started, claimed) = conn
        .transaction::<_, diesel::result::Error, _>(|conn| {
            let start: TransactionStart =
                diesel::sql_query("SELECT now() AS started").get_result(conn)?;
            diesel::sql_query("SELECT pg_sleep(0.5)").execute(conn)?;
            let row = claim(conn, &id, &Claim::new("late").unwrap(), minute()).expect("claim");
            Ok((start.started, row.leased_at.expect("claimed")))
        })
        .unwrap();

    let late = claimed - started;
    assert!(
        late >= chrono::Duration::milliseconds(450),
        "claimed_at is the statement's time, not the transaction's start (now()): {late}"
    );
}

#[derive(QueryableByName)]
struct Prepared {
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    updates: i64,
}

fn prepared_updates(conn: &mut backend::Conn) -> i64 {
    diesel::sql_query(
        "SELECT count(*) AS updates FROM pg_prepared_statements WHERE statement LIKE 'UPDATE%'",
    )
    .get_result::<Prepared>(conn)
    .unwrap()
    .updates
}

#[test]
fn a_lease_update_is_prepared_once_per_connection() {
    let mut shared = connection();
    let mut conn = backend::connect();
    let ids: Vec<String> = (0..5).map(|_| queued_job(&mut shared)).collect();

    for id in &ids {
        assert!(claim(&mut conn, id, &Claim::new("worker").unwrap(), minute()).is_some());
    }
    assert_eq!(
        prepared_updates(&mut conn),
        1,
        "five claims, one prepared statement"
    );

    for id in &ids {
        diesel::update(lease_jobs::table.find(id))
            .set(lease_jobs::table.released())
            .execute(&mut conn)
            .unwrap();
    }
    assert_eq!(
        prepared_updates(&mut conn),
        1,
        "diesel::update prepares anew each time, keeping nothing"
    );
}

#[test]
fn a_claim_that_loses_a_serialization_conflict_is_refused_not_an_error() {
    use diesel::connection::SimpleConnection;
    let mut conn = connection();
    let id = queued_job(&mut conn);
    // A claimer whose statements run at REPEATABLE READ: a row changed by a transaction that
    // commits after the claim's snapshot is a serialization failure (40001), not a wait.
    let mut claimer = backend::connect();
    claimer
        .batch_execute("SET default_transaction_isolation = 'repeatable read'")
        .unwrap();
    let pid: i32 = diesel::select(diesel::dsl::sql::<diesel::sql_types::Integer>(
        "pg_backend_pid()",
    ))
    .get_result(&mut claimer)
    .unwrap();
    let mut holder = backend::connect();
    holder.batch_execute("BEGIN").unwrap();
    diesel::update(lease_jobs::table.find(&id))
        .set(lease_jobs::status.eq("queued"))
        .execute(&mut holder)
        .unwrap();

    let outcome = std::thread::scope(|scope| {
        let claim = scope.spawn(|| {
            lease_jobs::table
                .claim_row(id.as_str(), minute())
                .by(&Claim::new("worker-1").unwrap())
                .run::<Job>(&mut claimer)
        });
        // Commit only once the claim waits on the holder's row lock.
        waits_for_a_lock(&mut conn, pid);
        holder.batch_execute("COMMIT").unwrap();
        claim.join().unwrap()
    });

    let outcome = outcome.expect("a lost serialization conflict is no error");
    assert!(!outcome.is_won(), "and it claimed nothing");
    assert_eq!(job(&mut conn, &id).lease_token, None);
}

#[test]
fn a_connection_set_up_for_a_transaction_pooler_prepares_no_named_statement() {
    let mut shared = connection();
    let mut conn = backend::connect();
    diesel_lease::pg::PgTransactionPooling::default().apply(&mut conn);
    let id = queued_job(&mut shared);

    let worker = Claim::new("worker").unwrap();
    assert!(claim(&mut conn, &id, &worker, minute()).is_some());
    assert!(renew(&mut conn, &id, &worker));
    assert_eq!(
        prepared_updates(&mut conn),
        0,
        "nothing a pooler could send to another server connection"
    );
}

#[test]
fn a_key_list_is_prepared_once_for_each_power_of_two_of_its_length() {
    let mut shared = connection();
    let mut conn = backend::connect();
    let release = |conn: &mut backend::Conn, keys: Vec<String>| {
        let claim = Claim::new("nobody").unwrap();
        lease_jobs::table
            .held_rows(&claim, keys)
            .release()
            .run(conn)
            .unwrap()
    };
    let keys: Vec<String> = (0..5).map(|_| queued_job(&mut shared)).collect();

    release(&mut conn, keys[..3].to_vec());
    release(&mut conn, keys[..4].to_vec());
    assert_eq!(
        prepared_updates(&mut conn),
        1,
        "3 and 4 keys: one statement of 4 binds"
    );
    release(&mut conn, keys[..3].to_vec());
    assert_eq!(prepared_updates(&mut conn), 1, "found again by its text");
    release(&mut conn, keys.clone());
    assert_eq!(
        prepared_updates(&mut conn),
        2,
        "5 keys: a statement of 8 binds"
    );
}
