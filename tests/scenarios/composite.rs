// Every operation on a table keyed by a composite primary key, `lease_items (tenant, item_no)`,
// whose lease columns have names of their own (holder, holder_token, held_since, generation):
// included once per backend by tests/lease.rs. Each scenario works on tenants of its own, and
// beside them on a tenant whose rows have the same item numbers, so that a key matched on one
// of its columns alone would show.
use std::time::Duration;

use diesel::prelude::*;
use diesel_lease::prelude::*;
use diesel_lease::{Keeper, KeeperSettings, LossReason};

use crate::common::items::{lease_items, Item};
use crate::common::{after_rounds, by_key_alone, drain, eventually, race, unique_id};

type Key = (String, i64);

fn connection() -> super::support::Pooled {
    super::support::connection()
}

fn minute() -> Lease {
    Lease::from_secs(60).expect("a lease")
}

/// A new tenant with items 1 to `items`, queued.
pub(super) fn tenant(conn: &mut backend::Conn, items: i64) -> String {
    let tenant = unique_id("tenant");
    let rows: Vec<_> = (1..=items)
        .map(|item_no| {
            (
                lease_items::tenant.eq(&tenant),
                lease_items::item_no.eq(item_no),
                lease_items::state.eq("queued"),
            )
        })
        .collect();
    for rows in rows.chunks(1_000) {
        diesel::insert_into(lease_items::table)
            .values(rows)
            .execute(conn)
            .expect("insert items");
    }
    tenant
}

fn key(tenant: &str, item_no: i64) -> Key {
    (tenant.to_owned(), item_no)
}

fn keys(tenant: &str, item_nos: impl IntoIterator<Item = i64>) -> Vec<Key> {
    item_nos.into_iter().map(|no| key(tenant, no)).collect()
}

/// The tenant's items, by item number.
fn items(conn: &mut backend::Conn, tenant: &str) -> Vec<Item> {
    lease_items::table
        .filter(lease_items::tenant.eq(tenant))
        .order_by(lease_items::item_no)
        .select(Item::as_select())
        .load(conn)
        .expect("read items")
}

/// Whether none of the tenant's items is held, and each is still queued.
fn untouched(conn: &mut backend::Conn, tenant: &str) -> bool {
    items(conn, tenant)
        .iter()
        .all(|item| item.holder_token.is_none() && item.state == "queued" && item.generation == 0)
}

/// Moves the leases of the tenant's held items back by `age`, one row at a time
/// ([`by_key_alone`]).
fn age(conn: &mut backend::Conn, tenant: &str, age: Duration) {
    let age = Age::new(age).expect("an age");
    let held: Vec<Key> = lease_items::table
        .filter(lease_items::tenant.eq(tenant))
        .filter(lease_items::holder_token.is_not_null())
        .select((lease_items::tenant, lease_items::item_no))
        .load(conn)
        .expect("the tenant's held items");
    by_key_alone(conn, &held, |conn, key| {
        diesel::update(lease_items::table.find(key.clone()))
            .set(lease_items::table.renewed_ago(age))
            .execute(conn)
    });
}

/// A batch claim of up to `size` of the tenant's queued items, in item order, set running.
fn claim_batch(
    conn: &mut backend::Conn,
    tenant: &str,
    size: usize,
    claim: &Claim,
) -> Batch<Item, lease_items::table> {
    lease_items::table
        .claim_batch(size, minute())
        .by(claim)
        .filter(lease_items::tenant.eq(tenant))
        .filter(lease_items::state.eq("queued"))
        .order_by(lease_items::item_no)
        .set(lease_items::state.eq("running"))
        .returning(Item::as_select())
        .run(conn)
        .expect("a batch claim")
}

#[test]
fn a_composite_key_batch_of_the_largest_size_is_claimed_and_released_whole() {
    let conn = &mut connection();
    let size = diesel_lease::MAX_BATCH_SIZE;
    let mine = tenant(conn, i64::try_from(size).unwrap());
    let batch = claim_batch(conn, &mine, size, &Claim::new("worker-1").unwrap());
    assert_eq!(batch.rows().len(), size);

    // One statement naming every key, two values each: padded to a power of two, 16,384 keys
    // would bind more values than SQLite allows (32,766).
    let released = batch
        .release()
        .set(lease_items::state.eq("done"))
        .run(conn)
        .unwrap();
    assert_eq!(released.len(), size);
    assert!(items(conn, &mine)
        .iter()
        .all(|item| item.state == "done" && item.holder_token.is_none()));
}

