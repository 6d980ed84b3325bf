// Releases of what a keeper keeps, included once per backend by tests/keeper.rs (and
// tests/pooler.rs) after scenarios/keeper.rs, whose helpers it uses: guarded by the token and
// run once, by a drop of the handle or of the keeper, retried after a failure, never held up by
// a round; and a claim handed back to the caller.

#[test]
fn a_kept_release_is_guarded_by_the_token_sets_the_callers_changes_and_runs_once_and_a_drop_releases(
) {
    let held = claimed(3, minute());
    let (claim, ids) = (held.claim(), held.keys().to_vec());
    let keeper = Keeper::start(backend::pool_of(2), fast(minute())).unwrap();
    let kept = keeper
        .keep(lease_jobs::table.held_rows(claim, ids[..2].to_vec()))
        .unwrap();
    let dropped = keeper
        .keep(lease_jobs::table.held_rows(claim, ids[2..].to_vec()))
        .unwrap();
    // Another claim of the same owner takes the first row over: the release must leave it to
    // its new holder, whose token is all that tells them apart.
    let rescuer = Claim::new(claim.owner()).unwrap();
    diesel::update(lease_jobs::table.find(&ids[0]))
        .set(lease_jobs::table.taken(&rescuer))
        .execute(&mut connection())
        .unwrap();

    let conn = &mut connection();
    let released = kept
        .release()
        .set(lease_jobs::status.eq("done"))
        .run(conn)
        .unwrap();
    assert_eq!(released, [ids[1].clone()], "the row the claim still held");
    assert!(
        kept.release().run(conn).unwrap().is_empty(),
        "never released twice"
    );
    drop(dropped);

    let (taken, done, dropped) = (job(conn, &ids[0]), job(conn, &ids[1]), job(conn, &ids[2]));
    assert_eq!(
        (taken.status.as_str(), taken.lease_token.as_deref()),
        ("running", Some(rescuer.token())),
        "the rescuer's row is untouched"
    );
    assert_eq!(
        (done.status.as_str(), done.lease_token),
        ("done", None),
        "released and done in one statement"
    );
    assert_eq!(
        (dropped.status.as_str(), dropped.lease_token),
        ("running", None),
        "released by the drop"
    );
}

#[test]
fn dropping_the_keeper_releases_what_it_keeps() {
    let held = claimed(2, minute());
    let keeper = Keeper::start(backend::pool_of(2), fast(minute())).unwrap();
    let kept = keeper.keep(&held).unwrap();

    drop(keeper);

    // A drop waits for its release up to a bound: under load the release may land just after.
    let conn = &mut connection();
    eventually("every row released when the keeper stopped", || {
        held.keys()
            .iter()
            .all(|id| job(conn, id).lease_token.is_none())
    });
    assert!(
        kept.release().run(conn).unwrap().is_empty(),
        "and never released twice"
    );
}

#[test]
fn a_claim_handed_back_stays_held_renewed_no_more_for_the_caller_to_finish() {
    let held = claimed(2, minute());
    let keeper = Keeper::start(backend::pool_of(2), fast(minute())).unwrap();
    let kept = keeper.keep(&held).unwrap();

    let handed_back = kept.stop_keeping();
    assert_eq!(
        (handed_back.claim(), handed_back.keys()),
        (held.claim(), held.keys()),
        "the claim and the rows it holds"
    );
    // Dated back: a keeper still renewing would make the rows fresh within a round.
    let conn = &mut connection();
    age_jobs(conn, held.keys(), Duration::from_secs(50));
    after_rounds(&keeper, 2);
    assert_eq!(fresh_within(held.keys(), 40), 0, "renewed no more");
    drop(keeper);
    let mut released = handed_back
        .release()
        .set(lease_jobs::status.eq("done"))
        .run(conn)
        .unwrap();
    released.sort();
    let mut ids = held.keys().to_vec();
    ids.sort();
    assert_eq!(
        released, ids,
        "still the claim's, released by neither the hand-back nor the keeper's stop"
    );
}

#[test]
fn a_kept_release_that_fails_stops_the_renewals_and_a_retry_still_releases() {
    let held = claimed(1, minute());
    let keeper = Keeper::start(backend::pool_of(2), fast(minute())).unwrap();
    let kept = keeper.keep(&held).unwrap();
    let conn = &mut connection();

    // The caller's part breaks the table's CHECK: the statement fails, and may as well have
    // committed unanswered.
    let failed = kept.release().set(lease_jobs::status.eq("bogus")).run(conn);
    assert!(failed.is_err(), "{failed:?}");
    // Renewed no more: dated back, the row stays so while the keeper makes rounds.
    age_jobs(conn, held.keys(), Duration::from_secs(50));
    after_rounds(&keeper, 2);
    assert_eq!(
        fresh_within(held.keys(), 40),
        0,
        "a renewal must not undo a release that may have landed"
    );
    assert_eq!(
        kept.release()
            .set(lease_jobs::status.eq("done"))
            .run(conn)
            .unwrap(),
        held.keys(),
        "still the claim's: the retry releases it"
    );
}

#[test]
fn a_release_is_not_held_up_by_a_round_waiting_for_the_keepers_only_connection() {
    let held = claimed(1, minute());
    // A pool whose checkout waits ten minutes: a round waiting for it outlasts the test.
    let pool = backend::pool_waiting(1, Duration::from_secs(600));
    let keeper = Keeper::start(pool.clone(), fast(minute())).unwrap();
    let kept = keeper.keep(&held).unwrap();
    let mut busy = pool.get().unwrap();
    // Ten renewal intervals: a round has begun, and waits for the connection the work holds.
    std::thread::sleep(Duration::from_millis(200));

    // The release runs on the work's connection; a round holding the claim's statement lock
    // while it waits for a connection would hold the release up for as long.
    let (answer, answered) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let released = kept.release().run(&mut *busy);
        let _ = answer.send(released.map_err(|error| error.to_string()));
    });
    match answered.recv_timeout(Duration::from_secs(30)) {
        Ok(released) => assert_eq!(released.unwrap(), held.keys()),
        Err(_) => {
            // Left to its round: dropping the keeper would wait for that round's ten minutes.
            std::mem::forget(keeper);
            panic!("the release waited for the keeper's round, which waits for the connection");
        }
    }
}
