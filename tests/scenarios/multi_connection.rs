// Every statement of the library on a connection enum of Diesel's `#[derive(MultiConnection)]`
// (tests/common/any.rs), connected to this backend: what a function over every backend without
// a bound relies on.

use std::time::Duration;

use diesel::prelude::*;
use diesel_lease::prelude::*;

use crate::common::any::{self, AnyConnection};
use crate::common::items::{lease_items, Item};

#[test]
fn the_scenario_written_once_runs_on_a_multi_connection_enum_connected_to_this_backend() {
    let tenant = super::composite::tenant(&mut super::support::connection(), 4);
    let pool = any::pool(backend::url(), 2);

    crate::generic::a_tenants_items_claimed_worked_kept_and_reaped(&pool, &tenant);

    let states: Vec<String> = lease_items::table
        .filter(lease_items::tenant.eq(&tenant))
        .order_by(lease_items::item_no)
        .select(lease_items::state)
        .load(&mut super::support::connection())
        .unwrap();
    assert_eq!(states, ["done", "done", "done", "queued"]);
}

/// A bound-free function of a user's, as the guide shows it: a claim with a change of status, a
/// rival refused and told by whom, and a release with another change.
fn finish_item(
    conn: &mut AnyConnection,
    key: (&str, i64),
    worker: &Claim,
) -> Result<Option<String>, diesel_lease::Error> {
    let lease = Lease::from_secs(60)?;
    let claimed = lease_items::table
        .claim_row(key, lease)
        .by(worker)
        .set(lease_items::state.eq("running"))
        .returning(lease_items::state)
        .run::<String>(conn)?;
    match claimed {
        Claimed::Won(won) => {
            won.release().set(lease_items::state.eq("done")).run(conn)?;
            Ok(Some(won.into_row()))
        }
        Claimed::Refused(refused) => match refused.why() {
            Refusal::Held(holder) => Ok(Some(format!("held by {}", holder.owner))),
            _ => Ok(None),
        },
    }
}

#[test]
fn a_function_over_every_backend_needs_no_bound_and_sees_the_database_clock_in_diesels_own_queries()
{
    let tenant = super::composite::tenant(&mut super::support::connection(), 2);
    let pool = any::pool(backend::url(), 2);
    let conn = &mut *pool.get().unwrap();
    let worker = Claim::new("any-worker").unwrap();

    assert_eq!(
        finish_item(conn, (&tenant, 1), &worker).unwrap().as_deref(),
        Some("running"),
        "the row as the claim left it"
    );
    let rival = Claim::new("any-rival").unwrap();
    let held = lease_items::table
        .claim_row((tenant.as_str(), 2), Lease::from_secs(60).unwrap())
        .by(&rival)
        .returning(lease_items::item_no)
        .run::<i64>(conn)
        .unwrap();
    assert!(held.won().is_some());
    assert_eq!(
        finish_item(conn, (&tenant, 2), &worker).unwrap().as_deref(),
        Some("held by any-rival")
    );

    // The library's SQL nodes in Diesel's own statements on the enum: `now()` and a predicate.
    let claimed_by_now: i64 = lease_items::table
        .filter(lease_items::tenant.eq(&tenant))
        .filter(lease_items::held_since.le(now()))
        .count()
        .get_result(conn)
        .unwrap();
    assert_eq!(
        claimed_by_now, 1,
        "item 2, claimed no later than the database's now"
    );
    let outlived = |conn: &mut AnyConnection| -> i64 {
        lease_items::table
            .filter(lease_items::tenant.eq(&tenant))
            .filter(lease_items::table.outlived(Lease::from_secs(60).unwrap()))
            .count()
            .get_result(conn)
            .unwrap()
    };
    assert_eq!(outlived(conn), 0, "item 2 is just claimed");
    diesel::update(lease_items::table.find((&tenant, 2)))
        .set(lease_items::table.renewed_ago(Age::new(Duration::from_secs(120)).unwrap()))
        .execute(conn)
        .unwrap();
    assert_eq!(
        outlived(conn),
        1,
        "item 2, renewed two minutes ago by the database's clock"
    );
    let states: Vec<String> = lease_items::table
        .filter(lease_items::tenant.eq(&tenant))
        .order_by(lease_items::item_no)
        .select(lease_items::state)
        .load(conn)
        .unwrap();
    assert_eq!(states, ["done", "queued"]);
}

/// A wait on the enum: the claims and reads it is made of run on the connection inside, and a
/// transaction of the enum's is seen as the caller's.
#[test]
fn a_wait_runs_on_a_multi_connection_enum_and_is_refused_inside_its_transaction() {
    let tenant = super::composite::tenant(&mut super::support::connection(), 2);
    let pool = any::pool(backend::url(), 2);
    let conn = &mut *pool.get().unwrap();
    let lease = Lease::from_secs(60).unwrap();
    let wait_for_item = |item_no: i64, owner: &str| {
        lease_items::table
            .claim_row((tenant.as_str(), item_no), lease)
            .by(&Claim::new(owner).unwrap())
            .returning(lease_items::item_no)
            .waiting(Duration::from_millis(300))
            .rechecking_every(Duration::from_millis(100))
    };

    let won = wait_for_item(1, "any-holder").run::<i64>(conn).unwrap();
    assert!(won.is_won(), "a free item: no wait");
    let Claimed::Refused(refused) = wait_for_item(1, "any-waiter").run::<i64>(conn).unwrap() else {
        panic!("held for a minute");
    };
    assert!(
        matches!(refused.why(), Refusal::Held(holder) if holder.owner == "any-holder"),
        "{:?}",
        refused.why()
    );
    // On the pool of enums, each attempt on a connection checked out for it.
    let on_pool = wait_for_item(1, "any-waiter").run_on::<i64, _>(&pool);
    let Claimed::Refused(refused) = on_pool.unwrap() else {
        panic!("held for a minute");
    };
    assert!(matches!(refused.why(), Refusal::Held(_)));

    let inside = conn
        .transaction(|conn| {
            diesel::QueryResult::Ok(wait_for_item(2, "any-waiter").run::<i64>(conn).map(|_| ()))
        })
        .unwrap();
    assert!(
        matches!(inside, Err(diesel_lease::Error::WaitInTransaction)),
        "{inside:?}"
    );
}

