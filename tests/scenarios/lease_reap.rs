// Reaps and the reads of who holds what, included once per backend by tests/lease.rs (and
// tests/pooler.rs) beside scenarios/lease.rs: outlived rows reaped and their holders fenced off,
// reapers racing, and holders, stale rows and counts per owner by the database's clock.

#[test]
fn a_reap_takes_only_outlived_rows_that_match_its_filter_and_fences_their_holder() {
    let mut conn = connection();
    let outlived = queued_jobs(&mut conn, 2, "queued");
    let fresh = queued_jobs(&mut conn, 1, "queued");
    let done = queued_jobs(&mut conn, 1, "queued");
    let holder = claimed_and_aged(&mut conn, &outlived, "worker-1", Duration::from_secs(120));
    claimed_and_aged(&mut conn, &fresh, "worker-2", Duration::from_secs(10));
    claimed_and_aged(&mut conn, &done, "worker-3", Duration::from_secs(120));
    diesel::update(lease_jobs::table.filter(lease_jobs::id.eq_any(&done)))
        .set(lease_jobs::status.eq("done"))
        .execute(&mut *conn)
        .unwrap();
    let all: Vec<String> = outlived
        .iter()
        .chain(&fresh)
        .chain(&done)
        .cloned()
        .collect();

    let mut reaped = lease_jobs::table
        .reap(100, minute())
        .filter(lease_jobs::id.eq_any(&all))
        .filter(lease_jobs::status.eq("running"))
        .set(lease_jobs::status.eq("queued"))
        .run(&mut *conn)
        .unwrap();

    reaped.sort();
    let mut expected = outlived.clone();
    expected.sort();
    assert_eq!(
        reaped, expected,
        "the outlived running rows, not the fresh one nor the done one"
    );
    for id in &outlived {
        let row = job(&mut conn, id);
        assert_eq!((row.status.as_str(), row.lease_token), ("queued", None));
    }
    assert!(job(&mut conn, &fresh[0]).lease_token.is_some());
    assert!(
        job(&mut conn, &done[0]).lease_token.is_some(),
        "the filter kept it"
    );
    let late = holder
        .release()
        .set(lease_jobs::status.eq("done"))
        .run(&mut *conn)
        .unwrap();
    assert!(
        late.is_empty(),
        "the reaped holder's late finish lands nowhere"
    );
}

#[test]
fn sixteen_reapers_race_over_five_hundred_outlived_rows_and_each_is_reaped_once() {
    const REAPERS: usize = 16;
    let ids = queued_jobs(&mut connection(), 500, "queued");
    claimed_and_aged(
        &mut connection(),
        &ids,
        "worker-dead",
        Duration::from_secs(120),
    );

    // An empty reap means nothing is reapable now, not that none is left.
    let reap = |_, conn: &mut backend::Conn| {
        lease_jobs::table
            .reap(10, minute())
            .filter(lease_jobs::id.eq_any(&ids))
            .set(lease_jobs::status.eq("queued"))
            .run(conn)
            .expect("no reap errors")
    };
    let stale = |conn: &mut backend::Conn| {
        let stale = lease_jobs::table.stale(minute()).run(conn).unwrap();
        stale.iter().any(|holding| ids.contains(&holding.key))
    };
    let mut reaped = drain(&backend::pool_of(REAPERS as u32), REAPERS, reap, stale);

    reaped.sort();
    let mut expected = ids.clone();
    expected.sort();
    assert_eq!(reaped.len(), 500, "each row reaped exactly once");
    assert_eq!(reaped, expected);
}

#[test]
fn holders_stale_rows_and_counts_per_owner_read_by_the_databases_clock() {
    let mut conn = connection();
    let (first, second) = (unique_id("owner"), unique_id("owner"));
    let young = queued_jobs(&mut conn, 2, "queued");
    let old = queued_jobs(&mut conn, 1, "queued");
    let others = queued_jobs(&mut conn, 2, "queued");
    claimed_and_aged(&mut conn, &young, &first, Duration::from_secs(10));
    claimed_and_aged(&mut conn, &old, &first, Duration::from_secs(90));
    let held = claimed_and_aged(&mut conn, &others, &second, Duration::from_secs(30));

    let ours =
        |holdings: Vec<diesel_lease::__private::Holding<String>>| -> Vec<diesel_lease::__private::Holding<String>> {
            holdings
                .into_iter()
                .filter(|holding| holding.owner == first || holding.owner == second)
                .collect()
        };
    let holders = ours(lease_jobs::table.holders(minute()).run(&mut *conn).unwrap());
    assert_eq!(holders.len(), 5);
    assert_eq!(holders[0].key, old[0], "oldest first");
    let second_holds = holders
        .iter()
        .find(|holding| holding.owner == second)
        .unwrap();
    assert_eq!(second_holds.token, held.claim().token());
    assert!(
        second_holds.age >= Duration::from_secs(30) && second_holds.age < Duration::from_secs(40),
        "{second_holds:?}"
    );
    assert!(
        second_holds.time_left > Duration::from_secs(20)
            && second_holds.time_left <= Duration::from_secs(30)
    );
    let leased_at = job(&mut conn, &second_holds.key).leased_at.unwrap();
    assert!(
        (second_holds.claimed_at - leased_at)
            .num_milliseconds()
            .abs()
            <= 1,
        "{second_holds:?} against {leased_at}"
    );

    let stale = ours(lease_jobs::table.stale(minute()).run(&mut *conn).unwrap());
    assert_eq!(
        stale.iter().map(|holding| &holding.key).collect::<Vec<_>>(),
        [&old[0]]
    );
    assert!(stale[0].is_stale());

    let counts = lease_jobs::table.held_per_owner().run(&mut *conn).unwrap();
    let count = |owner: &str| {
        counts
            .iter()
            .find(|(name, _)| name == owner)
            .map(|(_, rows)| *rows)
    };
    assert_eq!((count(&first), count(&second)), (Some(3), Some(2)));
}
