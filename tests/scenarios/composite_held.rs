// Composite-key rows once held, included in tests/lease.rs's (and tests/pooler.rs's) composite
// module after scenarios/composite.rs, whose helpers it uses: the holder's renewals, writes and
// releases, a reap, the reads of who holds what, and a keeper, each naming rows by their keys.

#[test]
fn the_holder_renews_writes_to_and_releases_its_composite_key_rows_guarded_by_its_token() {
    let conn = &mut connection();
    let (mine, twin) = (tenant(conn, 4), tenant(conn, 4));
    let worker = Claim::new("worker-1").unwrap();
    let stranger = Claim::new("worker-1").unwrap();
    // The other tenant's items are held too, by a claim of their own.
    let twins = claim_batch(conn, &twin, 4, &Claim::new("worker-9").unwrap());
    let twin_items = items(conn, &twin);

    let won = lease_items::table
        .claim_row(key(&mine, 1), minute())
        .by(&worker)
        .returning(Item::as_select())
        .run(conn)
        .unwrap()
        .won()
        .expect("free");
    let batch = claim_batch(conn, &mine, 3, &worker);
    assert_eq!(batch.len(), 3, "items 2 to 4");
    age(conn, &mine, Duration::from_secs(50));

    // One row: renewed, written, released; each says whether the claim still held it.
    assert!(won.renew().run(conn).unwrap());
    assert!(won
        .update()
        .set(lease_items::state.eq("half way"))
        .run(conn)
        .unwrap());
    assert_eq!(items(conn, &mine)[0].state, "half way");
    assert!(won
        .release()
        .set(lease_items::state.eq("done"))
        .run(conn)
        .unwrap());
    assert!(
        !won.renew().run(conn).unwrap(),
        "released: its writes land no more"
    );
    assert!(!won
        .update()
        .set(lease_items::state.eq("again"))
        .run(conn)
        .unwrap());

    // A batch: each statement names the keys of the rows it changed.
    let mut renewed = batch.renew().run(conn).unwrap();
    renewed.sort();
    assert_eq!(renewed, keys(&mine, 2..=4));
    let fresh: i64 = lease_items::table
        .filter(lease_items::tenant.eq(&mine))
        .filter(lease_items::table.fresh(Lease::from_secs(10).unwrap()))
        .count()
        .get_result(conn)
        .unwrap();
    assert_eq!(
        fresh, 3,
        "the batch's rows were renewed, item 1 is released"
    );
    let mut written = batch
        .update()
        .set(lease_items::state.eq("checked"))
        .run(conn)
        .unwrap();
    written.sort();
    assert_eq!(written, keys(&mine, 2..=4));

    // A claim known by its token alone, and a stranger with the same owner.
    let by_stranger = lease_items::table.held_rows(&stranger, keys(&mine, 2..=4));
    assert!(by_stranger.renew().run(conn).unwrap().is_empty());
    assert!(by_stranger.release().run(conn).unwrap().is_empty());
    let held = lease_items::table.held_rows(&worker, vec![key(&mine, 2), key(&twin, 3)]);
    assert_eq!(
        held.release()
            .set(lease_items::state.eq("done"))
            .run(conn)
            .unwrap(),
        [key(&mine, 2)],
        "the other tenant's item 3 is another claim's"
    );
    let mut released = batch
        .release()
        .set(lease_items::state.eq("done"))
        .run(conn)
        .unwrap();
    released.sort();
    assert_eq!(released, keys(&mine, 3..=4), "item 2 was released already");
    assert!(batch.release().run(conn).unwrap().is_empty(), "never twice");

    for item in items(conn, &mine) {
        assert_eq!(
            (item.state.as_str(), item.holder_token.as_deref()),
            ("done", None),
            "{item:?}"
        );
    }
    assert_eq!(
        items(conn, &twin),
        twin_items,
        "the other tenant's rows are as they were"
    );
    assert_eq!(twins.release().run(conn).unwrap().len(), 4);
}

#[test]
fn a_reap_of_composite_key_rows_gives_back_their_keys_and_fences_off_their_holder() {
    let conn = &mut connection();
    let (mine, twin) = (tenant(conn, 3), tenant(conn, 3));
    let holder = claim_batch(conn, &mine, 3, &Claim::new("worker-dead").unwrap());
    let twins = claim_batch(conn, &twin, 3, &Claim::new("worker-alive").unwrap());
    age(conn, &mine, Duration::from_secs(120));
    age(conn, &twin, Duration::from_secs(10));

    let mut reaped = lease_items::table
        .reap(100, minute())
        .filter(lease_items::tenant.eq_any([&mine, &twin]))
        .set(lease_items::state.eq("queued"))
        .run(conn)
        .unwrap();

    reaped.sort();
    assert_eq!(
        reaped,
        keys(&mine, 1..=3),
        "the outlived rows, by their keys"
    );
    for item in items(conn, &mine) {
        assert_eq!(
            (item.state.as_str(), item.holder_token, item.generation),
            ("queued", None, 1),
            "released and queued again, its fence left as the claim set it"
        );
    }
    assert_eq!(
        holder
            .update()
            .set(lease_items::state.eq("done"))
            .run(conn)
            .unwrap(),
        Vec::<Key>::new(),
        "the reaped holder's late write lands nowhere"
    );
    assert_eq!(
        twins.renew().run(conn).unwrap().len(),
        3,
        "the fresh rows are still held"
    );
}

