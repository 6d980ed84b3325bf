// The keeper's scenarios, included once per backend by tests/keeper.rs. Rounds of renewals are
// counted, not timed: a test waits for the keeper to make rounds, then asserts what they did.
use std::time::Duration;

use diesel::prelude::*;
use diesel_lease::prelude::*;
use diesel_lease::{Keeper, KeeperSettings, LossReason};

use crate::common::jobs::{lease_jobs, Job};
use crate::common::{after_rounds, unique_id};

type Pool = diesel::r2d2::Pool<diesel::r2d2::ConnectionManager<backend::Conn>>;

fn queued(pool: &Pool, count: usize) -> Vec<String> {
    let ids: Vec<String> = (0..count).map(|_| unique_id("kept")).collect();
    let rows: Vec<_> = ids
        .iter()
        .map(|id| (lease_jobs::id.eq(id), lease_jobs::status.eq("queued")))
        .collect();
    for chunk in rows.chunks(500) {
        diesel::insert_into(lease_jobs::table)
            .values(chunk)
            .execute(&mut pool.get().unwrap())
            .unwrap();
    }
    ids
}

fn claimed(pool: &Pool, ids: &[String], lease: Lease) -> (Vec<String>, Claim) {
    let batch: Batch<String> = lease_jobs::table
        .claim_batch(ids.len(), lease)
        .filter(lease_jobs::id.eq_any(ids))
        .set(lease_jobs::status.eq("running"))
        .returning(lease_jobs::id)
        .by("worker-1", &mut pool.get().unwrap())
        .unwrap();
    assert_eq!(batch.len(), ids.len());
    batch.into_parts()
}

fn job(pool: &Pool, id: &str) -> Job {
    lease_jobs::table
        .find(id)
        .select(Job::as_select())
        .first(&mut pool.get().unwrap())
        .unwrap()
}

/// Renews every 20 ms: many rounds pass quickly, none of them near the lease.
fn fast(lease: Lease) -> KeeperSettings {
    KeeperSettings::new(lease).every(Duration::from_millis(20))
}

fn minute() -> Lease {
    Lease::from_secs(60).unwrap()
}

#[test]
fn a_row_released_behind_the_keepers_back_is_reported_lost_within_a_round() {
    let Some(shared) = backend::pool() else {
        return;
    };
    let ids = queued(&shared, 3);
    let (ids, claim) = claimed(&shared, &ids, minute());
    let keeper = Keeper::start(backend::pool_of(2), fast(minute())).unwrap();
    let kept = keeper.keep(lease_jobs::table, claim, ids.clone()).unwrap();
    after_rounds(&keeper, 1);
    assert!(kept.is_held());

    // An operator frees one row.
    diesel::update(lease_jobs::table.find(&ids[0]))
        .set(lease_jobs::table.released())
        .execute(&mut shared.get().unwrap())
        .unwrap();
    after_rounds(&keeper, 2);

    assert!(
        !kept.is_held(),
        "the first renewal after the release says so"
    );
    assert_eq!(
        job(&shared, &ids[0]).leased_at,
        None,
        "a renewal changes no row its claim lost"
    );
    let lost = kept.check().expect_err("lost");
    assert_eq!(
        (lost.rows, lost.reason),
        (vec![ids[0].clone()], LossReason::TakenOver)
    );
    let mut held = kept.held();
    held.sort();
    let mut rest = ids[1..].to_vec();
    rest.sort();
    assert_eq!(held, rest, "the other rows are still kept");
}

#[test]
fn renewals_move_the_lease_forward_by_the_databases_clock() {
    let Some(shared) = backend::pool() else {
        return;
    };
    let ids = queued(&shared, 2);
    let lease = Lease::from_secs(30).unwrap();
    let (ids, claim) = claimed(&shared, &ids, lease);
    for id in &ids {
        diesel::update(lease_jobs::table.find(id))
            .set(lease_jobs::table.renewed_ago(Age::new(Duration::from_secs(25)).unwrap()))
            .execute(&mut shared.get().unwrap())
            .unwrap();
    }
    let keeper = Keeper::start(backend::pool_of(2), fast(lease)).unwrap();
    let _kept = keeper.keep(lease_jobs::table, claim, ids.clone()).unwrap();
    after_rounds(&keeper, 2);

    let young: i64 = lease_jobs::table
        .filter(lease_jobs::id.eq_any(&ids))
        .filter(lease_jobs::table.fresh(Lease::from_secs(10).unwrap()))
        .count()
        .get_result(&mut shared.get().unwrap())
        .unwrap();
    assert_eq!(young, 2, "both rows were renewed, 25 s old before");
}

