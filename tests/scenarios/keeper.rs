// The keeper's scenarios, included once per backend by tests/keeper.rs. Rounds of renewals are
// counted, not timed: a test waits for the keeper to make rounds, then asserts what they did.
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
fn a_kept_release_is_guarded_by_the_token_sets_the_callers_changes_and_runs_once_and_a_drop_releases(
) {
    let held = claimed(3, minute());
    let (claim, ids) = (held.claim(), held.keys().to_vec());
    let keeper = Keeper::start(backend::pool_of(2), fast(minute())).unwrap();
    let kept = keeper
        .keep(lease_jobs::table.held_rows(claim, ids[..2].to_vec()))
        .unwrap();
    let dropped = keeper
        .keep(lease_jobs::table.held_rows(claim, ids[2..].to_vec()))
        .unwrap();
    // Another claim of the same owner takes the first row over: the release must leave it to
    // its new holder, whose token is all that tells them apart.
    let rescuer = Claim::new(claim.owner()).unwrap();
    diesel::update(lease_jobs::table.find(&ids[0]))
        .set(lease_jobs::table.taken(&rescuer))
        .execute(&mut connection())
        .unwrap();

    let conn = &mut connection();
    let released = kept
        .release()
        .set(lease_jobs::status.eq("done"))
        .run(conn)
        .unwrap();
    assert_eq!(released, [ids[1].clone()], "the row the claim still held");
    assert!(
        kept.release().run(conn).unwrap().is_empty(),
        "never released twice"
    );
    drop(dropped);

    let (taken, done, dropped) = (job(conn, &ids[0]), job(conn, &ids[1]), job(conn, &ids[2]));
    assert_eq!(
        (taken.status.as_str(), taken.lease_token.as_deref()),
        ("running", Some(rescuer.token())),
        "the rescuer's row is untouched"
    );
    assert_eq!(
        (done.status.as_str(), done.lease_token),
        ("done", None),
        "released and done in one statement"
    );
    assert_eq!(
        (dropped.status.as_str(), dropped.lease_token),
        ("running", None),
        "released by the drop"
    );
}

#[test]
fn dropping_the_keeper_releases_what_it_keeps() {
    let held = claimed(2, minute());
    let keeper = Keeper::start(backend::pool_of(2), fast(minute())).unwrap();
    let kept = keeper.keep(&held).unwrap();

    drop(keeper);

    // A drop waits for its release up to a bound: under load the release may land just after.
    let conn = &mut connection();
    eventually("every row released when the keeper stopped", || {
        held.keys()
            .iter()
            .all(|id| job(conn, id).lease_token.is_none())
    });
    assert!(
        kept.release().run(conn).unwrap().is_empty(),
        "and never released twice"
    );
}

#[test]
fn a_thousand_rows_in_ten_claims_are_renewed_by_one_statement_a_round() {
    let conn = &mut connection();
    let (pattern, ids) = queued_run(conn, 1_000);
    // Claims of at most 100 rows each, until all 1,000 are won: a row another test's statement
    // has locked for a moment is passed by (SKIP LOCKED), and won by a later claim.
    let mut claims = Vec::new();
    let mut left = ids.clone();
    while !left.is_empty() && claims.len() < 1_000 {
        // Short key lists: MariaDB scans for 1,000 or more, and locks what it scans.
        let batch = lease_jobs::table
            .claim_batch(100, minute())
            .by(&Claim::new("worker-1").unwrap())
            .filter(lease_jobs::id.eq_any(&left[..left.len().min(100)]))
            .returning(lease_jobs::id)
            .run::<String>(conn)
            .unwrap();
        left.retain(|id| !batch.keys().contains(id));
        claims.push(batch.into_parts().1);
    }
    assert!(left.is_empty() && claims.len() >= 10);
    let (pool, updates) = backend::pool_counting_updates(2);
    let keeper = Keeper::start(pool, fast(minute())).unwrap();
    let kept: Vec<_> = claims
        .iter()
        .map(|held| keeper.keep(held).unwrap())
        .collect();
    // Every row dated 50 s back: only a renewal under its own claim's token makes it fresh.
    age_jobs(conn, &ids, Duration::from_secs(50));
    // The UPDATEs the keeper's connections ran, counted by Diesel's instrumentation: one a
    // round (and one more for a round already under way when the count began).
    let (rounds, sent) = updates_in_rounds(&keeper, &updates, 3);
    assert!(
        sent >= 2 && sent <= rounds + 1,
        "{sent} UPDATEs in {rounds} rounds for {} claims of 1,000 rows",
        kept.len()
    );
    let aged: i64 = lease_jobs::table
        .filter(lease_jobs::id.like(&pattern))
        .filter(lease_jobs::table.outlived(Lease::from_secs(40).unwrap()))
        .count()
        .get_result(conn)
        .unwrap();
    assert_eq!(aged, 0, "every row of every claim renewed");
    assert!(kept.iter().all(|kept| kept.is_held()));
    assert_eq!(
        kept.iter()
            .map(|kept| kept.held().keys().len())
            .sum::<usize>(),
        1_000
    );
}

