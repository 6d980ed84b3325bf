// What a keeper tells operators of itself, included once per backend by tests/keeper.rs: its
// stats, counted from what its rounds did, never timed.

#[test]
fn a_keepers_stats_count_its_rounds_the_rows_it_renewed_and_the_rows_it_lost_by_reason() {
    let held = claimed(3, minute());
    let ids = held.keys().to_vec();
    let keeper = Keeper::start(backend::pool_of(2), fast(minute())).unwrap();
    let kept = keeper.keep(&held).unwrap();
    let kept_at = keeper.stats();
    assert!(
        kept_at.rows_renewed >= 3 && kept_at.rows_renewed.is_multiple_of(3),
        "the keep's own renewal of the three rows, and any round's since: {kept_at}"
    );
    assert!(kept_at.renewal_statements >= 1, "{kept_at}");
    after_rounds(&keeper, 2);

    // An operator frees one row: the next renewal finds it lost.
    diesel::update(lease_jobs::table.find(&ids[0]))
        .set(lease_jobs::table.released())
        .execute(&mut connection())
        .unwrap();
    eventually("the keeper finds the row lost", || !kept.is_held());
    after_rounds(&keeper, 1);

    let stats = keeper.stats();
    assert_eq!(
        (stats.rows_taken_over, stats.rows_lost()),
        (1, 1),
        "{stats}"
    );
    assert!(
        stats.rows_renewed >= 3 + 2 * 3 + 2,
        "the keep, two rounds of three rows, one of the two left: {stats}"
    );
    assert!(
        stats.rounds >= 3 && stats.renewal_statements >= 3,
        "{stats}"
    );
    assert_eq!(stats.failed_renewals, 0, "{stats}");
    assert!(stats.last_round.is_some(), "{stats}");
    let trusted = Duration::from_secs(48); // a minute's lease, less its default margin
    assert!(
        stats
            .smallest_margin
            .is_some_and(|margin| margin <= trusted),
        "{stats}"
    );
    assert_eq!(
        stats.rounds,
        keeper.rounds(),
        "the same count as the keeper's own"
    );
}

#[test]
fn a_keeper_counts_the_rows_it_gives_up_past_the_longest_hold_and_unconfirmed() {
    let longest = claimed(1, minute());
    let keeper = Keeper::start(
        backend::pool_of(2),
        fast(minute()).at_most(Duration::from_millis(100)),
    )
    .unwrap();
    let kept = keeper.keep(&longest).unwrap();
    eventually("the longest hold passes", || !kept.is_held());
    // Counted by the round that gives the claim up, which may come just after the work knew.
    eventually("a round gives the claim up", || {
        keeper.stats().rows_past_longest_hold == 1
    });

    // A keeper whose only connection the test holds cannot renew: once the trust deadline
    // passes, its claim is given up unconfirmed.
    let lease = Lease::from_secs(4).unwrap();
    let unconfirmed = claimed(2, lease);
    let pool = backend::pool_waiting(1, Duration::from_millis(200));
    let keeper = Keeper::start(
        pool.clone(),
        KeeperSettings::new(lease)
            .every(Duration::from_millis(100))
            .margin(Duration::from_secs(3)),
    )
    .unwrap();
    let kept = keeper.keep(&unconfirmed).unwrap();
    let _only_connection = pool.get().unwrap();
    eventually("the keeper gives the lease up", || !kept.is_held());

    let stats = keeper.stats();
    assert_eq!(stats.rows_unconfirmed, 2, "{stats}");
    assert!(
        stats.failed_renewals >= 1,
        "rounds that got no connection failed: {stats}"
    );
}

#[test]
fn a_round_held_up_past_its_time_is_counted_late() {
    let held = claimed(1, minute());
    let pool = backend::pool_of(1);
    let keeper = Keeper::start(pool.clone(), fast(minute())).unwrap();
    let _kept = keeper.keep(&held).unwrap();
    after_rounds(&keeper, 2);
    let on_time = keeper.stats().late_rounds;

    // The keeper's only connection, held for ten of its renewal intervals: the round that
    // waits for it ends long after the next was due.
    let connection = pool.get().unwrap();
    std::thread::sleep(Duration::from_millis(200));
    drop(connection);
    after_rounds(&keeper, 2);

    let stats = keeper.stats();
    assert!(stats.late_rounds > on_time, "{stats}");
    assert!(stats.most_late > Duration::ZERO, "{stats}");
}
