// PostgreSQL only, included by tests/lease.rs beside the shared scenarios.

#[derive(QueryableByName)]
struct TransactionStart {
    #[diesel(sql_type = diesel::sql_types::Timestamptz)]
    started: chrono::DateTime<chrono::Utc>,
}

#[test]
fn a_claim_late_in_a_transaction_carries_the_time_it_was_taken() {
    let Some(mut conn) = connection() else { return };
    let id = queued_job(&mut conn);

    let (started, claimed) = conn
        .transaction::<_, diesel::result::Error, _>(|conn| {
            let start: TransactionStart = diesel::sql_query("SELECT now() AS started").get_result(conn)?;
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
    diesel::sql_query("SELECT count(*) AS updates FROM pg_prepared_statements WHERE statement LIKE 'UPDATE%'")
        .get_result::<Prepared>(conn)
        .unwrap()
        .updates
}

#[test]
fn a_lease_update_is_prepared_once_per_connection() {
    let Some(mut shared) = connection() else { return };
    let mut conn = backend::connect();
    let ids: Vec<String> = (0..5).map(|_| queued_job(&mut shared)).collect();

    for id in &ids {
        assert!(claim(&mut conn, id, &Claim::new("worker").unwrap(), minute()).is_some());
    }
    assert_eq!(prepared_updates(&mut conn), 1, "five claims, one prepared statement");

    for id in &ids {
        diesel::update(lease_jobs::table.find(id)).set(lease_jobs::table.released()).execute(&mut conn).unwrap();
    }
    assert_eq!(prepared_updates(&mut conn), 1, "diesel::update prepares anew each time, keeping nothing");
}
