//! A table author's scenario written once, as a function generic over the connection, and run
//! on every backend (by tests/scenarios/composite.rs): each statement it runs is one bound, on
//! the statement's type, as Diesel's own `LoadQuery` is. The statements' types are named by the
//! functions that build them, through `auto_type` with `diesel_lease::dsl` as its `dsl_path`, a
//! holder's by what holds the rows in `diesel_lease::dsl`, and Diesel's parts by `diesel::dsl`.
use std::time::Duration;

use diesel::query_dsl::methods::ExecuteDsl;
use diesel::r2d2::{ConnectionManager, Pool, R2D2Connection};
use diesel::{BoolExpressionMethods, ExpressionMethods, QueryDsl, RunQueryDsl};
use diesel_lease::prelude::*;
use diesel_lease::{dsl, Keepable, Keeper, KeeperSettings, LeaseQuery, Node, OwnedRows};

use diesel_lease::__private::RenewedAgo;

use crate::common::items::{lease_items, Item};

type Items = lease_items::table;
type Key = (String, i64);
/// `lease_items::state.eq("..")`: a condition, or the caller's change.
type StateIs = diesel::dsl::Eq<lease_items::state, &'static str>;

/// Item `key`, claimed by `claim`.
#[diesel::dsl::auto_type(dsl_path = "diesel_lease::dsl")]
fn claim_item<'a>(key: Key, lease: Lease, claim: &'a Claim) -> _ {
    lease_items::table.claim_row(key, lease).by(claim)
}

/// A tenant's queued items, claimed by `claim` and started.
#[diesel::dsl::auto_type(dsl_path = "diesel_lease::dsl")]
fn claim_of_tenant<'a>(size: usize, lease: Lease, claim: &'a Claim, tenant: String) -> _ {
    let queued: StateIs = lease_items::state.eq("queued");
    let running: StateIs = lease_items::state.eq("running");
    lease_items::table
        .claim_batch(size, lease)
        .by(claim)
        .filter(lease_items::tenant.eq(tenant).and(queued))
        .set(running)
}

/// A tenant's outlived items, queued again.
#[diesel::dsl::auto_type(dsl_path = "diesel_lease::dsl")]
fn reap_of_tenant(size: usize, lease: Lease, tenant: String) -> _ {
    let queued: StateIs = lease_items::state.eq("queued");
    lease_items::table
        .reap(size, lease)
        .filter(lease_items::tenant.eq(tenant))
        .set(queued)
}

/// Who holds which items.
#[diesel::dsl::auto_type(dsl_path = "diesel_lease::dsl")]
fn holders(lease: Lease) -> _ {
    lease_items::table.holders(lease)
}

/// How many items each owner holds.
#[diesel::dsl::auto_type(dsl_path = "diesel_lease::dsl")]
fn held_per_owner() -> _ {
    lease_items::table.held_per_owner()
}

/// What item 1's holder won; what items 2 and 3's batch holds.
type WonItem = Won<Item, Items>;
type ItemsBatch = Batch<Item, Items>;
/// `held_by_earlier_lives_of(&node).release().set(..)`; `held_by_owner(owner).release().set(..)`.
type ReleaseEarlierLives = dsl::Release<OwnedRows<Items, Node>, StateIs>;
type ReleaseOwned = dsl::Release<OwnedRows<Items, String>, StateIs>;
/// Diesel's own `diesel::update(items.find(key)).set(items.renewed_ago(age))`.
type AgeItem = diesel::dsl::Update<diesel::dsl::Find<Items, Key>, RenewedAgo<Items>>;