#[test]
fn two_batches_of_the_largest_size_on_one_table_are_kept_renewed_and_released_whole() {
    let conn = &mut connection();
    let size = diesel_lease::MAX_BATCH_SIZE;
    let (_, ids) = queued_run(conn, 2 * size);
    let held: Vec<_> = ids
        .chunks(size)
        .map(|ids| claim_all(conn, ids, &Claim::new("worker-1").unwrap(), minute()))
        .collect();
    let (pool, updates) = backend::pool_counting_updates(2);
    // Rounds half a second apart: each renews 20,000 rows, beside the other tests' statements.
    let every = Duration::from_millis(500);
    let keeper = Keeper::start(pool, KeeperSettings::new(minute()).every(every)).unwrap();
    let kept: Vec<_> = held
        .iter()
        .map(|held| keeper.keep(held).expect("the first renewal of 10,000 rows"))
        .collect();
    let (rounds, ran) = updates_in_rounds(&keeper, &updates, 2);
    // Five statements a round, of at most 4,096 rows each: one naming all 20,000 would bind
    // more values than SQLite allows.
    assert!(
        ran >= 5 && ran <= 5 * (rounds + 1),
        "{ran} UPDATEs ran in {rounds} rounds"
    );
    assert!(kept.iter().all(|kept| kept.is_held()));
    let released: usize = kept
        .iter()
        .map(|kept| kept.release().run(conn).unwrap().len())
        .sum();
    assert_eq!(released, ids.len(), "every row released");
}

#[test]
fn a_claim_handed_back_stays_held_renewed_no_more_for_the_caller_to_finish() {
    let held = claimed(2, minute());
    let keeper = Keeper::start(backend::pool_of(2), fast(minute())).unwrap();
    let kept = keeper.keep(&held).unwrap();

    let handed_back = kept.stop_keeping();
    assert_eq!(
        (handed_back.claim(), handed_back.keys()),
        (held.claim(), held.keys()),
        "the claim and the rows it holds"
    );
    // Dated back: a keeper still renewing would make the rows fresh within a round.
    let conn = &mut connection();
    age_jobs(conn, held.keys(), Duration::from_secs(50));
    after_rounds(&keeper, 2);
    assert_eq!(fresh_within(held.keys(), 40), 0, "renewed no more");
    drop(keeper);
    let mut released = handed_back
        .release()
        .set(lease_jobs::status.eq("done"))
        .run(conn)
        .unwrap();
    released.sort();
    let mut ids = held.keys().to_vec();
    ids.sort();
    assert_eq!(
        released, ids,
        "still the claim's, released by neither the hand-back nor the keeper's stop"
    );
}

#[test]
fn a_kept_release_that_fails_stops_the_renewals_and_a_retry_still_releases() {
    let held = claimed(1, minute());
    let keeper = Keeper::start(backend::pool_of(2), fast(minute())).unwrap();
    let kept = keeper.keep(&held).unwrap();
    let conn = &mut connection();

    // The caller's part breaks the table's CHECK: the statement fails, and may as well have
    // committed unanswered.
    let failed = kept.release().set(lease_jobs::status.eq("bogus")).run(conn);
    assert!(failed.is_err(), "{failed:?}");
    // Renewed no more: dated back, the row stays so while the keeper makes rounds.
    age_jobs(conn, held.keys(), Duration::from_secs(50));
    after_rounds(&keeper, 2);
    assert_eq!(
        fresh_within(held.keys(), 40),
        0,
        "a renewal must not undo a release that may have landed"
    );
    assert_eq!(
        kept.release()
            .set(lease_jobs::status.eq("done"))
            .run(conn)
            .unwrap(),
        held.keys(),
        "still the claim's: the retry releases it"
    );
}

