// The keeper's scenarios, included once per backend by tests/keeper.rs. Rounds of renewals are
// counted, not timed: a test waits for the keeper to make rounds, then asserts what they did.
// This file: renewals, and the losses a keeper reports; and the helpers of the scenario files
// included after it.
use std::sync::atomic::Ordering;
use std::time::Duration;

use diesel::prelude::*;
use diesel_lease::prelude::*;
use diesel_lease::{HeldRows, Keeper, KeeperSettings, LossReason, Node};

use crate::common::jobs::{lease_jobs, Job};
use crate::common::{after_rounds, eventually, unique_id};

/// `count` new jobs, claimed for `worker-1` under `lease`: as the claim holds them.
fn claimed(count: usize, lease: Lease) -> HeldRows<lease_jobs::table> {
    let conn = &mut connection();
    let ids = queued_jobs(conn, count, "queued");
    claim_all(conn, &ids, &Claim::new("worker-1").unwrap(), lease)
}

/// Renews every 20 ms: many rounds pass quickly, none of them near the lease.
fn fast(lease: Lease) -> KeeperSettings {
    KeeperSettings::new(lease).every(Duration::from_millis(20))
}

/// How many of the jobs `ids` are younger than `secs`, by the database's clock: renewed since
/// they were dated back further.
fn fresh_within(ids: &[String], secs: u64) -> i64 {
    lease_jobs::table
        .filter(lease_jobs::id.eq_any(ids))
        .filter(lease_jobs::table.fresh(Lease::from_secs(secs).unwrap()))
        .count()
        .get_result(&mut connection())
        .unwrap()
}

/// Waits for `rounds` more rounds of `keeper`; how many rounds came, and how many `UPDATE`s ran
/// meanwhile on the connections `updates` counts.
fn updates_in_rounds<C: diesel::r2d2::R2D2Connection>(
    keeper: &Keeper<C>,
    updates: &crate::common::Counter,
    rounds: u64,
) -> (u64, u64) {
    let (ran, before) = (updates.load(Ordering::SeqCst), keeper.rounds());
    after_rounds(keeper, rounds);
    (
        keeper.rounds() - before,
        updates.load(Ordering::SeqCst) - ran,
    )
}

#[test]
fn a_row_released_behind_the_keepers_back_is_reported_lost_within_a_round() {
    let held = claimed(3, minute());
    let ids = held.keys().to_vec();
    let keeper = Keeper::start(backend::pool_of(2), fast(minute())).unwrap();
    let kept = keeper.keep(&held).unwrap();
    after_rounds(&keeper, 1);
    assert!(kept.is_held());

    // An operator frees one row.
    diesel::update(lease_jobs::table.find(&ids[0]))
        .set(lease_jobs::table.released())
        .execute(&mut connection())
        .unwrap();
    after_rounds(&keeper, 2);

    assert!(
        !kept.is_held(),
        "the first renewal after the release says so"
    );
    assert_eq!(
        job(&mut connection(), &ids[0]).leased_at,
        None,
        "a renewal changes no row its claim lost"
    );
    let lost = kept.check().expect_err("lost");
    assert_eq!(
        (lost.rows, lost.reason),
        (vec![ids[0].clone()], LossReason::TakenOver)
    );
    let mut rest = ids[1..].to_vec();
    rest.sort();
    let mut released = kept.release().run(&mut connection()).unwrap();
    released.sort();
    assert_eq!(
        released, rest,
        "the other rows are still kept: its release frees them"
    );
}

#[test]
fn renewals_move_the_lease_forward_by_the_databases_clock() {
    let lease = Lease::from_secs(30).unwrap();
    let held = claimed(2, lease);
    let ids = held.keys().to_vec();
    let keeper = Keeper::start(backend::pool_of(2), fast(lease)).unwrap();
    let _kept = keeper.keep(&held).unwrap();
    // Aged after `keep`, whose own first renewal would otherwise make them fresh: only the
    // keeper's rounds can.
    age_jobs(&mut connection(), &ids, Duration::from_secs(25));
    after_rounds(&keeper, 2);

    assert_eq!(
        fresh_within(&ids, 10),
        2,
        "both rows were renewed, 25 s old before"
    );
}

#[test]
fn a_row_taken_over_by_another_kept_claim_is_renewed_for_its_new_holder_alone() {
    let second_claim = Claim::new("worker-2").unwrap();
    // What is tested is one round renewing both claims together; a round that falls between the
    // two keeps would find the loss alone, so such an attempt is made again.
    for _attempt in 0..10 {
        // Rounds a second apart: both claims are usually kept before the next round.
        let keeper = Keeper::start(
            backend::pool_of(2),
            KeeperSettings::new(minute()).every(Duration::from_secs(1)),
        )
        .unwrap();
        let held = claimed(2, minute());
        let ids = held.keys().to_vec();
        let first = keeper.keep(&held).unwrap();
        let rounds_before = keeper.rounds();
        // An operator frees the second row, and another worker claims it: both claims are kept.
        let conn = &mut connection();
        diesel::update(lease_jobs::table.find(&ids[1]))
            .set(lease_jobs::table.released())
            .execute(conn)
            .unwrap();
        // A renewal of the first claim may hold the row for a moment; the claim passes it by then.
        let second_held = claim_all(conn, &ids[1..], &second_claim, minute());
        let second = keeper.keep(&second_held).unwrap();
        if keeper.rounds() != rounds_before || !first.is_held() {
            continue;
        }
        // Both rows dated back, so that only rounds renewing both claims, each row under its
        // own claim's token, make them fresh again; two rounds, so that one began after this.
        age_jobs(conn, &ids, Duration::from_secs(50));
        after_rounds(&keeper, 2);

        let lost = first
            .check()
            .expect_err("the first claim lost the second row");
        assert_eq!(
            (lost.rows, lost.reason),
            (vec![ids[1].clone()], LossReason::TakenOver)
        );
        assert!(
            second.is_held(),
            "the row is renewed for the claim that holds it"
        );
        let mut fresh: Vec<(String, Option<String>)> = lease_jobs::table
            .filter(lease_jobs::id.eq_any(&ids))
            .filter(lease_jobs::table.fresh(Lease::from_secs(10).unwrap()))
            .select((lease_jobs::id, lease_jobs::lease_token))
            .load(conn)
            .unwrap();
        fresh.sort();
        let mut expected = vec![
            (ids[0].clone(), Some(held.claim().token().to_owned())),
            (ids[1].clone(), Some(second_claim.token().to_owned())),
        ];
        expected.sort();
        assert_eq!(
            fresh, expected,
            "each row renewed under its own claim's token"
        );
        assert_eq!(
            first.release().run(conn).unwrap(),
            [ids[0].clone()],
            "the first claim still keeps its own row: its release frees it"
        );
        return;
    }
    panic!("a round fell between the two keeps in every attempt");
}