/// A tenant's four queued items, on any connection `C`: item 1 claimed by its key, renewed,
/// written to and finished by its holder while a rival is told why it was refused; items 2 and 3
/// claimed in a batch, read back as held, and finished together; item 4 claimed, kept by a
/// keeper, released through it, claimed again, outlived and reaped; then kept and drained,
/// freed by a node's next life, and released by its owner's name. Only the bounds below, one
/// a statement (and `Keepable` for the keeper), let it run on a backend.
pub fn a_tenants_items_claimed_worked_kept_and_reaped<C>(
    pool: &Pool<ConnectionManager<C>>,
    tenant: &str,
) where
    C: R2D2Connection + 'static,
    for<'a, 'q> claim_item<'a>: LeaseQuery<'q, C, Item>,
    dsl::Renew<WonItem>: for<'q> LeaseQuery<'q, C, Key>,
    dsl::Write<WonItem, StateIs>: for<'q> LeaseQuery<'q, C, Key>,
    dsl::Release<WonItem, StateIs>: for<'q> LeaseQuery<'q, C, Key>,
    for<'a, 'q> claim_of_tenant<'a>: LeaseQuery<'q, C, Item>,
    holders: for<'q> LeaseQuery<'q, C, Key>,
    held_per_owner: for<'q> LeaseQuery<'q, C, (String, i64)>,
    dsl::Release<ItemsBatch, StateIs>: for<'q> LeaseQuery<'q, C, Key>,
    Items: Keepable<C>,
    reap_of_tenant: for<'q> LeaseQuery<'q, C, Key>,
    ReleaseEarlierLives: for<'q> LeaseQuery<'q, C, Key>,
    ReleaseOwned: for<'q> LeaseQuery<'q, C, Key>,
    AgeItem: ExecuteDsl<C>,
{
    let conn = &mut *pool.get().expect("a connection");
    let lease = Lease::from_secs(60).expect("a lease");
    let worker = Claim::new("generic-worker").expect("an owner");
    let key = |item_no: i64| (tenant.to_owned(), item_no);
    let claim_of_tenant =
        |size: usize, claim: &Claim| claim_of_tenant(size, lease, claim, tenant.to_owned());

    // Item 1, by its key.
    let claim_row_of = |item_no: i64, claim: &Claim| claim_item(key(item_no), lease, claim);
    let claim_item = |claim: &Claim| claim_row_of(1, claim);
    let won = claim_item(&worker)
        .run::<Item>(conn)
        .unwrap()
        .won()
        .expect("a free item");
    assert_eq!((won.key(), won.fence()), (&key(1), 1));
    let Claimed::Refused(refused) = claim_item(&Claim::new("generic-rival").unwrap())
        .run::<Item>(conn)
        .unwrap()
    else {
        panic!("the lease is fresh")
    };
    assert!(matches!(refused.why(), Refusal::Held(holder) if holder.owner == "generic-worker"));
    assert!(won.renew().run(conn).unwrap());
    assert!(won
        .update()
        .set(lease_items::state.eq("half way"))
        .run(conn)
        .unwrap());
    assert!(won
        .release()
        .set(lease_items::state.eq("done"))
        .run(conn)
        .unwrap());

    // Items 2 and 3, in a batch, read back as held, finished together.
    let batch = claim_of_tenant(2, &worker).run::<Item>(conn).unwrap();
    let mut held: Vec<Key> = holders(lease)
        .run(conn)
        .unwrap()
        .into_iter()
        .filter(|holding| holding.key.0 == tenant)
        .map(|holding| holding.key)
        .collect();
    held.sort();
    let mut won = batch.keys().to_vec();
    won.sort();
    assert_eq!(held, won);
    assert_eq!(won.len(), 2);
    let owners = held_per_owner().run(conn).unwrap();
    assert!(owners
        .iter()
        .any(|(owner, rows)| owner == "generic-worker" && *rows >= 2));
    let mut done = batch
        .release()
        .set(lease_items::state.eq("done"))
        .run(conn)
        .unwrap();
    done.sort();
    assert_eq!(done, won);

    // Item 4: kept, released through the keeper, claimed again, outlived, reaped.
    let keeper = Keeper::start(pool.clone(), KeeperSettings::new(lease)).unwrap();
    let batch = claim_of_tenant(10, &worker).run::<Item>(conn).unwrap();
    assert_eq!(batch.keys(), [key(4)]);
    let kept = keeper.keep(batch.held()).unwrap();
    assert!(kept.is_held());
    assert_eq!(
        kept.release()
            .set(lease_items::state.eq("queued"))
            .run(conn)
            .unwrap(),
        [key(4)]
    );
    drop(keeper);
    let late = claim_of_tenant(10, &Claim::new("generic-late").unwrap())
        .run::<Item>(conn)
        .unwrap();
    assert_eq!(late.keys(), [key(4)]);
    let aged: AgeItem = diesel::update(lease_items::table.find(key(4)))
        .set(lease_items::table.renewed_ago(Age::new(Duration::from_secs(120)).unwrap()));
    aged.execute(conn).unwrap();
    let reap = reap_of_tenant(10, lease, tenant.to_owned());
    assert_eq!(reap.run(conn).unwrap(), [key(4)]);

    // Item 4 again: kept by its key, and drained at shutdown; held by a node's earlier life, and
    // freed by its next; held by an owner, and released by its name.
    let keeper = Keeper::start(pool.clone(), KeeperSettings::new(lease)).unwrap();
    let kept = keeper
        .keep(
            claim_row_of(4, &worker)
                .run::<Item>(conn)
                .unwrap()
                .won()
                .unwrap(),
        )
        .unwrap();
    let drained = keeper.drain().unwrap();
    assert_eq!(drained.rows(), 1);
    let tables: Vec<_> = drained.tables.iter().map(|table| table.table).collect();
    assert_eq!(
        tables,
        ["lease_items"],
        "named as its SQL names it: {drained}"
    );
    assert!(!kept.is_held());
    let name = format!("generic-node-{tenant}");
    let earlier = Node::start(&name).unwrap();
    let held = claim_of_tenant(10, &earlier.claim())
        .run::<Item>(conn)
        .unwrap();
    assert_eq!(held.keys(), [key(4)]);
    let freed: ReleaseEarlierLives = lease_items::table
        .held_by_earlier_lives_of(&Node::start(&name).unwrap())
        .release()
        .set(lease_items::state.eq("queued"));
    assert_eq!(freed.run(conn).unwrap(), [key(4)]);
    // An owner of this tenant's alone: the other tenants' scenarios run meanwhile.
    let owner = format!("generic-owner-{tenant}");
    let held = claim_of_tenant(10, &Claim::new(&owner).unwrap())
        .run::<Item>(conn)
        .unwrap();
    assert_eq!(held.keys(), [key(4)]);
    let released: ReleaseOwned = lease_items::table
        .held_by_owner(&owner)
        .release()
        .set(lease_items::state.eq("queued"));
    assert_eq!(released.run(conn).unwrap(), [key(4)]);
}
