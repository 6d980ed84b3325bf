// The events' scenario, included once per backend by tests/events.rs.
use std::time::Duration;

use diesel::prelude::*;
use diesel_lease::prelude::*;
use diesel_lease::{Keeper, KeeperSettings};

use crate::common::jobs::{lease_jobs, renamed_jobs};
use crate::common::{after_rounds, eventually, unique_id};

#[test]
fn acquired_renewed_lost_and_released_name_table_owner_and_token_and_a_reap_its_table_and_rows() {
    crate::events();
    let conn = &mut connection();
    let claim = Claim::new(&unique_id("owner")).unwrap();
    let ids = queued_jobs(conn, 3, "queued");
    let held = claim_all(conn, &ids, &claim, minute());
    // Its drop waits for the stop's events however loaded the machine: they are asserted.
    let keeper = Keeper::start(
        backend::pool_of(2),
        KeeperSettings::new(minute())
            .every(Duration::from_millis(20))
            .drop_within(Duration::from_secs(30)),
    )
    .unwrap();
    let kept = keeper.keep(&held).unwrap();
    // One row is taken from the keeper behind its back; one is reaped later.
    diesel::update(lease_jobs::table.find(&ids[0]))
        .set(lease_jobs::table.released())
        .execute(conn)
        .unwrap();
    eventually("the keeper finds the row lost", || !kept.is_held());
    // Handed back first: a round after the release below would count the row taken over too.
    let rest = kept.stop_keeping();
    assert_eq!(
        lease_jobs::table
            .held_rows(&claim, vec![ids[1].clone()])
            .release()
            .run(conn)
            .unwrap(),
        [ids[1].clone()]
    );
    assert_eq!(rest.release().run(conn).unwrap(), [ids[2].clone()]);
    // The keeper stops on this thread, so its last event is this keeper's alone.
    let ((), stopped) = crate::events_during(|| drop(keeper));
    claim_all(conn, &ids[2..], &claim, minute());
    age(conn, &ids[2], Duration::from_secs(120));
    // The reap runs on this thread, under a collector of its own: the other backends' copies of
    // this test reap from a table of the same name at the same time. It reaps through the
    // `table!` whose Rust name is not the table's: its event names the SQL one.
    let (reaped, reap_events) = crate::events_during(|| {
        renamed_jobs::table
            .reap(10, minute())
            .filter(renamed_jobs::id.eq_any(&ids))
            .run(conn)
            .unwrap()
    });
    assert_eq!(reaped, [ids[2].clone()]);

    let events = crate::events_of(claim.owner());
    let said = |message: &str, level: &str| {
        events.iter().any(|line| {
            line.contains(message)
                && line.contains(level)
                && names_lease_jobs(line)
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
    assert!(
        stopped.lines().any(|line| line.contains("keeper stopped")
            && line.contains("INFO")
            && line.contains("rows_taken_over=1")
            && line.contains("rows_unconfirmed=0")
            && line.contains("failed_renewals=0")
            && line.contains("smallest_margin_us=")),
        "the keeper's stats, as fields: {stopped}"
    );
    assert!(
        crate::events_of("keeper round")
            .iter()
            .any(|line| line.contains("DEBUG") && line.contains("rows_renewed=")),
        "a round's stats, as fields"
    );
    assert!(
        reap_events
            .lines()
            .any(|line| line.contains("leases reaped")
                && line.contains("INFO")
                && names_lease_jobs(line)
                && line.contains("rows=1")),
        "{reap_events}"
    );
}

/// The event names the table `lease_jobs` as its SQL names it, exactly: not a Rust path that
/// ends in it (`..::lease_jobs::table`).
fn names_lease_jobs(line: &str) -> bool {
    line.contains(r#"table="lease_jobs" "#)
}

#[test]
fn a_drop_that_finds_no_pool_connection_leaves_the_lease_to_run_out_and_warns() {
    crate::events();
    let conn = &mut connection();
    let claim = Claim::new(&unique_id("owner")).unwrap();
    let ids = queued_jobs(conn, 1, "queued");
    let held = claim_all(conn, &ids, &claim, minute());
    let keepers_pool = backend::pool_of(1);
    let keeper = Keeper::start(
        keepers_pool.clone(),
        KeeperSettings::new(minute()).every(Duration::from_millis(20)),
    )
    .unwrap();
    let kept = keeper.keep(&held).unwrap();

    let busy = keepers_pool.get().unwrap(); // the keeper's only connection, taken by the work
    drop(kept);
    drop(busy);

    // Renewed no more: aged past the lease, the row stays so while the keeper goes on.
    age(conn, &ids[0], Duration::from_secs(61));
    after_rounds(&keeper, 3);
    let outlived: i64 = lease_jobs::table
        .find(&ids[0])
        .filter(lease_jobs::table.outlived(minute()))
        .count()
        .get_result(conn)
        .unwrap();
    assert_eq!(
        outlived, 1,
        "the keeper stopped renewing what it could not release"
    );
    assert_eq!(
        job(conn, &ids[0]).lease_token.as_deref(),
        Some(claim.token()),
        "still held: it runs out with its lease"
    );
    let events = crate::events_of(claim.owner());
    assert!(
        events.iter().any(|line| line.contains("lease not released")
            && line.contains("WARN")
            && line.contains(claim.token())),
        "{events:#?}"
    );
}

#[test]
fn an_empty_batch_kept_past_its_longest_hold_tells_operators_of_no_loss() {
    crate::events();
    let conn = &mut connection();
    let claim = Claim::new(&unique_id("owner")).unwrap();
    let batch = lease_jobs::table
        .claim_batch(10, minute())
        .by(&claim)
        .filter(lease_jobs::status.eq("no such status"))
        .returning(lease_jobs::id)
        .run::<String>(conn)
        .unwrap();
    let keeper = Keeper::start(
        backend::pool_of(2),
        KeeperSettings::new(minute())
            .every(Duration::from_millis(20))
            .at_most(Duration::from_millis(100)),
    )
    .unwrap();
    let kept = keeper.keep(batch.held()).unwrap();
    after_rounds(&keeper, 20);
    assert!(kept.is_held());
    let events = crate::events_of(claim.owner());
    assert!(
        !events.iter().any(|line| line.contains("lease lost")),
        "nothing was held, so nothing was lost: {events:#?}"
    );
}

#[test]
fn a_keeper_whose_pool_may_wait_longer_than_its_margin_for_a_connection_is_warned_of() {
    let settings = KeeperSettings::new(minute()); // a margin of 12 s
    let (keeper, slow) = crate::events_during(|| {
        Keeper::start(backend::pool_waiting(1, Duration::from_secs(30)), settings)
    });
    drop(keeper.unwrap());
    assert!(
        slow.lines().any(|line| line.contains("WARN")
            && line.contains("longer for a connection than the keeper's margin")
            && line.contains("checkout_timeout_ms=30000")
            && line.contains("margin_ms=12000")),
        "{slow}"
    );

    let (keeper, quick) = crate::events_during(|| {
        Keeper::start(backend::pool_waiting(1, Duration::from_secs(2)), settings)
    });
    drop(keeper.unwrap());
    assert!(!quick.contains("margin"), "{quick}");
}

/// A claim refused because another claim holds the row lost an ordinary race, not a write
/// conflict: nothing is counted or told as one.
#[test]
fn a_claim_refused_by_a_holder_is_no_lost_conflict() {
    let conn = &mut connection();
    let ids = queued_jobs(conn, 1, "queued");
    claim_all(conn, &ids, &Claim::new("holder").unwrap(), minute());
    let (won, events) = crate::events_during(|| {
        lease_jobs::table
            .claim_row(&ids[0], minute())
            .by(&Claim::new(&unique_id("owner")).unwrap())
            .returning(lease_jobs::id)
            .run::<String>(conn)
            .map(|claimed| claimed.won().is_some())
    });
    assert!(!won.unwrap(), "refused");
    assert!(!events.contains("write conflict lost"), "{events}");
}
