// Composite-key rows raced for, included in tests/lease.rs's (and tests/pooler.rs's) composite
// module after scenarios/composite.rs, whose helpers it uses: racers for one row win it once a
// round, and workers claiming batches win each row once.

#[test]
fn racers_for_one_composite_key_row_win_it_once_each_round() {
    const RACERS: usize = 16;
    const ROUNDS: usize = 50;
    let conn = &mut connection();
    // The same item number under two tenants: only the first tenant's row is raced for.
    let (mine, twin) = (tenant(conn, 1), tenant(conn, 1));
    let pool = backend::pool_of(RACERS as u32);

    for round in 0..ROUNDS {
        diesel::update(lease_items::table.find(key(&mine, 1)))
            .set((
                lease_items::table.released(),
                lease_items::state.eq("queued"),
            ))
            .execute(conn)
            .unwrap();
        let won = race(&pool, RACERS, |racer, conn| {
            let me = Claim::new(&format!("racer-{racer}")).unwrap();
            // No condition of the caller's: only the lease decides who wins.
            let outcome = lease_items::table
                .claim_row(key(&mine, 1), minute())
                .by(&me)
                .set(lease_items::state.eq("running"))
                .returning(Item::as_select())
                .run(conn)
                .expect("no claim errors");
            outcome.won().map(|won| {
                (
                    racer,
                    won.into_row().holder_token == Some(me.token().to_owned()),
                )
            })
        });
        let winners: Vec<(usize, bool)> = won.into_iter().flatten().collect();
        assert_eq!(winners.len(), 1, "round {round} had winners {winners:?}");
        assert!(winners[0].1, "the winner's row carries its token");
    }
    assert!(untouched(conn, &twin));
    assert_eq!(
        items(conn, &mine)[0].generation,
        ROUNDS as i64,
        "one take a round"
    );
}

#[test]
fn racers_claim_batches_of_composite_key_rows_and_each_row_is_won_once() {
    const WORKERS: usize = 16;
    let conn = &mut connection();
    // Two tenants whose rows have the same item numbers, 1 to 200 each.
    let tenants = [tenant(conn, 200), tenant(conn, 200)];

    // A worker's empty batch means nothing is claimable now, not that the queue is done.
    let take = |worker: usize, conn: &mut backend::Conn| {
        let batch = lease_items::table
            .claim_batch(10, minute())
            .by(&Claim::new(&format!("worker-{worker}")).unwrap())
            .filter(lease_items::tenant.eq_any(&tenants))
            .filter(lease_items::state.eq("queued"))
            .order_by((lease_items::tenant, lease_items::item_no))
            .set(lease_items::state.eq("running"))
            .returning(Item::as_select())
            .run(conn)
            .expect("no claim errors");
        let mut finished = batch
            .release()
            .set(lease_items::state.eq("done"))
            .run(conn)
            .unwrap();
        finished.sort();
        let mut keys = batch.keys().to_vec();
        keys.sort();
        assert_eq!(
            finished, keys,
            "every row won is still held, and released by its key"
        );
        keys
    };
    let queued = |conn: &mut backend::Conn| {
        let queued: i64 = lease_items::table
            .filter(lease_items::tenant.eq_any(&tenants))
            .filter(lease_items::state.eq("queued"))
            .count()
            .get_result(conn)
            .unwrap();
        queued > 0
    };
    let mut won = drain(&backend::pool_of(WORKERS as u32), WORKERS, take, queued);

    won.sort();
    let mut expected: Vec<Key> = tenants
        .iter()
        .flat_map(|tenant| keys(tenant, 1..=200))
        .collect();
    expected.sort();
    assert_eq!(won.len(), 400, "each row won exactly once");
    assert_eq!(won, expected);
}
