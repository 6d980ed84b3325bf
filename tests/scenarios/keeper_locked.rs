// A row another transaction holds locked, included for PostgreSQL and MySQL/MariaDB by
// tests/keeper.rs (on SQLite a writer locks the whole database: a round waits for it as every
// write does, up to the busy timeout). A worker that updates its own job row in a transaction
// of its own and keeps it open must delay no other claim's renewal.

#[test]
fn a_row_locked_by_a_workers_open_transaction_delays_no_other_claims_renewal() {
    use diesel::connection::SimpleConnection;

    let (locked_claim, free_claim) = (claimed(1, minute()), claimed(1, minute()));
    let (locked_id, free_id) = (locked_claim.keys()[0].clone(), free_claim.keys()[0].clone());
    let keeper = Keeper::start(backend::pool_of(2), fast(minute())).unwrap();
    let locked = keeper.keep(&locked_claim).unwrap();
    let free = keeper.keep(&free_claim).unwrap();

    let mut worker = connection();
    worker.batch_execute("BEGIN").unwrap();
    diesel::update(lease_jobs::table.find(&locked_id))
        .set(lease_jobs::status.eq("running"))
        .execute(&mut worker)
        .unwrap();
    // The free row dated back: only a round that renews it makes it fresh within 40 s again.
    age_jobs(
        &mut connection(),
        std::slice::from_ref(&free_id),
        Duration::from_secs(50),
    );
    let locked_since = job(&mut connection(), &locked_id).leased_at;
    // Rounds go on: one that waited for the worker's row would never end while it is open.
    after_rounds(&keeper, 5);
    assert_eq!(
        fresh_within(std::slice::from_ref(&free_id), 40),
        1,
        "renewed all along"
    );
    assert_eq!(
        job(&mut connection(), &locked_id).leased_at,
        locked_since,
        "passed over, not renewed"
    );
    assert!(free.check().is_ok() && locked.is_held(), "both still held");
    // The round in flight as the worker took its lock may have renewed the row before it.
    assert!(keeper.stats().rows_passed_over >= 4, "{}", keeper.stats());

    worker.batch_execute("ROLLBACK").unwrap();
    age_jobs(
        &mut connection(),
        std::slice::from_ref(&locked_id),
        Duration::from_secs(50),
    );
    after_rounds(&keeper, 2);
    assert_eq!(
        fresh_within(&[locked_id, free_id], 40),
        2,
        "the locked row renewed once the lock went"
    );
    assert!(locked.check().is_ok() && free.check().is_ok());
}
