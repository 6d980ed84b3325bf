// Draining and starting again, included once per backend by tests/keeper.rs: what a keeper
// keeps released at shutdown, what an owner holds released whatever its claims, and what a
// node's earlier lives held freed when it starts again under its name.

/// A keeper renewing every 20 s: between its first round and the next, a test counts the
/// statements of its own calls alone.
fn slow(lease: Lease) -> KeeperSettings {
    KeeperSettings::new(lease).every(Duration::from_secs(20))
}

/// How many of the jobs `ids` are held, by anyone.
fn held_among(ids: &[String]) -> i64 {
    lease_jobs::table
        .filter(lease_jobs::id.eq_any(ids))
        .filter(lease_jobs::lease_token.is_not_null())
        .count()
        .get_result(&mut connection())
        .unwrap()
}

#[test]
fn a_drain_releases_every_claim_kept_on_a_table_in_one_statement_and_says_what_it_released() {
    let (pool, updates) = backend::pool_counting_updates(2);
    let keeper = Keeper::start(pool, slow(minute())).unwrap();
    let conn = &mut connection();
    let ids = queued_jobs(conn, 6, "queued");
    let worker = |n: usize| Claim::new(&format!("worker-{n}")).unwrap();
    let batches = [&ids[..3], &ids[3..5], &ids[5..]];
    let kept: Vec<_> = batches
        .iter()
        .enumerate()
        .map(|(n, ids)| {
            keeper
                .keep(claim_all(conn, ids, &worker(n), minute()))
                .unwrap()
        })
        .collect();
    // One row is taken from its keeper behind its back: the drain must leave it to its holder.
    age(conn, &ids[5], Duration::from_secs(61));
    let rescuer = claim_all(conn, &ids[5..], &worker(9), minute());

    let before = updates.load(Ordering::SeqCst);
    let drained = keeper.drain().unwrap();

    assert_eq!(
        updates.load(Ordering::SeqCst) - before,
        1,
        "one UPDATE for every claim on the table"
    );
    assert_eq!(drained.tables.len(), 1, "{drained}");
    let table = &drained.tables[0];
    assert_eq!(
        (table.table, table.claims, table.rows, table.statements),
        ("lease_jobs", 3, 5, 1),
        "named as its SQL names it: {drained}"
    );
    assert_eq!(
        drained.to_string(),
        "lease_jobs: 3 claims, 5 rows released in 1 statement"
    );
    assert_eq!(drained.rows(), 5);
    for kept in &kept {
        assert_eq!(
            kept.check().expect_err("released").reason,
            LossReason::Released
        );
    }
    assert_eq!(held_among(&ids[..5]), 0, "released");
    assert_eq!(
        job(conn, &ids[5]).lease_token.as_deref(),
        Some(rescuer.claim().token()),
        "a row taken over stays its new holder's"
    );
    assert_eq!(
        keeper.drain().unwrap().rows(),
        0,
        "nothing left to drain, and nothing sent for it"
    );
    assert_eq!(updates.load(Ordering::SeqCst) - before, 1);
}

#[test]
fn a_drain_names_a_table_by_its_sql_name_not_its_rust_one() {
    let keeper = Keeper::start(backend::pool_of(2), slow(minute())).unwrap();
    let conn = &mut connection();
    let ids = queued_jobs(conn, 2, "queued");
    let held = claim_all(
        conn,
        &ids,
        &Claim::new(&unique_id("renamed")).unwrap(),
        minute(),
    );
    // The same rows, through the `table!` whose Rust name is not the table's.
    let kept = keeper
        .keep(crate::common::jobs::renamed_jobs::table.held_rows(held.claim(), ids.clone()))
        .unwrap();

    let drained = keeper.drain().unwrap();

    assert_eq!(drained.tables.len(), 1, "{drained}");
    assert_eq!(
        (drained.tables[0].table, drained.tables[0].rows),
        ("lease_jobs", 2),
        "{drained}"
    );
    assert_eq!(
        kept.check().expect_err("released").reason,
        LossReason::Released
    );
    assert_eq!(held_among(&ids), 0, "released");
}

#[test]
fn a_drain_dates_a_claim_within_its_shortest_hold_rather_than_freeing_it() {
    let lease = Lease::from_secs(30).unwrap();
    let keeper = Keeper::start(
        backend::pool_of(2),
        slow(lease).at_least(Duration::from_secs(300)),
    )
    .unwrap();
    let conn = &mut connection();
    let ids = queued_jobs(conn, 2, "queued");
    let held = claim_all(conn, &ids, &Claim::new("task-node").unwrap(), lease);
    let kept = keeper.keep(&held).unwrap();

    let drained = keeper.drain().unwrap();

    assert_eq!(
        (drained.tables[0].claims, drained.tables[0].rows),
        (1, 2),
        "{drained}"
    );
    assert_eq!(
        kept.check().expect_err("released").reason,
        LossReason::Released
    );
    let refused = lease_jobs::table
        .claim_row(&ids[0], lease)
        .by(&Claim::new("other-node").unwrap())
        .run::<Job>(conn)
        .unwrap();
    let Claimed::Refused(refused) = refused else {
        panic!("the shortest hold keeps the row from others")
    };
    let Refusal::Held(holder) = refused.why() else {
        panic!("held by its claim until the hold passes")
    };
    assert_eq!(holder.owner, "task-node");
}