#[test]
fn a_release_is_not_held_up_by_a_round_waiting_for_the_keepers_only_connection() {
    let held = claimed(1, minute());
    // A pool whose checkout waits ten minutes: a round waiting for it outlasts the test.
    let pool = backend::pool_waiting(1, Duration::from_secs(600));
    let keeper = Keeper::start(pool.clone(), fast(minute())).unwrap();
    let kept = keeper.keep(&held).unwrap();
    let mut busy = pool.get().unwrap();
    // Ten renewal intervals: a round has begun, and waits for the connection the work holds.
    std::thread::sleep(Duration::from_millis(200));

    // The release runs on the work's connection; a round holding the claim's statement lock
    // while it waits for a connection would hold the release up for as long.
    let (answer, answered) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let released = kept.release().run(&mut *busy);
        let _ = answer.send(released.map_err(|error| error.to_string()));
    });
    match answered.recv_timeout(Duration::from_secs(30)) {
        Ok(released) => assert_eq!(released.unwrap(), held.keys()),
        Err(_) => {
            // Left to its round: dropping the keeper would wait for that round's ten minutes.
            std::mem::forget(keeper);
            panic!("the release waited for the keeper's round, which waits for the connection");
        }
    }
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
fn past_the_longest_hold_the_keeper_stops_renewing_and_says_so() {
    let held = claimed(1, minute());
    let keeper = Keeper::start(
        backend::pool_of(2),
        fast(minute()).at_most(Duration::from_millis(100)),
    )
    .unwrap();
    let kept = keeper.keep(&held).unwrap();
    eventually("the longest hold passes", || !kept.is_held());
    assert_eq!(
        kept.check().expect_err("lost").reason,
        LossReason::LongestHold
    );
    // A round that began before the hold passed may still be renewing: let it end.
    after_rounds(&keeper, 1);

    let conn = &mut connection();
    age_jobs(conn, held.keys(), Duration::from_secs(50));
    let statements = keeper.renewal_statements();
    after_rounds(&keeper, 3);
    assert_eq!(
        keeper.renewal_statements(),
        statements,
        "no renewal after the longest hold"
    );
    assert_eq!(
        fresh_within(held.keys(), 40),
        0,
        "the row ages towards its takeover"
    );
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
fn a_longest_hold_beyond_the_clock_never_comes_and_never_panics() {
    let held = claimed(1, minute());
    let keeper = Keeper::start(backend::pool_of(2), fast(minute()).at_most(Duration::MAX)).unwrap();
    let kept = keeper.keep(&held).unwrap();
    after_rounds(&keeper, 2);
    assert!(kept.is_held());
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

/// Whether a claim of another worker's, with `lease`, takes the row `id` now.
fn taken_by_another(id: &str, lease: Lease) -> bool {
    let outcome = lease_jobs::table
        .claim_row(id, lease)
        .by(&Claim::new("worker-2").unwrap())
        .run::<Job>(&mut connection())
        .unwrap();
    outcome.is_won()
}

/// Moves the lease of row `id` `secs` seconds into the past.
fn age_row(id: &str, secs: u32) {
    let sql = format!(
        "UPDATE lease_jobs SET leased_at = {} WHERE id = '{id}'",
        backend::earlier("leased_at", secs)
    );
    assert_eq!(
        diesel::sql_query(sql).execute(&mut connection()).unwrap(),
        1
    );
}

#[test]
fn a_release_before_the_shortest_hold_leaves_the_row_to_no_one_until_it_has_passed() {
    let lease = Lease::from_secs(30).unwrap();
    let held = claimed(1, lease);
    let (claim, id) = (held.claim(), &held.keys()[0]);
    let keeper = Keeper::start(
        backend::pool_of(2),
        fast(lease).at_least(Duration::from_secs(600)),
    )
    .unwrap();
    let kept = keeper.keep(&held).unwrap();
    assert_eq!(
        kept.release()
            .set(lease_jobs::status.eq("done"))
            .run(&mut connection())
            .unwrap(),
        held.keys(),
        "released, as far as the holder goes"
    );
    let row = job(&mut connection(), id);
    assert_eq!(
        row.lease_token.as_deref(),
        Some(claim.token()),
        "the row still names its holder"
    );
    assert_eq!(row.status, "done", "and the caller's changes landed");
    assert!(
        row.leased_at.is_some(),
        "dated, never NULL: a held row without a date is never outlived"
    );
    assert!(
        !taken_by_another(id, lease),
        "not taken right after the release"
    );
    let holders = lease_jobs::table
        .holders(lease)
        .run(&mut connection())
        .unwrap();
    let dated = holders
        .iter()
        .find(|holding| &holding.key == id)
        .expect("still listed as held");
    assert!(
        dated.time_left > Duration::from_secs(540),
        "its time left runs to the end of the shortest hold: {dated:?}"
    );

    // 540 s later, far past a lease of 30 s, the shortest hold of 600 s has not passed yet.
    age_row(id, 540);
    assert!(
        !taken_by_another(id, lease),
        "not taken before the shortest hold has passed"
    );
    // 610 s after the keeper kept it, it has.
    age_row(id, 70);
    assert!(
        taken_by_another(id, lease),
        "taken once the shortest hold has passed"
    );
}

#[test]
fn a_release_after_the_shortest_hold_frees_the_row_at_once() {
    let held = claimed(1, minute());
    let keeper = Keeper::start(
        backend::pool_of(2),
        fast(minute()).at_least(Duration::from_millis(1)),
    )
    .unwrap();
    let kept = keeper.keep(&held).unwrap();
    // Two rounds of 20 ms: the shortest hold of 1 ms is over by any clock.
    after_rounds(&keeper, 2);
    assert_eq!(kept.release().run(&mut connection()).unwrap(), held.keys());
    let row = job(&mut connection(), &held.keys()[0]);
    assert_eq!(
        (row.lease_token, row.leased_at),
        (None, None),
        "freed, not dated"
    );
    assert!(taken_by_another(&held.keys()[0], minute()));
}

/// A batch claim that found nothing due: the normal answer of a queue with no work.
fn empty_batch(conn: &mut backend::Conn, claim: &Claim) -> Batch<String, lease_jobs::table> {
    let batch = lease_jobs::table
        .claim_batch(10, minute())
        .by(claim)
        .filter(lease_jobs::status.eq("no such status"))
        .returning(lease_jobs::id)
        .run::<String>(conn)
        .unwrap();
    assert!(batch.is_empty());
    batch
}

#[test]
fn an_empty_batch_is_kept_as_held_renewed_by_no_statement_and_never_lost_until_released() {
    let conn = &mut connection();
    let batch = empty_batch(conn, &Claim::new("worker-1").unwrap());
    let (pool, updates) = backend::pool_counting_updates(2);
    // A longest hold of 100 ms, which 20 rounds pass: a claim of rows would be lost by then.
    let keeper = Keeper::start(pool, fast(minute()).at_most(Duration::from_millis(100))).unwrap();
    let kept = keeper.keep(&batch).unwrap();
    let statements = keeper.renewal_statements();
    let (_, sent) = updates_in_rounds(&keeper, &updates, 20);
    assert_eq!(kept.check(), Ok(()), "nothing held, so nothing lost");
    assert!(kept.is_held());
    assert_eq!(sent, 0, "no UPDATE renews a claim of no rows");
    assert_eq!(keeper.renewal_statements(), statements);
    assert_eq!(kept.release().run(conn).unwrap(), Vec::<String>::new());
}

#[test]
fn a_keeper_keeps_what_a_claim_gave_back_a_row_won_or_a_batch() {
    let conn = &mut connection();
    let ids = queued_jobs(conn, 2, "queued");
    let keeper = Keeper::start(backend::pool_of(2), fast(minute())).unwrap();
    let won = lease_jobs::table
        .claim_row(ids[0].clone(), minute())
        .by(&Claim::new("worker-1").unwrap())
        .returning(lease_jobs::id)
        .run::<String>(conn)
        .unwrap()
        .won()
        .expect("a free job");
    let batch = lease_jobs::table
        .claim_batch(1, minute())
        .by(&Claim::new("worker-2").unwrap())
        .filter(lease_jobs::id.eq(&ids[1]))
        .returning(lease_jobs::id)
        .run::<String>(conn)
        .unwrap();
    let (kept_row, kept_batch) = (keeper.keep(&won).unwrap(), keeper.keep(&batch).unwrap());
    assert_eq!(kept_row.held().keys(), [ids[0].clone()]);
    assert_eq!(kept_batch.held().keys(), [ids[1].clone()]);
    assert_eq!(kept_row.release().run(conn).unwrap(), [ids[0].clone()]);
    assert_eq!(kept_batch.release().run(conn).unwrap(), [ids[1].clone()]);
}
