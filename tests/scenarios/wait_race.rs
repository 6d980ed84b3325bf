// A release that lands between a refused claim and its read, on purpose: included after
// scenarios/wait.rs, whose helpers it uses, by tests/wait.rs and tests/pooler.rs.
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// Fails with: the read of why taking a free row of a filtered claim to be refused by the
/// filter, whether the filter takes it or not: the waiter gives up at once, `NotClaimable`, on a
/// row it could win.
#[test]
fn a_release_between_a_refused_claim_and_its_read_is_read_as_freed_and_the_waiter_wins() {
    let conn = &mut connection();
    let id = queued_job(conn);
    let holder = held(conn, &id, "holder", minute());
    let released = Arc::new(AtomicBool::new(false));
    let mut waiting = backend::connect();
    let (mut holders, told) = (backend::connect(), Arc::clone(&released));
    // Queued again, as a holder done with its turn leaves it.
    waiting.set_instrumentation(BeforeTheRead::new(move || {
        let release = holder.release().set(lease_jobs::status.eq("queued"));
        assert!(release.run(&mut holders).unwrap(), "the holder released");
        told.store(true, Ordering::SeqCst);
    }));

    // Rechecking every 10 min: what the waiter wins soon, it wins on the reading of its first
    // refusal, which must say freed since the claim, and the filter takes it.
    let waiter = std::thread::spawn(move || {
        wait_for(
            &mut waiting,
            &id,
            LONGER_THAN_PATIENCE,
            LONGER_THAN_PATIENCE,
        )
    });
    let claimed = finished(waiter, "the wait's outcome").unwrap();

    assert!(released.load(Ordering::SeqCst), "released before the read");
    let won = claimed
        .won()
        .expect("the waiter won the row freed before its read");
    assert_eq!(won.row().worker.as_deref(), Some("waiter"));
    assert_eq!(won.row().status, "running");
}