#[test]
fn holders_stale_rows_and_counts_per_owner_of_a_composite_key_table() {
    let conn = &mut connection();
    let (young, old) = (tenant(conn, 2), tenant(conn, 1));
    let owner = unique_id("owner");
    let claim = Claim::new(&owner).unwrap();
    assert_eq!(claim_batch(conn, &young, 2, &claim).len(), 2);
    assert_eq!(claim_batch(conn, &old, 1, &claim).len(), 1);
    age(conn, &young, Duration::from_secs(10));
    age(conn, &old, Duration::from_secs(90));

    let holders: Vec<_> = lease_items::table
        .holders(minute())
        .run(conn)
        .unwrap()
        .into_iter()
        .filter(|holding| holding.owner == owner)
        .collect();
    assert_eq!(
        holders
            .iter()
            .map(|holding| holding.key.clone())
            .collect::<Vec<_>>()[..1],
        [key(&old, 1)],
        "oldest first"
    );
    let mut held: Vec<Key> = holders.iter().map(|holding| holding.key.clone()).collect();
    held.sort();
    let mut expected = keys(&young, 1..=2);
    expected.push(key(&old, 1));
    expected.sort();
    assert_eq!(held, expected);
    assert!(holders.iter().all(|holding| holding.token == claim.token()));
    let stale: Vec<Key> = lease_items::table
        .stale(minute())
        .run(conn)
        .unwrap()
        .into_iter()
        .filter(|holding| holding.owner == owner)
        .map(|holding| holding.key)
        .collect();
    assert_eq!(stale, [key(&old, 1)]);
    let counts = lease_items::table.held_per_owner().run(conn).unwrap();
    assert!(counts.contains(&(owner, 3)), "{counts:?}");
}

#[test]
fn a_keeper_keeps_renews_and_releases_composite_key_rows() {
    let conn = &mut connection();
    let (mine, dropped, twin) = (tenant(conn, 4), tenant(conn, 4), tenant(conn, 4));
    let worker = Claim::new("worker-1").unwrap();
    let batch = claim_batch(conn, &mine, 4, &worker);
    let to_drop = claim_batch(conn, &dropped, 4, &worker);
    let twins = claim_batch(conn, &twin, 4, &Claim::new("worker-2").unwrap());
    let keeper = Keeper::start(
        backend::pool_of(2),
        KeeperSettings::new(minute()).every(Duration::from_millis(20)),
    )
    .unwrap();
    let kept = keeper.keep(batch.held()).unwrap();
    let kept_to_drop = keeper.keep(to_drop.held()).unwrap();

    // Every row of the three tenants dated 50 s back: the keeper renews its own eight alone.
    for tenant in [&mine, &dropped, &twin] {
        age(conn, tenant, Duration::from_secs(50));
    }
    after_rounds(&keeper, 2);
    let fresh = |conn: &mut backend::Conn, tenant: &str| -> i64 {
        lease_items::table
            .filter(lease_items::tenant.eq(tenant))
            .filter(lease_items::table.fresh(Lease::from_secs(10).unwrap()))
            .count()
            .get_result(conn)
            .unwrap()
    };
    assert_eq!(
        (
            fresh(conn, &mine),
            fresh(conn, &dropped),
            fresh(conn, &twin)
        ),
        (4, 4, 0)
    );

    // An operator frees item 2: the keeper names it lost, by its key.
    diesel::update(lease_items::table.find(key(&mine, 2)))
        .set(lease_items::table.released())
        .execute(conn)
        .unwrap();
    after_rounds(&keeper, 2);
    let lost = kept.check().expect_err("item 2 was lost");
    assert_eq!(
        (lost.rows, lost.reason),
        (vec![key(&mine, 2)], LossReason::TakenOver)
    );
    assert!(kept_to_drop.is_held());

    let mut done = kept
        .release()
        .set(lease_items::state.eq("done"))
        .run(conn)
        .unwrap();
    done.sort();
    assert_eq!(done, keys(&mine, [1, 3, 4]));
    let states: Vec<(String, Option<String>)> = items(conn, &mine)
        .into_iter()
        .map(|item| (item.state, item.holder_token))
        .collect();
    assert_eq!(
        states,
        [
            ("done".to_owned(), None),
            ("running".to_owned(), None),
            ("done".to_owned(), None),
            ("done".to_owned(), None),
        ]
    );
    drop(kept_to_drop);
    eventually("a dropped handle releases its rows", || {
        items(conn, &dropped)
            .iter()
            .all(|item| item.holder_token.is_none())
    });
    assert_eq!(
        twins.renew().run(conn).unwrap().len(),
        4,
        "the other tenant's rows held on"
    );
}
