// Drops that never block past their bound, included once per backend by tests/keeper.rs: a
// release that waits for a row another transaction holds (on SQLite, for the database's one
// writer) goes on alone, and the rows free once it lands.
use diesel::connection::SimpleConnection;

/// A keeper whose drops wait 100 ms at the most, renewing every 20 s: no round runs meanwhile.
fn dropping_within_100_ms() -> KeeperSettings {
    KeeperSettings::new(minute())
        .every(Duration::from_secs(20))
        .drop_within(Duration::from_millis(100))
}

/// A connection in an open transaction that has written the jobs `ids`: it holds their row
/// locks (on SQLite, the write lock) until it rolls back.
fn blocking(ids: &[String]) -> Pooled {
    let mut blocker = connection();
    blocker.batch_execute(backend::BEGIN_WRITE).unwrap();
    diesel::update(lease_jobs::table.filter(lease_jobs::id.eq_any(ids)))
        .set(lease_jobs::status.eq("running"))
        .execute(&mut blocker)
        .unwrap();
    blocker
}

/// Runs `work` on a thread of its own; fails unless it returns within 10 s, far past the bound
/// of the drops it runs and far short of the lock wait (unbounded on PostgreSQL, 50 s on MariaDB,
/// the suite's 30 s busy timeout on SQLite) a drop that blocked would sit in.
fn returns(what: &str, work: impl FnOnce() + Send + 'static) {
    let (done, returned) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        work();
        let _ = done.send(());
    });
    assert!(
        returned.recv_timeout(Duration::from_secs(10)).is_ok(),
        "{what} blocked on the locked rows"
    );
}

/// Whether nobody holds the job `id`.
fn free(id: &str) -> bool {
    job(&mut connection(), id).leased_at.is_none()
}

#[test]
fn dropping_a_kept_claim_and_its_keeper_returns_while_their_release_waits_for_a_lock() {
    let (first, second) = (claimed(1, minute()), claimed(1, minute()));
    let ids = [first.keys()[0].clone(), second.keys()[0].clone()];
    let keeper = Keeper::start(backend::pool_of(3), dropping_within_100_ms()).unwrap();
    let (first, second) = (keeper.keep(&first).unwrap(), keeper.keep(&second).unwrap());

    let mut blocker = blocking(&ids);
    returns("dropping a kept claim", move || drop(first));
    returns("dropping the keeper", move || drop(keeper));
    assert!(
        !free(&ids[0]) && !free(&ids[1]),
        "the releases wait for the lock"
    );

    blocker.batch_execute("ROLLBACK").unwrap();
    // The handle hears of its release once the statement returns, a moment after the row frees.
    eventually(
        "both releases land once the lock goes, and the handle says so",
        || free(&ids[0]) && free(&ids[1]) && !second.is_held(),
    );
}

#[test]
fn a_shutdown_that_cannot_finish_in_time_says_so_and_its_releases_land_later() {
    let held = claimed(2, minute());
    let ids = held.keys().to_vec();
    let keeper = Keeper::start(backend::pool_of(3), dropping_within_100_ms()).unwrap();
    let kept = keeper.keep(&held).unwrap();

    let mut blocker = blocking(&ids);
    let (answer, stopped) = std::sync::mpsc::channel();
    returns("a shutdown within 100 ms", move || {
        let _ = answer.send(keeper.shutdown(Duration::from_millis(100)));
    });
    let stopped = stopped.recv().unwrap();
    assert!(
        matches!(stopped, Err(diesel_lease::Error::StopTimedOut(_))),
        "{stopped:?}"
    );
    assert!(!free(&ids[0]), "the drain waits for the lock");

    blocker.batch_execute("ROLLBACK").unwrap();
    eventually(
        "the drain lands once the lock goes, and the handle says so",
        || ids.iter().all(|id| free(id)) && !kept.is_held(),
    );
}
