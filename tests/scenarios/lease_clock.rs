// A lease by the database's clock, included once per backend by tests/lease.rs (and
// tests/pooler.rs) after scenarios/lease.rs, whose helpers it uses: fresh, outlived and
// claimable, a sub-second lease, a claim dated back, a session in a far time zone, and a table
// whose timestamp is the backend's own type.

#[test]
fn outlived_says_nothing_of_an_unclaimed_row() {
    let mut conn = connection();
    let id = queued_job(&mut conn);
    let lease = Lease::from_millis(1).unwrap();
    let matching = |conn: &mut backend::Conn, outlived: bool| -> i64 {
        let query = lease_jobs::table.find(&id);
        if outlived {
            query
                .filter(lease_jobs::table.outlived(lease))
                .count()
                .get_result(conn)
                .unwrap()
        } else {
            query
                .filter(lease_jobs::table.fresh(lease))
                .count()
                .get_result(conn)
                .unwrap()
        }
    };

    assert_eq!(matching(&mut conn, true), 0, "NULL is not outlived");
    assert_eq!(matching(&mut conn, false), 0, "NULL is not fresh either");
    let claimable: i64 = lease_jobs::table
        .find(&id)
        .filter(lease_jobs::table.claimable(lease))
        .count()
        .get_result(&mut *conn)
        .unwrap();
    assert_eq!(
        claimable, 1,
        "claimable is the common answer: unclaimed or outlived"
    );
}

#[test]
fn a_sub_second_lease_expires_in_real_time() {
    let mut conn = connection();
    let id = queued_job(&mut conn);
    let lease = Lease::from_millis(150).unwrap();
    claim(&mut conn, &id, &Claim::new("worker-1").unwrap(), lease).expect("claim");
    let rival = Claim::new("worker-2").unwrap();
    assert_eq!(
        claim(&mut conn, &id, &rival, Lease::from_secs(10).unwrap()),
        None
    );

    std::thread::sleep(Duration::from_millis(400));

    assert!(
        claim(&mut conn, &id, &rival, lease).is_some(),
        "150 ms later, by the database's clock, it is outlived"
    );
}

#[test]
fn a_claim_dated_back_blocks_others_only_for_what_is_left_of_the_lease() {
    let mut conn = connection();
    let id = queued_job(&mut conn);
    let worker = Claim::new("clicker").unwrap();
    let lease = minute();
    let hold = Lease::from_secs(5).unwrap();
    let age = lease.checked_sub(hold).expect("hold within lease");
    diesel::update(lease_jobs::table.find(&id))
        .set(lease_jobs::table.taken_ago(&worker, age))
        .execute(&mut *conn)
        .unwrap();

    // Dated 55 s back by the database's clock: a claim under a lease of 56 s finds it fresh,
    // one under 54 s finds it outlived. No row is aged: what is measured is the claim's own date.
    let rival = Claim::new("worker-2").unwrap();
    assert_eq!(
        claim(&mut conn, &id, &rival, lease),
        None,
        "blocked for the 5 s hold"
    );
    assert_eq!(
        claim(&mut conn, &id, &rival, Lease::from_secs(56).unwrap()),
        None,
        "taken 55 s ago, not longer"
    );
    assert!(
        claim(&mut conn, &id, &rival, Lease::from_secs(54).unwrap()).is_some(),
        "taken 55 s ago, so what is left of a 60 s lease is 5 s"
    );
}

#[test]
fn a_different_session_time_zone_changes_no_answer() {
    let mut conn = connection();
    let mut far = backend::connect_in_far_time_zone();
    let (here, there) = (queued_job(&mut conn), queued_job(&mut conn));
    claim(&mut conn, &here, &Claim::new("utc-node").unwrap(), minute()).expect("claim here");
    claim(&mut far, &there, &Claim::new("far-node").unwrap(), minute()).expect("claim there");

    let (at_here, at_there) = (
        job(&mut conn, &here).leased_at.unwrap(),
        job(&mut conn, &there).leased_at.unwrap(),
    );
    assert!(
        (at_there - at_here).num_seconds().abs() < 30,
        "comparable timestamps: {at_here} vs {at_there}"
    );
    assert_eq!(
        job(&mut far, &here).leased_at,
        Some(at_here),
        "both sessions read the same instant"
    );
    let clock: i64 = diesel::select(diesel_lease::__private::sql::ClockMicros)
        .get_result(&mut far)
        .unwrap();
    assert!(
        (clock - at_here.timestamp_micros()).abs() < 30_000_000,
        "the far session's clock reading is the same instant: {clock}"
    );

    let rival = Claim::new("rival").unwrap();
    assert_eq!(
        claim(&mut far, &here, &rival, minute()),
        None,
        "fresh from the far session too"
    );
    assert_eq!(
        claim(&mut conn, &there, &rival, minute()),
        None,
        "the far session's claim is fresh here"
    );
    age(&mut far, &here, Duration::from_secs(61));
    assert!(
        claim(&mut conn, &here, &rival, minute()).is_some(),
        "aged from the far session, outlived here"
    );
}

#[test]
fn a_table_with_the_backends_own_timestamp_type_leases_the_same() {
    use backend::native::native_jobs;
    let mut conn = connection();
    let id = unique_id("native");
    diesel::insert_into(native_jobs::table)
        .values(native_jobs::id.eq(&id))
        .execute(&mut *conn)
        .unwrap();
    let take = |conn: &mut backend::Conn, claim: &Claim| {
        diesel::update(
            native_jobs::table
                .find(&id)
                .filter(native_jobs::table.claimable(minute())),
        )
        .set(native_jobs::table.taken(claim))
        .execute(conn)
        .unwrap()
    };
    let (first, rival) = (
        Claim::new("worker-1").unwrap(),
        Claim::new("worker-2").unwrap(),
    );

    assert_eq!(take(&mut conn, &first), 1);
    assert_eq!(take(&mut conn, &rival), 0, "fresh");
    diesel::update(native_jobs::table.find(&id))
        .set(native_jobs::table.renewed_ago(Age::new(Duration::from_secs(61)).unwrap()))
        .execute(&mut *conn)
        .unwrap();
    let outlived: i64 = native_jobs::table
        .find(&id)
        .filter(native_jobs::table.outlived(minute()))
        .count()
        .get_result(&mut *conn)
        .unwrap();
    assert_eq!(outlived, 1);
    assert_eq!(take(&mut conn, &rival), 1, "outlived");
    let holders = native_jobs::table
        .holders(minute())
        .run(&mut *conn)
        .unwrap();
    let held = holders
        .iter()
        .find(|holding| holding.key == id)
        .expect("held");
    let now: i64 = diesel::select(diesel_lease::__private::sql::ClockMicros)
        .get_result(&mut *conn)
        .unwrap();
    let since = now - held.claimed_at.timestamp_micros();
    assert!(
        (0..30_000_000).contains(&since),
        "claimed_at in UTC from the column's own type: {held:?}, {since} µs ago"
    );
    let released = diesel::update(
        native_jobs::table
            .find(&id)
            .filter(native_jobs::table.held_by(rival.token())),
    )
    .set(native_jobs::table.released())
    .execute(&mut *conn)
    .unwrap();
    assert_eq!(released, 1);
}