#[test]
fn a_renewal_that_cannot_get_through_is_reported_lost_before_the_lease_runs_out() {
    use diesel::connection::SimpleConnection;
    // A real expiry: a 4 s lease, trusted for 2 s after each confirmed renewal, so that a
    // loaded machine has two seconds between the keeper giving up and the lease running out.
    let lease = Lease::from_secs(4).unwrap();
    let held = claimed(1, lease);
    let id = &held.keys()[0];
    let keeper = Keeper::start(
        backend::pool_of(2),
        KeeperSettings::new(lease)
            .every(Duration::from_millis(100))
            .margin(Duration::from_secs(2)),
    )
    .unwrap();
    let kept = keeper.keep(&held).unwrap();
    after_rounds(&keeper, 1);
    assert!(kept.is_held());

    // Another session holds the row (on SQLite, the whole database): renewals cannot get through.
    let mut blocker = backend::connect();
    blocker.batch_execute(backend::BEGIN_WRITE).unwrap();
    diesel::update(lease_jobs::table.find(id))
        .set(lease_jobs::status.eq("running"))
        .execute(&mut blocker)
        .unwrap();
    eventually("the keeper gives the lease up", || !kept.is_held());
    // The moment the keeper gives up, the database still counts the lease as running.
    let fresh: i64 = lease_jobs::table
        .find(id)
        .filter(lease_jobs::table.fresh(lease))
        .count()
        .get_result(&mut blocker)
        .unwrap();
    blocker.batch_execute("ROLLBACK").unwrap();

    assert_eq!(
        kept.check().expect_err("lost").reason,
        LossReason::Unconfirmed
    );
    assert_eq!(
        fresh, 1,
        "lost by the keeper's reckoning before the lease ran out by the database's"
    );

    // The blocked renewal gets through now; the work was told of the loss, and it stays told.
    let renewals = keeper.renewal_statements();
    after_rounds(&keeper, 3);
    assert_eq!(
        kept.check().expect_err("still lost").reason,
        LossReason::Unconfirmed
    );
    assert!(
        keeper.renewal_statements() <= renewals + 1,
        "no renewals after the loss but the one in flight"
    );
}

#[test]
fn a_claim_kept_after_it_lost_its_rows_is_told_at_once() {
    let late = claimed(1, minute());
    let conn = &mut connection();
    age_jobs(conn, late.keys(), Duration::from_secs(61));
    let rescuer = claim_all(
        conn,
        late.keys(),
        &Claim::new("worker-2").unwrap(),
        minute(),
    );
    let keeper = Keeper::start(backend::pool_of(2), fast(minute())).unwrap();

    let kept = keeper.keep(&late).unwrap();

    let lost = kept
        .check()
        .expect_err("the keep's own renewal found the row taken over");
    assert_eq!(
        (lost.rows.as_slice(), lost.reason),
        (late.keys(), LossReason::TakenOver)
    );
    assert_eq!(
        job(conn, &late.keys()[0]).lease_token.as_deref(),
        Some(rescuer.claim().token()),
        "and changed nothing"
    );
}

#[test]
fn a_kept_claim_is_not_held_once_its_keeper_has_stopped() {
    let held = claimed(1, minute());
    let keeper = Keeper::start(backend::pool_of(2), fast(minute())).unwrap();
    let kept = keeper.keep(&held).unwrap();
    assert!(kept.is_held());

    drop(keeper);

    eventually("the keeper released it: the work must stop", || {
        !kept.is_held()
    });
    assert_eq!(
        kept.check().expect_err("released").reason,
        LossReason::Released
    );
}

#[test]
fn settings_that_cannot_keep_a_lease_are_refused_before_any_thread_starts() {
    let lease = Lease::from_secs(3).unwrap();
    for settings in [
        KeeperSettings::new(lease).every(Duration::from_secs(3)),
        KeeperSettings::new(lease).margin(Duration::from_secs(3)),
        KeeperSettings::new(lease).every(Duration::ZERO),
        KeeperSettings::new(lease).at_least(Duration::ZERO),
        KeeperSettings::new(lease).at_most(Duration::ZERO),
        KeeperSettings::new(lease)
            .at_least(Duration::from_secs(61))
            .at_most(Duration::from_secs(60)),
    ] {
        let started = Keeper::start(backend::pool_of(1), settings);
        assert!(
            matches!(started, Err(diesel_lease::Error::InvalidSettings(_))),
            "{settings:?}: {started:?}"
        );
    }
}
