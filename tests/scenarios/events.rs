// The events' scenario, included once per backend by tests/events.rs.
use std::time::Duration;

use diesel::prelude::*;
use diesel_lease::prelude::*;
use diesel_lease::{Keeper, KeeperSettings};

use crate::common::jobs::lease_jobs;
use crate::common::unique_id;

#[test]
fn acquired_renewed_lost_released_and_reaped_reach_the_operator_with_table_owner_and_token() {
    let Some(pool) = backend::pool() else { return };
    crate::events();
    let owner = unique_id("owner");
    let minute = Lease::from_secs(60).unwrap();
    let ids: Vec<String> = (0..3).map(|_| unique_id("evented")).collect();
    for id in &ids {
        diesel::insert_into(lease_jobs::table)
            .values((lease_jobs::id.eq(id), lease_jobs::status.eq("queued")))
            .execute(&mut pool.get().unwrap())
            .unwrap();
    }
    let batch: Batch<String> = lease_jobs::table
        .claim_batch(3, minute)
        .filter(lease_jobs::id.eq_any(&ids))
        .returning(lease_jobs::id)
        .by(&owner, &mut pool.get().unwrap())
        .unwrap();
    let (rows, claim) = batch.into_parts();
    let keeper = Keeper::start(
        backend::pool_of(2),
        KeeperSettings::new(minute).every(Duration::from_millis(20)),
    )
    .unwrap();
    let kept = keeper.keep(lease_jobs::table, claim.clone(), rows).unwrap();
    // One row is taken from the keeper behind its back; one is reaped later.
    diesel::update(lease_jobs::table.find(&ids[0]))
        .set(lease_jobs::table.released())
        .execute(&mut pool.get().unwrap())
        .unwrap();
    for _ in 0..2_000 {
        if !kept.is_held() {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(!kept.is_held());
    assert_eq!(
        lease_jobs::table
            .release_rows(&claim, vec![ids[1].clone()])
            .run(&mut pool.get().unwrap())
            .unwrap(),
        [ids[1].clone()]
    );
    drop(kept);
    drop(keeper);
    let taken: Batch<String> = lease_jobs::table
        .claim_batch(1, minute)
        .filter(lease_jobs::id.eq(&ids[2]))
        .returning(lease_jobs::id)
        .by(&owner, &mut pool.get().unwrap())
        .unwrap();
    assert_eq!(taken.len(), 1);
    diesel::update(lease_jobs::table.find(&ids[2]))
        .set(lease_jobs::table.renewed_ago(Age::new(Duration::from_secs(120)).unwrap()))
        .execute(&mut pool.get().unwrap())
        .unwrap();
    let reaped: Vec<String> = lease_jobs::table
        .reap(10, minute)
        .filter(lease_jobs::worker.eq(&owner))
        .run(&mut pool.get().unwrap())
        .unwrap();
    assert_eq!(reaped, [ids[2].clone()]);

    let events = crate::events_of(&owner);
    let said = |message: &str, level: &str| {
        events.iter().any(|line| {
            line.contains(message)
                && line.contains(level)
                && line.contains("lease_jobs")
                && line.contains(claim.token())
        })
    };
    assert!(said("lease acquired", "INFO"), "{events:#?}");
    assert!(said("lease renewed", "DEBUG"), "{events:#?}");
    assert!(
        said("lease lost", "WARN"),
        "a lost lease is a warning: {events:#?}"
    );
    assert!(said("lease released", "INFO"), "{events:#?}");
    let all = crate::events().lock().unwrap().clone();
    let all = String::from_utf8_lossy(&all);
    assert!(
        all.lines()
            .any(|line| line.contains("leases reaped") && line.contains("lease_jobs")),
        "reaped"
    );
}

#[test]
fn a_drop_that_finds_no_pool_connection_leaves_the_lease_to_run_out_and_warns() {
    let Some(pool) = backend::pool() else { return };
    crate::events();
    let owner = unique_id("owner");
    let minute = Lease::from_secs(60).unwrap();
    let id = unique_id("unreleased");
    diesel::insert_into(lease_jobs::table)
        .values((lease_jobs::id.eq(&id), lease_jobs::status.eq("queued")))
        .execute(&mut pool.get().unwrap())
        .unwrap();
    let batch: Batch<String> = lease_jobs::table
        .claim_batch(1, minute)
        .filter(lease_jobs::id.eq(&id))
        .returning(lease_jobs::id)
        .by(&owner, &mut pool.get().unwrap())
        .unwrap();
    let (rows, claim) = batch.into_parts();
    let keepers_pool = backend::pool_of(1);
    let keeper = Keeper::start(
        keepers_pool.clone(),
        KeeperSettings::new(minute).every(Duration::from_millis(20)),
    )
    .unwrap();
    let kept = keeper.keep(lease_jobs::table, claim.clone(), rows).unwrap();

    let busy = keepers_pool.get().unwrap(); // the keeper's only connection, taken by the work
    drop(kept);
    drop(busy);

    // Renewed no more: aged past the lease, the row stays so while the keeper goes on.
    diesel::update(lease_jobs::table.find(&id))
        .set(lease_jobs::table.renewed_ago(Age::new(Duration::from_secs(61)).unwrap()))
        .execute(&mut pool.get().unwrap())
        .unwrap();
    crate::common::after_rounds(&keeper, 3);
    let outlived: i64 = lease_jobs::table
        .find(&id)
        .filter(lease_jobs::table.outlived(minute))
        .count()
        .get_result(&mut pool.get().unwrap())
        .unwrap();
    assert_eq!(
        outlived, 1,
        "the keeper stopped renewing what it could not release"
    );

    let token: Option<String> = lease_jobs::table
        .find(&id)
        .select(lease_jobs::lease_token)
        .first(&mut pool.get().unwrap())
        .unwrap();
    assert_eq!(
        token.as_deref(),
        Some(claim.token()),
        "still held: it runs out with its lease"
    );
    let events = crate::events_of(&owner);
    assert!(
        events.iter().any(|line| line.contains("lease not released")
            && line.contains("WARN")
            && line.contains(claim.token())),
        "{events:#?}"
    );
}