#[test]
fn release_is_guarded_by_the_token_and_never_twice_and_a_drop_releases() {
    let Some(shared) = backend::pool() else {
        return;
    };
    let ids = queued(&shared, 3);
    let (ids, claim) = claimed(&shared, &ids, minute());
    let keeper = Keeper::start(backend::pool_of(2), fast(minute())).unwrap();
    let kept = keeper
        .keep(lease_jobs::table, claim.clone(), ids[..2].to_vec())
        .unwrap();
    let dropped = keeper
        .keep(lease_jobs::table, claim, ids[2..].to_vec())
        .unwrap();

    let mut released = kept.release().unwrap();
    released.sort();
    let mut expected = ids[..2].to_vec();
    expected.sort();
    assert_eq!(released, expected);
    drop(dropped);

    for id in &ids {
        assert_eq!(job(&shared, id).lease_token, None, "{id} released");
    }
}

#[test]
fn dropping_the_keeper_releases_what_it_keeps() {
    let Some(shared) = backend::pool() else {
        return;
    };
    let ids = queued(&shared, 2);
    let (ids, claim) = claimed(&shared, &ids, minute());
    let keeper = Keeper::start(backend::pool_of(2), fast(minute())).unwrap();
    let kept = keeper.keep(lease_jobs::table, claim, ids.clone()).unwrap();

    drop(keeper);

    for id in &ids {
        assert_eq!(
            job(&shared, id).lease_token,
            None,
            "{id} released when the keeper stopped"
        );
    }
    assert!(
        kept.release().unwrap().is_empty(),
        "and never released twice"
    );
}

#[test]
fn a_thousand_rows_in_ten_claims_are_renewed_by_one_statement_a_round() {
    let Some(shared) = backend::pool() else {
        return;
    };
    let ids = queued(&shared, 1_000);
    // Claims of at most 100 rows each, until all 1,000 are won: a row another test's statement
    // has locked for a moment is passed by (SKIP LOCKED), and won by a later claim.
    let mut claims = Vec::new();
    let mut left = ids.clone();
    while !left.is_empty() && claims.len() < 1_000 {
        // Short IN lists: MariaDB scans with 1,000 or more, and keeps what it scanned locked.
        let batch: Batch<String> = lease_jobs::table
            .claim_batch(100, minute())
            .filter(lease_jobs::id.eq_any(&left[..left.len().min(100)]))
            .returning(lease_jobs::id)
            .by("worker-1", &mut shared.get().unwrap())
            .unwrap();
        left.retain(|id| !batch.rows().contains(id));
        claims.push(batch.into_parts());
    }
    assert!(left.is_empty() && claims.len() >= 10);
    let keeper = Keeper::start(backend::pool_of(2), fast(minute())).unwrap();
    let kept: Vec<_> = claims
        .into_iter()
        .map(|(ids, claim)| keeper.keep(lease_jobs::table, claim, ids).unwrap())
        .collect();
    // Every row dated 50 s back: only a renewal under its own claim's token makes it fresh.
    diesel::update(lease_jobs::table.filter(lease_jobs::id.eq_any(&ids)))
        .set(lease_jobs::table.renewed_ago(Age::new(Duration::from_secs(50)).unwrap()))
        .execute(&mut shared.get().unwrap())
        .unwrap();
    let statements = keeper.renewal_statements();
    let rounds = keeper.rounds();
    after_rounds(&keeper, 3);

    let (rounds, statements) = (
        keeper.rounds() - rounds,
        keeper.renewal_statements() - statements,
    );
    assert!(
        statements >= 2 && statements <= rounds + 1,
        "{statements} statements in {rounds} rounds for {} claims of 1,000 rows",
        kept.len()
    );
    let aged: i64 = lease_jobs::table
        .filter(lease_jobs::id.eq_any(&ids))
        .filter(lease_jobs::table.outlived(Lease::from_secs(40).unwrap()))
        .count()
        .get_result(&mut shared.get().unwrap())
        .unwrap();
    assert_eq!(aged, 0, "every row of every claim renewed");
    assert!(kept.iter().all(|kept| kept.is_held()));
    assert_eq!(
        kept.iter().map(|kept| kept.held().len()).sum::<usize>(),
        1_000
    );
}