/// Every statement on a pool's connection of the enum, spelled as on a pool of one backend's
/// connections: `.run(&mut pool.get()?)`, with no `&mut *`.
#[test]
fn every_statement_runs_on_a_pools_connection_of_the_enum_spelled_as_on_a_native_pool() {
    let tenant = super::composite::tenant(&mut super::support::connection(), 4);
    let pool = any::pool(backend::url(), 2);
    let lease = Lease::from_secs(60).unwrap();
    let (worker, rival) = (
        Claim::new("pooled-worker").unwrap(),
        Claim::new("pooled-rival").unwrap(),
    );
    let key = |item_no: i64| (tenant.clone(), item_no);

    let claimed = lease_items::table
        .claim_row((tenant.as_str(), 1), lease)
        .by(&worker)
        .set(lease_items::state.eq("running"))
        .returning(lease_items::state)
        .run::<String>(&mut pool.get().unwrap())
        .unwrap();
    assert_eq!(
        claimed.won().map(|won| won.into_row()).as_deref(),
        Some("running")
    );
    let batch = lease_items::table
        .claim_batch(2, lease)
        .by(&worker)
        .filter(lease_items::tenant.eq(&tenant))
        .filter(lease_items::state.eq("queued"))
        .order_by(lease_items::item_no)
        .returning(lease_items::item_no)
        .run::<i64>(&mut pool.get().unwrap())
        .unwrap();
    let mut taken = batch.rows().to_vec();
    taken.sort(); // the order a batch's rows come back in is the backend's
    assert_eq!(taken, [2, 3]);

    let Claimed::Refused(refused) = lease_items::table
        .claim_row((tenant.as_str(), 1), lease)
        .by(&rival)
        .run::<Item>(&mut pool.get().unwrap())
        .unwrap()
    else {
        panic!("item 1 is held for a minute");
    };
    let why = refused.why();
    assert!(
        matches!(why, Refusal::Held(holder) if holder.owner == "pooled-worker"),
        "{why:?}"
    );
    let waited = lease_items::table
        .claim_row((tenant.as_str(), 1), lease)
        .by(&rival)
        .waiting(Duration::from_millis(200))
        .rechecking_every(Duration::from_millis(100))
        .run::<Item>(&mut pool.get().unwrap())
        .unwrap();
    assert!(!waited.is_won(), "held for a minute");

    let holders = lease_items::table
        .holders(lease)
        .run(&mut pool.get().unwrap())
        .unwrap();
    let mut mine: Vec<_> = holders
        .into_iter()
        .filter(|holding| holding.key.0 == tenant)
        .map(|holding| holding.key)
        .collect();
    mine.sort();
    assert_eq!(mine, [key(1), key(2), key(3)]);
    let counts = lease_items::table
        .held_per_owner()
        .run(&mut pool.get().unwrap())
        .unwrap();
    assert!(
        counts
            .iter()
            .any(|(owner, held)| owner == "pooled-worker" && *held >= 3),
        "{counts:?}"
    );

    let written = lease_items::table
        .held_rows(&worker, [(tenant.as_str(), 2)])
        .update()
        .set(lease_items::state.eq("half-way"))
        .run(&mut pool.get().unwrap())
        .unwrap();
    assert_eq!(written, [key(2)]);
    let released = lease_items::table
        .held_rows(&worker, [(tenant.as_str(), 1), (tenant.as_str(), 2)])
        .release()
        .set(lease_items::state.eq("done"))
        .run(&mut pool.get().unwrap())
        .unwrap();
    assert_eq!(released.len(), 2);
    diesel::update(lease_items::table.find((&tenant, 3)))
        .set(lease_items::table.renewed_ago(Age::new(Duration::from_secs(120)).unwrap()))
        .execute(&mut pool.get().unwrap())
        .unwrap();
    let reaped = lease_items::table
        .reap(10, lease)
        .filter(lease_items::tenant.eq(&tenant))
        .set(lease_items::state.eq("queued"))
        .run(&mut pool.get().unwrap())
        .unwrap();
    assert_eq!(reaped, [key(3)], "outlived by the database's clock");

    let health = lease_items::table
        .health()
        .run(&mut pool.get().unwrap())
        .unwrap();
    assert_eq!(health.table(), "lease_items");
    let states: Vec<String> = lease_items::table
        .filter(lease_items::tenant.eq(&tenant))
        .order_by(lease_items::item_no)
        .select(lease_items::state)
        .load(&mut pool.get().unwrap())
        .unwrap();
    assert_eq!(states, ["done", "done", "queued", "queued"]);
}