#[test]
fn everything_an_owner_holds_is_released_in_one_statement_whatever_its_claims() {
    let conn = &mut connection();
    let (owner, other) = (unique_id("node"), unique_id("node"));
    let ids = queued_jobs(conn, 5, "queued");
    for part in [&ids[..2], &ids[2..4]] {
        claim_all(conn, part, &Claim::new(&owner).unwrap(), minute());
    }
    let others = claim_all(conn, &ids[4..], &Claim::new(&other).unwrap(), minute());
    let (pool, updates) = backend::pool_counting_updates(1);
    let mut counted = pool.get().unwrap();

    let mut released = lease_jobs::table
        .held_by_owner(&owner)
        .release()
        .set(lease_jobs::status.eq("queued"))
        .run(&mut *counted)
        .unwrap();

    released.sort();
    let mut expected = ids[..4].to_vec();
    expected.sort();
    assert_eq!(released, expected, "both claims' rows");
    assert_eq!(updates.load(Ordering::SeqCst), 1, "in one statement");
    for id in &ids[..4] {
        let job = job(conn, id);
        assert_eq!((job.lease_token, job.status.as_str()), (None, "queued"));
    }
    assert_eq!(
        job(conn, &ids[4]).lease_token.as_deref(),
        Some(others.claim().token()),
        "another owner's row is left alone"
    );
    assert!(lease_jobs::table
        .held_by_owner(&owner)
        .release()
        .run(conn)
        .unwrap()
        .is_empty());
}

#[test]
fn an_owner_name_that_is_not_one_is_refused_before_anything_is_sent() {
    let (pool, updates) = backend::pool_counting_updates(1);
    let conn = &mut pool.get().unwrap();
    for owner in ["", " node", "node\0"] {
        let refused = lease_jobs::table
            .held_by_owner(owner)
            .release()
            .run(&mut **conn);
        assert!(
            matches!(refused, Err(diesel_lease::Error::InvalidOwner(_))),
            "{owner:?}: {refused:?}"
        );
    }
    assert_eq!(updates.load(Ordering::SeqCst), 0);
}

#[test]
fn a_node_started_again_frees_at_once_what_its_earlier_lives_held_and_nothing_else() {
    let conn = &mut connection();
    let name = unique_id("worker");
    let (first, second) = (Node::start(&name).unwrap(), Node::start(&name).unwrap());
    // Nodes whose names its own begins or ends, and this life, hold rows too.
    let longer = Node::start(&format!("{name}-2")).unwrap();
    let ids = queued_jobs(conn, 5, "queued");
    for (node, id) in [&first, &second, &longer].iter().zip(&ids) {
        claim_all(conn, std::slice::from_ref(id), &node.claim(), minute());
    }
    claim_all(conn, &ids[3..4], &Claim::new(&name).unwrap(), minute());

    let node = Node::start(&name).unwrap();
    claim_all(conn, &ids[4..], &node.claim(), minute());
    let mut freed = lease_jobs::table
        .held_by_earlier_lives_of(&node)
        .release()
        .set(lease_jobs::status.eq("queued"))
        .run(conn)
        .unwrap();

    freed.sort();
    let mut earlier = ids[..2].to_vec();
    earlier.sort();
    assert_eq!(freed, earlier, "the two earlier lives' rows, a lease early");
    assert_eq!(
        held_among(&ids[2..]),
        3,
        "another node's, the bare name's and this life's rows stay held"
    );
    assert!(
        lease_jobs::table
            .claim_row(&ids[0], minute())
            .by(&node.claim())
            .run::<Job>(conn)
            .unwrap()
            .is_won(),
        "the new life takes the work up at once"
    );
}

#[test]
fn a_claim_handed_back_is_the_callers_and_neither_a_drain_nor_the_keepers_stop_releases_it() {
    let conn = &mut connection();
    let ids = queued_jobs(conn, 2, "queued");
    let keeper = Keeper::start(backend::pool_of(2), fast(minute())).unwrap();
    let worker = Claim::new("worker-1").unwrap();
    let keep = |ids: &[String]| {
        keeper
            .keep(claim_all(&mut connection(), ids, &worker, minute()))
            .unwrap()
    };

    // Each handed back at once, before any round could see it: then drained, or the keeper
    // stopped, at once.
    let first = keep(&ids[..1]).stop_keeping();
    assert_eq!(keeper.drain().unwrap().rows(), 0, "nothing of the caller's");
    let second = keep(&ids[1..]).stop_keeping();
    drop(keeper);

    assert_eq!(held_among(&ids), 2, "both still held by the claim");
    assert_eq!(first.release().run(conn).unwrap(), ids[..1]);
    assert_eq!(second.release().run(conn).unwrap(), ids[1..]);
}
