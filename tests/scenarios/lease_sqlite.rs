// SQLite only, included by tests/lease.rs beside the shared scenarios: a writer locks the whole
// database there, where the servers lock rows.

#[test]
fn a_sqlite_lock_held_past_the_busy_timeout_is_a_typed_retryable_error() {
    use diesel::connection::SimpleConnection;
    let id = queued_job(&mut connection());
    let mut writer = backend::connect();
    let mut impatient = backend::connect();
    impatient.batch_execute("PRAGMA busy_timeout = 50").unwrap();
    writer.batch_execute("BEGIN IMMEDIATE").unwrap();

    let result = lease_jobs::table
        .claim_row(id.as_str(), minute())
        .by(&Claim::new("w").unwrap())
        .run::<Job>(&mut impatient);

    writer.batch_execute("ROLLBACK").unwrap();
    let error = result.expect_err("the database is locked");
    assert!(
        matches!(error, Error::Busy(_)) && error.is_retryable(),
        "{error:?}"
    );
    assert!(
        claim(&mut impatient, &id, &Claim::new("w").unwrap(), minute()).is_some(),
        "a retry succeeds"
    );
}