#[test]
fn a_composite_key_row_is_claimed_by_its_key_refused_while_held_and_says_why() {
    let conn = &mut connection();
    let (mine, twin) = (tenant(conn, 2), tenant(conn, 2));
    let (worker, rival) = (
        Claim::new("worker-1").unwrap(),
        Claim::new("worker-2").unwrap(),
    );
    // No condition of the caller's: only the lease keeps a rival out.
    let claim = |conn: &mut backend::Conn, key: Key, claim: &Claim| {
        lease_items::table
            .claim_row(key, minute())
            .by(claim)
            .set(lease_items::state.eq("running"))
            .returning(Item::as_select())
            .run(conn)
            .unwrap()
    };

    let won = claim(conn, key(&mine, 2), &worker)
        .won()
        .expect("a free row");
    assert_eq!(won.key(), &key(&mine, 2));
    assert_eq!(
        (
            won.row().tenant.as_str(),
            won.row().item_no,
            won.row().state.as_str()
        ),
        (mine.as_str(), 2, "running")
    );
    assert_eq!(won.row().holder_token.as_deref(), Some(worker.token()));
    assert_eq!(won.fence(), 1, "the fence column of its own name");
    assert_eq!(
        items(conn, &mine)[0].holder_token,
        None,
        "item 1 of the tenant is not taken"
    );
    assert!(untouched(conn, &twin), "nor item 2 of another tenant");

    let Claimed::Refused(refused) = claim(conn, key(&mine, 2), &rival) else {
        panic!("the lease is fresh")
    };
    assert_eq!(refused.key(), &key(&mine, 2));
    let Refusal::Held(holder) = refused.why() else {
        panic!("held")
    };
    assert_eq!(
        (holder.owner.as_str(), holder.token.as_str()),
        ("worker-1", worker.token())
    );
    let Claimed::Refused(missing) = claim(conn, key(&mine, 3), &rival) else {
        panic!("there is no item 3")
    };
    assert_eq!(missing.why(), &Refusal::NoSuchRow);
    let filtered = lease_items::table
        .claim_row(key(&mine, 1), minute())
        .by(&rival)
        .filter(lease_items::state.eq("done"))
        .run::<Item>(conn)
        .unwrap();
    let Claimed::Refused(filtered) = filtered else {
        panic!("item 1 is free, but not done")
    };
    assert_eq!(filtered.why(), &Refusal::NotClaimable);
    assert!(
        claim(conn, key(&twin, 2), &rival).is_won(),
        "the other tenant's item 2 is free"
    );
}

#[test]
fn a_composite_key_batch_claims_in_the_callers_order_and_gives_each_rows_key() {
    let conn = &mut connection();
    let (mine, twin) = (tenant(conn, 5), tenant(conn, 5));
    let worker = Claim::new("worker-1").unwrap();

    let batch = claim_batch(conn, &mine, 3, &worker);

    let mut won = batch.keys().to_vec();
    won.sort();
    assert_eq!(
        won,
        keys(&mine, 1..=3),
        "the first three items, by the caller's order"
    );
    for (item, key) in batch.rows().iter().zip(batch.keys()) {
        assert_eq!(
            &(item.tenant.clone(), item.item_no),
            key,
            "each row's own key"
        );
        assert_eq!(item.holder_token.as_deref(), Some(worker.token()));
    }
    assert_eq!(batch.fences(), [1, 1, 1]);
    assert!(untouched(conn, &twin));
    let rest = claim_batch(conn, &mine, 10, &Claim::new("worker-2").unwrap());
    let mut rest = rest.keys().to_vec();
    rest.sort();
    assert_eq!(
        rest,
        keys(&mine, 4..=5),
        "held rows are not claimable, the others are"
    );
}

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

#[test]
fn a_scenario_written_once_generic_over_the_connection_runs_on_this_backend() {
    let tenant = tenant(&mut connection(), 4);

    crate::generic::a_tenants_items_claimed_worked_kept_and_reaped(&backend::pool_of(2), &tenant);

    let states: Vec<String> = items(&mut connection(), &tenant)
        .into_iter()
        .map(|item| item.state)
        .collect();
    assert_eq!(states, ["done", "done", "done", "queued"]);
}

#[test]
fn composite_keys_are_taken_as_users_write_them_a_str_and_an_integer_in_a_tuple() {
    let conn = &mut connection();
    let tenant = tenant(conn, 3);
    let claim = Claim::new("worker-1").unwrap();
    let won = lease_items::table
        .claim_row((tenant.as_str(), 1), minute())
        .by(&claim)
        .returning(lease_items::item_no)
        .run::<i64>(conn)
        .unwrap()
        .won()
        .expect("item 1 is free");
    assert_eq!(won.held().keys(), [key(&tenant, 1)]);
    lease_items::table
        .claim_row((tenant.as_str(), 2_i32), minute())
        .by(&claim)
        .returning(lease_items::item_no)
        .run::<i64>(conn)
        .unwrap()
        .won()
        .expect("item 2 is free, named by an i32");
    // Any iterator of such keys, an array or a map over the item numbers.
    let released = lease_items::table
        .held_rows(&claim, [(tenant.as_str(), 1), (tenant.as_str(), 3)])
        .release()
        .run(conn)
        .unwrap();
    assert_eq!(released, [key(&tenant, 1)], "item 3 was never held");
    let renewed = lease_items::table
        .held_rows(&claim, (2..=2).map(|no| (tenant.as_str(), no)))
        .renew()
        .run(conn)
        .unwrap();
    assert_eq!(renewed, [key(&tenant, 2)]);
}
