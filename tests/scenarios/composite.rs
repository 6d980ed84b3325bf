// Every operation on a table keyed by a composite primary key, `lease_items (tenant, item_no)`,
// whose lease columns have names of their own (holder, holder_token, held_since, generation):
// included once per backend by tests/lease.rs. Each scenario works on tenants of its own, and
// beside them on a tenant whose rows have the same item numbers, so that a key matched on one
// of its columns alone would show. This file: claims of a row and of a batch, by their keys;
// and the helpers of composite_held.rs and composite_races.rs, included after it.
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
