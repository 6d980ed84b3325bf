// The fence, included once per backend by tests/lease.rs (and tests/pooler.rs) after
// scenarios/lease.rs, whose helpers it uses: it rises with every take, a claim's, a batch's or one
// composed by hand, and with nothing else.

#[test]
fn the_fence_rises_with_every_take_and_with_nothing_else() {
    let mut conn = connection();
    let id = queued_job(&mut conn);
    let fence_of_row = |conn: &mut backend::Conn| job(conn, &id).fence;
    let take = |conn: &mut backend::Conn, claim: &Claim| -> i64 {
        let outcome = lease_jobs::table
            .claim_row(id.as_str(), minute())
            .by(claim)
            .run::<Job>(conn)
            .unwrap();
        let won = outcome.won().expect("claimable");
        assert_eq!(
            won.row().fence,
            won.fence(),
            "the claim reports the row's fence"
        );
        won.fence()
    };

    let first = Claim::new("worker-1").unwrap();
    assert_eq!(take(&mut conn, &first), 1, "the first take");
    assert!(renew(&mut conn, &id, &first));
    assert_eq!(fence_of_row(&mut conn), 1, "a renewal leaves the fence");

    age(&mut conn, &id, Duration::from_secs(61));
    let second = Claim::new("worker-2").unwrap();
    assert_eq!(take(&mut conn, &second), 2, "a takeover after the lease");
    assert!(
        !renew(&mut conn, &id, &first),
        "the first holder is fenced off by its token as well"
    );
    let written = lease_jobs::table
        .held_rows(&second, vec![id.clone()])
        .update()
        .set(lease_jobs::status.eq("running"))
        .run(&mut *conn)
        .unwrap();
    assert_eq!(written, std::slice::from_ref(&id));
    assert_eq!(
        fence_of_row(&mut conn),
        2,
        "a holder's write leaves the fence"
    );

    age(&mut conn, &id, Duration::from_secs(61));
    let reaped = lease_jobs::table
        .reap(10, minute())
        .filter(lease_jobs::id.eq(&id))
        .run(&mut *conn)
        .unwrap();
    assert_eq!(reaped, std::slice::from_ref(&id));
    assert_eq!(
        fence_of_row(&mut conn),
        2,
        "a reap releases, it does not take"
    );
    let third = Claim::new("worker-3").unwrap();
    assert_eq!(take(&mut conn, &third), 3, "a take after a reap");

    let fourth = Claim::new("worker-4").unwrap();
    let batch_of_one = |conn: &mut backend::Conn| {
        lease_jobs::table
            .claim_batch(1, minute())
            .by(&fourth)
            .filter(lease_jobs::id.eq(&id))
            .returning(lease_jobs::id)
            .run::<String>(conn)
            .unwrap()
    };
    assert!(batch_of_one(&mut conn).is_empty(), "held");
    assert!(finish(&mut conn, &id, &third));
    let batch = batch_of_one(&mut conn);
    assert_eq!(
        batch.fences(),
        [4],
        "a batch reports each row's fence; a release left it at 3"
    );
}

#[test]
fn a_take_composed_by_hand_raises_the_fence_too() {
    let mut conn = connection();
    let id = queued_job(&mut conn);
    claim(&mut conn, &id, &Claim::new("worker-1").unwrap(), minute()).expect("claim");
    age(&mut conn, &id, Duration::from_secs(61));

    let by_hand = Claim::new("worker-2").unwrap();
    let taken = diesel_lease::update(
        lease_jobs::table
            .find(&id)
            .filter(lease_jobs::table.claimable(minute())),
    )
    .set(lease_jobs::table.taken(&by_hand))
    .execute(&mut *conn)
    .unwrap();

    assert_eq!(taken, 1);
    assert_eq!(
        job(&mut conn, &id).fence,
        2,
        "higher than the first holder's"
    );
}
