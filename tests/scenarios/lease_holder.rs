// What a row's holder does with its claim, included once per backend by tests/lease.rs (and
// tests/pooler.rs) after scenarios/lease.rs, whose helpers it uses: renewals and releases,
// guarded by the token, that land for the holder alone.

#[test]
fn renewal_by_the_holder_moves_the_clock_forward() {
    let mut conn = connection();
    let id = queued_job(&mut conn);
    let worker = Claim::new("worker-1").unwrap();
    claim(&mut conn, &id, &worker, minute()).expect("claim");
    age(&mut conn, &id, Duration::from_secs(50));
    let before = job(&mut conn, &id).leased_at.expect("claimed");

    assert!(
        renew(&mut conn, &id, &worker),
        "the holder still holds the row"
    );

    let after = job(&mut conn, &id);
    assert!(after.leased_at.expect("claimed") >= before + chrono::Duration::seconds(49));
    assert_eq!(
        after.lease_token.as_deref(),
        Some(worker.token()),
        "whose claim it is is unchanged"
    );
    assert_eq!(after.worker.as_deref(), Some("worker-1"));
    let fresh: i64 = lease_jobs::table
        .find(&id)
        .filter(lease_jobs::table.fresh(Lease::from_secs(20).unwrap()))
        .count()
        .get_result(&mut *conn)
        .unwrap();
    assert_eq!(fresh, 1, "a renewed lease is fresh again");
}

#[test]
fn renewal_or_release_by_anyone_else_changes_nothing_and_says_so() {
    let mut conn = connection();
    let id = queued_job(&mut conn);
    let (holder, stranger) = (
        Claim::new("worker-1").unwrap(),
        Claim::new("worker-1").unwrap(),
    );
    claim(&mut conn, &id, &holder, minute()).expect("claim");
    age(&mut conn, &id, Duration::from_secs(30));
    let before = job(&mut conn, &id);

    assert!(
        !renew(&mut conn, &id, &stranger),
        "a renewal by another token reports it does not hold the row"
    );
    assert!(
        !finish(&mut conn, &id, &stranger),
        "a release by another token reports it does not hold the row"
    );

    assert_eq!(
        job(&mut conn, &id),
        before,
        "nothing changed: the same owner even matches, only the token counts"
    );
}

#[test]
fn a_holder_whose_lease_was_taken_over_can_change_nothing() {
    let mut conn = connection();
    let id = queued_job(&mut conn);
    let (slow, rescuer) = (
        Claim::new("worker-slow").unwrap(),
        Claim::new("worker-2").unwrap(),
    );
    claim(&mut conn, &id, &slow, minute()).expect("claim");
    age(&mut conn, &id, Duration::from_secs(120));
    claim(&mut conn, &id, &rescuer, minute()).expect("take over");

    assert!(
        !renew(&mut conn, &id, &slow),
        "the late holder learns at once that it lost the row"
    );
    assert!(!finish(&mut conn, &id, &slow));
    let written = lease_jobs::table
        .held_rows(&slow, vec![id.clone()])
        .update()
        .set(lease_jobs::status.eq("queued"))
        .run(&mut *conn)
        .unwrap();
    assert!(written.is_empty(), "nor does its own write land");
    let row = job(&mut conn, &id);
    assert_eq!(row.status, "running");
    assert_eq!(row.lease_token.as_deref(), Some(rescuer.token()));
    assert!(finish(&mut conn, &id, &rescuer));
    assert_eq!(job(&mut conn, &id).status, "done");
}

#[test]
fn release_frees_the_row_for_anyone() {
    let mut conn = connection();
    let id = queued_job(&mut conn);
    let worker = Claim::new("worker-1").unwrap();
    claim(&mut conn, &id, &worker, minute()).expect("claim");

    assert!(finish(&mut conn, &id, &worker));

    let row = job(&mut conn, &id);
    assert_eq!(
        (row.worker, row.lease_token, row.leased_at),
        (None, None, None)
    );
    let unclaimed: i64 = lease_jobs::table
        .find(&id)
        .filter(lease_jobs::table.unclaimed())
        .count()
        .get_result(&mut *conn)
        .unwrap();
    assert_eq!(unclaimed, 1);
    assert!(claim(&mut conn, &id, &Claim::new("worker-2").unwrap(), minute()).is_some());
}