#[test]
fn a_row_taken_over_by_another_kept_claim_is_renewed_for_its_new_holder_alone() {
    let Some(shared) = backend::pool() else {
        return;
    };
    // What is tested is one round renewing both claims together; a round that falls between the
    // two keeps would find the loss alone, so such an attempt is made again.
    for _attempt in 0..10 {
        // Rounds a second apart: both claims are usually kept before the next round.
        let keeper = Keeper::start(
            backend::pool_of(2),
            KeeperSettings::new(minute()).every(Duration::from_secs(1)),
        )
        .unwrap();
        let ids = queued(&shared, 2);
        let (first_ids, first_claim) = claimed(&shared, &ids, minute());
        let first = keeper
            .keep(lease_jobs::table, first_claim, first_ids)
            .unwrap();
        let rounds_before = keeper.rounds();
        // An operator frees the second row, and another worker claims it: both claims are kept.
        diesel::update(lease_jobs::table.find(&ids[1]))
            .set(lease_jobs::table.released())
            .execute(&mut shared.get().unwrap())
            .unwrap();
        // A renewal of the first claim may hold the row for a moment; the claim passes it by then.
        let (second_ids, second_claim) = (0..1_000)
            .map(|_| {
                let batch: Batch<String> = lease_jobs::table
                    .claim_batch(1, minute())
                    .filter(lease_jobs::id.eq(&ids[1]))
                    .returning(lease_jobs::id)
                    .by("worker-2", &mut shared.get().unwrap())
                    .unwrap();
                batch.into_parts()
            })
            .find(|(won, _)| !won.is_empty())
            .expect("the freed row is claimed");
        let second_token = second_claim.token().to_owned();
        let second = keeper
            .keep(lease_jobs::table, second_claim, second_ids)
            .unwrap();
        if keeper.rounds() != rounds_before || !first.is_held() {
            continue;
        }
        after_rounds(&keeper, 1);

        let lost = first
            .check()
            .expect_err("the first claim lost the second row");
        assert_eq!(
            (lost.rows, lost.reason),
            (vec![ids[1].clone()], LossReason::TakenOver)
        );
        assert_eq!(first.held(), [ids[0].clone()]);
        assert!(
            second.is_held(),
            "the row is renewed for the claim that holds it"
        );
        assert_eq!(
            job(&shared, &ids[1]).lease_token.as_deref(),
            Some(second_token.as_str())
        );
        return;
    }
    panic!("a round fell between the two keeps in every attempt");
}

#[test]
fn past_the_longest_hold_the_keeper_stops_renewing_and_says_so() {
    let Some(shared) = backend::pool() else {
        return;
    };
    let ids = queued(&shared, 1);
    let (ids, claim) = claimed(&shared, &ids, minute());
    let keeper = Keeper::start(
        backend::pool_of(2),
        fast(minute()).at_most(Duration::from_millis(100)),
    )
    .unwrap();
    let kept = keeper.keep(lease_jobs::table, claim, ids.clone()).unwrap();
    for _ in 0..500 {
        if !kept.is_held() {
            break;
        }
        after_rounds(&keeper, 1);
    }
    assert_eq!(
        kept.check().expect_err("lost").reason,
        LossReason::LongestHold
    );
    // A round that began before the hold passed may still be renewing: let it end.
    after_rounds(&keeper, 1);

    diesel::update(lease_jobs::table.find(&ids[0]))
        .set(lease_jobs::table.renewed_ago(Age::new(Duration::from_secs(50)).unwrap()))
        .execute(&mut shared.get().unwrap())
        .unwrap();
    let statements = keeper.renewal_statements();
    after_rounds(&keeper, 3);
    assert_eq!(
        keeper.renewal_statements(),
        statements,
        "no renewal after the longest hold"
    );
    let stale: i64 = lease_jobs::table
        .find(&ids[0])
        .filter(lease_jobs::table.fresh(Lease::from_secs(40).unwrap()))
        .count()
        .get_result(&mut shared.get().unwrap())
        .unwrap();
    assert_eq!(stale, 0, "the row ages towards its takeover");
}

