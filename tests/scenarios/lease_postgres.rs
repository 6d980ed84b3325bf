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
