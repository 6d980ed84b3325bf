// The longest and the shortest holds, included once per backend by tests/keeper.rs (and
// tests/pooler.rs) after scenarios/keeper.rs, whose helpers it uses: past the longest, a keeper
// renews no more and says so; released before the shortest, a row is left to no one until it
// has passed.

#[test]
fn past_the_longest_hold_the_keeper_stops_renewing_and_says_so() {
    let held = claimed(1, minute());
    let keeper = Keeper::start(
        backend::pool_of(2),
        fast(minute()).at_most(Duration::from_millis(100)),
    )
    .unwrap();
    let kept = keeper.keep(&held).unwrap();
    eventually("the longest hold passes", || !kept.is_held());
    assert_eq!(
        kept.check().expect_err("lost").reason,
        LossReason::LongestHold
    );
    // A round that began before the hold passed may still be renewing: let it end.
    after_rounds(&keeper, 1);

    let conn = &mut connection();
    age_jobs(conn, held.keys(), Duration::from_secs(50));
    let statements = keeper.renewal_statements();
    after_rounds(&keeper, 3);
    assert_eq!(
        keeper.renewal_statements(),
        statements,
        "no renewal after the longest hold"
    );
    assert_eq!(
        fresh_within(held.keys(), 40),
        0,
        "the row ages towards its takeover"
    );
}

#[test]
fn a_longest_hold_beyond_the_clock_never_comes_and_never_panics() {
    let held = claimed(1, minute());
    let keeper = Keeper::start(backend::pool_of(2), fast(minute()).at_most(Duration::MAX)).unwrap();
    let kept = keeper.keep(&held).unwrap();
    after_rounds(&keeper, 2);
    assert!(kept.is_held());
}

/// Whether a claim of another worker's, with `lease`, takes the row `id` now.
fn taken_by_another(id: &str, lease: Lease) -> bool {
    let outcome = lease_jobs::table
        .claim_row(id, lease)
        .by(&Claim::new("worker-2").unwrap())
        .run::<Job>(&mut connection())
        .unwrap();
    outcome.is_won()
}

/// Moves the lease of row `id` `secs` seconds into the past.
fn age_row(id: &str, secs: u32) {
    let sql = format!(
        "UPDATE lease_jobs SET leased_at = {} WHERE id = '{id}'",
        backend::earlier("leased_at", secs)
    );
    assert_eq!(
        diesel::sql_query(sql).execute(&mut connection()).unwrap(),
        1
    );
}

#[test]
fn a_release_before_the_shortest_hold_leaves_the_row_to_no_one_until_it_has_passed() {
    let lease = Lease::from_secs(30).unwrap();
    let held = claimed(1, lease);
    let (claim, id) = (held.claim(), &held.keys()[0]);
    let keeper = Keeper::start(
        backend::pool_of(2),
        fast(lease).at_least(Duration::from_secs(600)),
    )
    .unwrap();
    let kept = keeper.keep(&held).unwrap();
    assert_eq!(
        kept.release()
            .set(lease_jobs::status.eq("done"))
            .run(&mut connection())
            .unwrap(),
        held.keys(),
        "released, as far as the holder goes"
    );
    let row = job(&mut connection(), id);
    assert_eq!(
        row.lease_token.as_deref(),
        Some(claim.token()),
        "the row still names its holder"
    );
    assert_eq!(row.status, "done", "and the caller's changes landed");
    assert!(
        row.leased_at.is_some(),
        "dated, never NULL: a held row without a date is never outlived"
    );
    assert!(
        !taken_by_another(id, lease),
        "not taken right after the release"
    );
    let holders = lease_jobs::table
        .holders(lease)
        .run(&mut connection())
        .unwrap();
    let dated = holders
        .iter()
        .find(|holding| &holding.key == id)
        .expect("still listed as held");
    assert!(
        dated.time_left > Duration::from_secs(540),
        "its time left runs to the end of the shortest hold: {dated:?}"
    );

    // 540 s later, far past a lease of 30 s, the shortest hold of 600 s has not passed yet.
    age_row(id, 540);
    assert!(
        !taken_by_another(id, lease),
        "not taken before the shortest hold has passed"
    );
    // 610 s after the keeper kept it, it has.
    age_row(id, 70);
    assert!(
        taken_by_another(id, lease),
        "taken once the shortest hold has passed"
    );
}

#[test]
fn a_release_after_the_shortest_hold_frees_the_row_at_once() {
    let held = claimed(1, minute());
    let keeper = Keeper::start(
        backend::pool_of(2),
        fast(minute()).at_least(Duration::from_millis(1)),
    )
    .unwrap();
    let kept = keeper.keep(&held).unwrap();
    // Two rounds of 20 ms: the shortest hold of 1 ms is over by any clock.
    after_rounds(&keeper, 2);
    assert_eq!(kept.release().run(&mut connection()).unwrap(), held.keys());
    let row = job(&mut connection(), &held.keys()[0]);
    assert_eq!(
        (row.lease_token, row.leased_at),
        (None, None),
        "freed, not dated"
    );
    assert!(taken_by_another(&held.keys()[0], minute()));
}