#[test]
fn a_renewal_that_cannot_get_through_is_reported_lost_before_the_lease_runs_out() {
    use diesel::connection::SimpleConnection;
    let Some(shared) = backend::pool() else {
        return;
    };
    let ids = queued(&shared, 1);
    // A real expiry: a 4 s lease, trusted for 2 s after each confirmed renewal, so that a
    // loaded machine has two seconds between the keeper giving up and the lease running out.
    let lease = Lease::from_secs(4).unwrap();
    let (ids, claim) = claimed(&shared, &ids, lease);
    let keeper = Keeper::start(
        backend::pool_of(2),
        KeeperSettings::new(lease)
            .every(Duration::from_millis(100))
            .margin(Duration::from_secs(2)),
    )
    .unwrap();
    let kept = keeper.keep(lease_jobs::table, claim, ids.clone()).unwrap();
    after_rounds(&keeper, 1);
    assert!(kept.is_held());

    // Another session holds the row (on SQLite, the whole database): renewals cannot get through.
    let mut blocker = backend::connect();
    blocker.batch_execute(backend::BEGIN_WRITE).unwrap();
    diesel::update(lease_jobs::table.find(&ids[0]))
        .set(lease_jobs::status.eq("running"))
        .execute(&mut blocker)
        .unwrap();
    for _ in 0..2_000 {
        if !kept.is_held() {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    // The moment the keeper gives up, the database still counts the lease as running.
    let fresh: i64 = lease_jobs::table
        .find(&ids[0])
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
    let Some(shared) = backend::pool() else {
        return;
    };
    let ids = queued(&shared, 1);
    let (ids, late) = claimed(&shared, &ids, minute());
    diesel::update(lease_jobs::table.find(&ids[0]))
        .set(lease_jobs::table.renewed_ago(Age::new(Duration::from_secs(61)).unwrap()))
        .execute(&mut shared.get().unwrap())
        .unwrap();
    let (_, rescuer) = claimed(&shared, &ids, minute());
    let keeper = Keeper::start(backend::pool_of(2), fast(minute())).unwrap();

    let kept = keeper.keep(lease_jobs::table, late, ids.clone()).unwrap();

    let lost = kept
        .check()
        .expect_err("the keep's own renewal found the row taken over");
    assert_eq!(
        (lost.rows, lost.reason),
        (ids.clone(), LossReason::TakenOver)
    );
    assert_eq!(
        job(&shared, &ids[0]).lease_token.as_deref(),
        Some(rescuer.token()),
        "and changed nothing"
    );
}

#[test]
fn a_kept_claim_is_not_held_once_its_keeper_has_stopped() {
    let Some(shared) = backend::pool() else {
        return;
    };
    let ids = queued(&shared, 1);
    let (ids, claim) = claimed(&shared, &ids, minute());
    let keeper = Keeper::start(backend::pool_of(2), fast(minute())).unwrap();
    let kept = keeper.keep(lease_jobs::table, claim, ids).unwrap();
    assert!(kept.is_held());

    drop(keeper);

    assert!(
        !kept.is_held(),
        "the keeper released it: the work must stop"
    );
    assert_eq!(
        kept.check().expect_err("released").reason,
        LossReason::Released
    );
}

#[test]
fn a_longest_hold_beyond_the_clock_never_comes_and_never_panics() {
    let Some(shared) = backend::pool() else {
        return;
    };
    let ids = queued(&shared, 1);
    let (ids, claim) = claimed(&shared, &ids, minute());
    let keeper = Keeper::start(backend::pool_of(2), fast(minute()).at_most(Duration::MAX)).unwrap();
    let kept = keeper.keep(lease_jobs::table, claim, ids).unwrap();
    after_rounds(&keeper, 2);
    assert!(kept.is_held());
}

#[test]
fn settings_that_cannot_keep_a_lease_are_refused_before_any_thread_starts() {
    let Some(_) = backend::pool() else { return };
    let lease = Lease::from_secs(3).unwrap();
    for settings in [
        KeeperSettings::new(lease).every(Duration::from_secs(3)),
        KeeperSettings::new(lease).margin(Duration::from_secs(3)),
        KeeperSettings::new(lease).every(Duration::ZERO),
        KeeperSettings::new(lease).at_least(Duration::ZERO),
        KeeperSettings::new(lease)
            .at_least(Duration::from_secs(61))
            .at_most(Duration::from_secs(60)),
    ] {
        let started = Keeper::start(backend::pool_of(1), settings);
        assert!(
            matches!(started, Err(diesel_lease::Error::InvalidLease(_))),
            "{settings:?}: {started:?}"
        );
    }
}

/// Whether a claim of another worker's, with `lease`, takes the row `id` now.
fn taken_by_another(pool: &Pool, id: &str, lease: Lease) -> bool {
    let outcome: Claimed<Job, _, _> = lease_jobs::table
        .claim_row(id, lease)
        .returning(Job::as_select())
        .by(Claim::new("worker-2").unwrap(), &mut pool.get().unwrap())
        .unwrap();
    outcome.won().is_some()
}

/// Moves the lease of row `id` `secs` seconds into the past.
fn age_row(pool: &Pool, id: &str, secs: u32) {
    let sql = format!(
        "UPDATE lease_jobs SET leased_at = {} WHERE id = '{id}'",
        backend::earlier("leased_at", secs)
    );
    assert_eq!(
        diesel::sql_query(sql)
            .execute(&mut pool.get().unwrap())
            .unwrap(),
        1
    );
}

#[test]
fn a_release_before_the_shortest_hold_leaves_the_row_to_no_one_until_it_has_passed() {
    let Some(shared) = backend::pool() else {
        return;
    };
    let lease = Lease::from_secs(30).unwrap();
    let ids = queued(&shared, 1);
    let (ids, claim) = claimed(&shared, &ids, lease);
    let keeper = Keeper::start(
        backend::pool_of(2),
        fast(lease).at_least(Duration::from_secs(600)),
    )
    .unwrap();
    let kept = keeper
        .keep(lease_jobs::table, claim.clone(), ids.clone())
        .unwrap();
    assert_eq!(
        kept.release().unwrap(),
        ids,
        "released, as far as the holder goes"
    );
    let row = job(&shared, &ids[0]);
    assert_eq!(
        row.lease_token.as_deref(),
        Some(claim.token()),
        "the row still names its holder"
    );
    assert!(
        row.leased_at.is_some(),
        "dated, never NULL: a held row without a date is never outlived"
    );
    assert!(
        !taken_by_another(&shared, &ids[0], lease),
        "not taken right after the release"
    );
    let holders = lease_jobs::table
        .holders(lease)
        .load::<_, String>(&mut shared.get().unwrap())
        .unwrap();
    let dated = holders
        .iter()
        .find(|holding| holding.key == ids[0])
        .expect("still listed as held");
    assert!(
        dated.time_left > Duration::from_secs(540),
        "its time left runs to the end of the shortest hold: {dated:?}"
    );

    // 540 s later, far past a lease of 30 s, the shortest hold of 600 s has not passed yet.
    age_row(&shared, &ids[0], 540);
    assert!(
        !taken_by_another(&shared, &ids[0], lease),
        "not taken before the shortest hold has passed"
    );
    // 610 s after the keeper kept it, it has.
    age_row(&shared, &ids[0], 70);
    assert!(
        taken_by_another(&shared, &ids[0], lease),
        "taken once the shortest hold has passed"
    );
}

#[test]
fn a_release_after_the_shortest_hold_frees_the_row_at_once() {
    let Some(shared) = backend::pool() else {
        return;
    };
    let ids = queued(&shared, 1);
    let (ids, claim) = claimed(&shared, &ids, minute());
    let keeper = Keeper::start(
        backend::pool_of(2),
        fast(minute()).at_least(Duration::from_millis(1)),
    )
    .unwrap();
    let kept = keeper.keep(lease_jobs::table, claim, ids.clone()).unwrap();
    // Two rounds of 20 ms: the shortest hold of 1 ms is over by any clock.
    after_rounds(&keeper, 2);
    assert_eq!(kept.release().unwrap(), ids);
    let row = job(&shared, &ids[0]);
    assert_eq!(
        (row.lease_token, row.leased_at),
        (None, None),
        "freed, not dated"
    );
    assert!(taken_by_another(&shared, &ids[0], minute()));
}
