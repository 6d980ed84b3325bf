// The generic layer's scenarios, included once per backend by tests/lease.rs: `backend` names
// the backend's support module (pool, connections), so every statement here is concrete.
use std::time::Duration;

use diesel::prelude::*;
use diesel_lease::prelude::*;
use diesel_lease::{testkit, Error, LeaseHolder};

use crate::common::jobs::{lease_jobs, Job};
use crate::common::{drain, race, unique_id};

/// Claim job `id` if it is claimable under `lease`, moving it to running in the same statement.
fn claim(conn: &mut backend::Conn, id: &str, claim: &Claim, lease: Lease) -> Option<Job> {
    let outcome = lease_jobs::table
        .claim_row(id, lease)
        .by(claim)
        .set(lease_jobs::status.eq("running"))
        .returning(Job::as_select())
        .run(conn)
        .expect("claim statement");
    outcome.won().map(|won| {
        assert_eq!(
            won.claim(),
            claim,
            "the outcome carries the claim the statement wrote"
        );
        assert_eq!(won.key(), id, "and the key of the row it won");
        won.into_row()
    })
}

/// Renews job `id` for `claim`: whether the claim still held it.
fn renew(conn: &mut backend::Conn, id: &str, claim: &Claim) -> bool {
    let renewed = lease_jobs::table
        .held_rows(claim, vec![id.to_owned()])
        .renew()
        .run(conn)
        .expect("renew");
    !renewed.is_empty()
}

/// Finishes job `id` for `claim`, released and done in one statement: whether the claim still
/// held it.
fn finish(conn: &mut backend::Conn, id: &str, claim: &Claim) -> bool {
    let finished = lease_jobs::table
        .held_rows(claim, vec![id.to_owned()])
        .release()
        .set(lease_jobs::status.eq("done"))
        .run(conn)
        .expect("finish");
    !finished.is_empty()
}

#[test]
fn a_claim_wins_and_returns_the_row_it_changed() {
    let mut conn = connection();
    let id = queued_job(&mut conn);
    let worker = Claim::new("worker-1").unwrap();

    let won = claim(&mut conn, &id, &worker, minute()).expect("the first claim wins");

    assert_eq!(won.id, id);
    assert_eq!(
        won.status, "running",
        "the caller's change is in the same statement"
    );
    assert_eq!(won.worker.as_deref(), Some("worker-1"));
    assert_eq!(won.lease_token.as_deref(), Some(worker.token()));
    assert!(won.leased_at.is_some());
    assert_eq!(
        job(&mut conn, &id),
        won,
        "the returned row is the stored row"
    );
}

#[test]
fn a_rival_loses_while_the_lease_is_fresh_and_wins_once_it_is_outlived() {
    let mut conn = connection();
    let id = queued_job(&mut conn);
    let (first, rival) = (
        Claim::new("worker-1").unwrap(),
        Claim::new("worker-2").unwrap(),
    );
    claim(&mut conn, &id, &first, minute()).expect("first claim");

    assert_eq!(claim(&mut conn, &id, &rival, minute()), None, "fresh lease");
    age(&mut conn, &id, Duration::from_secs(59));
    assert_eq!(
        claim(&mut conn, &id, &rival, minute()),
        None,
        "59 s of a 60 s lease"
    );
    assert_eq!(
        job(&mut conn, &id).lease_token.as_deref(),
        Some(first.token())
    );

    age(&mut conn, &id, Duration::from_secs(61));
    let taken_over = claim(&mut conn, &id, &rival, minute()).expect("outlived lease is taken over");
    assert_eq!(taken_over.worker.as_deref(), Some("worker-2"));
    assert_eq!(taken_over.lease_token.as_deref(), Some(rival.token()));
}

#[test]
fn renewal_by_the_holder_moves_the_clock_forward() {
    let mut conn = connection();
    let id = queued_job(&mut conn);
    let worker = Claim::new("worker-1").unwrap();
    claim(&mut conn, &id, &worker, minute()).expect("claim");
    age(&mut conn, &id, Duration::from_secs(50));
    let before = job(&mut conn, &id).leased_at.expect("claimed");

    assert!(
        renew(&mut conn, &id, &worker),
        "the holder still holds the row"
    );

    let after = job(&mut conn, &id);
    assert!(after.leased_at.expect("claimed") >= before + chrono::Duration::seconds(49));
    assert_eq!(
        after.lease_token.as_deref(),
        Some(worker.token()),
        "whose claim it is is unchanged"
    );
    assert_eq!(after.worker.as_deref(), Some("worker-1"));
    let fresh: i64 = lease_jobs::table
        .find(&id)
        .filter(lease_jobs::table.fresh(Lease::from_secs(20).unwrap()))
        .count()
        .get_result(&mut *conn)
        .unwrap();
    assert_eq!(fresh, 1, "a renewed lease is fresh again");
}

#[test]
fn renewal_or_release_by_anyone_else_changes_nothing_and_says_so() {
    let mut conn = connection();
    let id = queued_job(&mut conn);
    let (holder, stranger) = (
        Claim::new("worker-1").unwrap(),
        Claim::new("worker-1").unwrap(),
    );
    claim(&mut conn, &id, &holder, minute()).expect("claim");
    age(&mut conn, &id, Duration::from_secs(30));
    let before = job(&mut conn, &id);

    assert!(
        !renew(&mut conn, &id, &stranger),
        "a renewal by another token reports it does not hold the row"
    );
    assert!(
        !finish(&mut conn, &id, &stranger),
        "a release by another token reports it does not hold the row"
    );

    assert_eq!(
        job(&mut conn, &id),
        before,
        "nothing changed: the same owner even matches, only the token counts"
    );
}

#[test]
fn a_holder_whose_lease_was_taken_over_can_change_nothing() {
    let mut conn = connection();
    let id = queued_job(&mut conn);
    let (slow, rescuer) = (
        Claim::new("worker-slow").unwrap(),
        Claim::new("worker-2").unwrap(),
    );
    claim(&mut conn, &id, &slow, minute()).expect("claim");
    age(&mut conn, &id, Duration::from_secs(120));
    claim(&mut conn, &id, &rescuer, minute()).expect("take over");

    assert!(
        !renew(&mut conn, &id, &slow),
        "the late holder learns at once that it lost the row"
    );
    assert!(!finish(&mut conn, &id, &slow));
    let written = lease_jobs::table
        .held_rows(&slow, vec![id.clone()])
        .update()
        .set(lease_jobs::status.eq("queued"))
        .run(&mut *conn)
        .unwrap();
    assert!(written.is_empty(), "nor does its own write land");
    let row = job(&mut conn, &id);
    assert_eq!(row.status, "running");
    assert_eq!(row.lease_token.as_deref(), Some(rescuer.token()));
    assert!(finish(&mut conn, &id, &rescuer));
    assert_eq!(job(&mut conn, &id).status, "done");
}

#[test]
fn release_frees_the_row_for_anyone() {
    let mut conn = connection();
    let id = queued_job(&mut conn);
    let worker = Claim::new("worker-1").unwrap();
    claim(&mut conn, &id, &worker, minute()).expect("claim");

    assert!(finish(&mut conn, &id, &worker));

    let row = job(&mut conn, &id);
    assert_eq!(
        (row.worker, row.lease_token, row.leased_at),
        (None, None, None)
    );
    let unclaimed: i64 = lease_jobs::table
        .find(&id)
        .filter(lease_jobs::table.unclaimed())
        .count()
        .get_result(&mut *conn)
        .unwrap();
    assert_eq!(unclaimed, 1);
    assert!(claim(&mut conn, &id, &Claim::new("worker-2").unwrap(), minute()).is_some());
}

#[test]
fn a_failing_change_of_the_caller_leaves_no_claim_behind() {
    let mut conn = connection();
    let id = queued_job(&mut conn);
    let worker = Claim::new("worker-1").unwrap();

    let result = lease_jobs::table
        .claim_row(id.as_str(), minute())
        .by(&worker)
        .set(lease_jobs::status.eq("no-such-status"))
        .run::<Job>(&mut *conn);

    assert!(
        matches!(result, Err(Error::Database(_))),
        "the CHECK violation is a typed error: {result:?}"
    );
    let row = job(&mut conn, &id);
    assert_eq!(row.status, "queued");
    assert_eq!(
        (row.worker, row.lease_token, row.leased_at),
        (None, None, None),
        "no claim without its status"
    );
}

#[test]
fn outlived_says_nothing_of_an_unclaimed_row() {
    let mut conn = connection();
    let id = queued_job(&mut conn);
    let lease = Lease::from_millis(1).unwrap();
    let matching = |conn: &mut backend::Conn, outlived: bool| -> i64 {
        let query = lease_jobs::table.find(&id);
        if outlived {
            query
                .filter(lease_jobs::table.outlived(lease))
                .count()
                .get_result(conn)
                .unwrap()
        } else {
            query
                .filter(lease_jobs::table.fresh(lease))
                .count()
                .get_result(conn)
                .unwrap()
        }
    };

    assert_eq!(matching(&mut conn, true), 0, "NULL is not outlived");
    assert_eq!(matching(&mut conn, false), 0, "NULL is not fresh either");
    let claimable: i64 = lease_jobs::table
        .find(&id)
        .filter(lease_jobs::table.claimable(lease))
        .count()
        .get_result(&mut *conn)
        .unwrap();
    assert_eq!(
        claimable, 1,
        "claimable is the common answer: unclaimed or outlived"
    );
}

#[test]
fn a_sub_second_lease_expires_in_real_time() {
    let mut conn = connection();
    let id = queued_job(&mut conn);
    let lease = Lease::from_millis(150).unwrap();
    claim(&mut conn, &id, &Claim::new("worker-1").unwrap(), lease).expect("claim");
    let rival = Claim::new("worker-2").unwrap();
    assert_eq!(
        claim(&mut conn, &id, &rival, Lease::from_secs(10).unwrap()),
        None
    );

    std::thread::sleep(Duration::from_millis(400));

    assert!(
        claim(&mut conn, &id, &rival, lease).is_some(),
        "150 ms later, by the database's clock, it is outlived"
    );
}

#[test]
fn a_claim_dated_back_blocks_others_only_for_what_is_left_of_the_lease() {
    let mut conn = connection();
    let id = queued_job(&mut conn);
    let worker = Claim::new("clicker").unwrap();
    let lease = minute();
    let hold = Lease::from_secs(5).unwrap();
    let age = lease.checked_sub(hold).expect("hold within lease");
    diesel::update(lease_jobs::table.find(&id))
        .set(lease_jobs::table.taken_ago(&worker, age))
        .execute(&mut *conn)
        .unwrap();

    // Dated 55 s back by the database's clock: a claim under a lease of 56 s finds it fresh,
    // one under 54 s finds it outlived. No row is aged: what is measured is the claim's own date.
    let rival = Claim::new("worker-2").unwrap();
    assert_eq!(
        claim(&mut conn, &id, &rival, lease),
        None,
        "blocked for the 5 s hold"
    );
    assert_eq!(
        claim(&mut conn, &id, &rival, Lease::from_secs(56).unwrap()),
        None,
        "taken 55 s ago, not longer"
    );
    assert!(
        claim(&mut conn, &id, &rival, Lease::from_secs(54).unwrap()).is_some(),
        "taken 55 s ago, so what is left of a 60 s lease is 5 s"
    );
}

#[test]
fn a_different_session_time_zone_changes_no_answer() {
    let mut conn = connection();
    let mut far = backend::connect_in_far_time_zone();
    let (here, there) = (queued_job(&mut conn), queued_job(&mut conn));
    claim(&mut conn, &here, &Claim::new("utc-node").unwrap(), minute()).expect("claim here");
    claim(&mut far, &there, &Claim::new("far-node").unwrap(), minute()).expect("claim there");

    let (at_here, at_there) = (
        job(&mut conn, &here).leased_at.unwrap(),
        job(&mut conn, &there).leased_at.unwrap(),
    );
    assert!(
        (at_there - at_here).num_seconds().abs() < 30,
        "comparable timestamps: {at_here} vs {at_there}"
    );
    assert_eq!(
        job(&mut far, &here).leased_at,
        Some(at_here),
        "both sessions read the same instant"
    );
    let clock: i64 = diesel::select(diesel_lease::__private::sql::ClockMicros)
        .get_result(&mut far)
        .unwrap();
    assert!(
        (clock - at_here.timestamp_micros()).abs() < 30_000_000,
        "the far session's clock reading is the same instant: {clock}"
    );

    let rival = Claim::new("rival").unwrap();
    assert_eq!(
        claim(&mut far, &here, &rival, minute()),
        None,
        "fresh from the far session too"
    );
    assert_eq!(
        claim(&mut conn, &there, &rival, minute()),
        None,
        "the far session's claim is fresh here"
    );
    age(&mut far, &here, Duration::from_secs(61));
    assert!(
        claim(&mut conn, &here, &rival, minute()).is_some(),
        "aged from the far session, outlived here"
    );
}

#[test]
fn sixteen_pooled_connections_race_for_one_row_and_exactly_one_wins_each_round() {
    const RACERS: usize = 16;
    const ROUNDS: usize = 200;
    let id = &queued_job(&mut connection());
    let pool = backend::pool_of(RACERS as u32 + 1);
    let mut conn = pool.get().unwrap();

    for round in 0..ROUNDS {
        diesel::update(lease_jobs::table.find(id))
            .set((
                lease_jobs::table.released(),
                lease_jobs::status.eq("queued"),
            ))
            .execute(&mut *conn)
            .unwrap();
        let won = race(&pool, RACERS, |racer, conn| {
            let me = Claim::new(&format!("racer-{racer}")).unwrap();
            let row = claim(conn, id, &me, minute())?;
            assert_eq!(row.lease_token.as_deref(), Some(me.token()));
            Some(racer)
        });
        let winner = testkit::one_winner(&won, Option::is_some);
        assert_eq!(won[winner], Some(winner), "round {round}");
    }
}

#[test]
fn a_caller_may_bring_its_own_token() {
    let mut conn = connection();
    let id = queued_job(&mut conn);
    let turn = Claim::with_token("node-a", &unique_id("turn")).unwrap();

    let row = claim(&mut conn, &id, &turn, minute()).expect("claim");

    assert_eq!(row.lease_token.as_deref(), Some(turn.token()));
    assert!(
        renew(
            &mut conn,
            &id,
            &Claim::with_token("node-b", turn.token()).unwrap()
        ),
        "the token, not the owner, proves the hold"
    );
}

#[test]
fn a_table_with_the_backends_own_timestamp_type_leases_the_same() {
    use backend::native::native_jobs;
    let mut conn = connection();
    let id = unique_id("native");
    diesel::insert_into(native_jobs::table)
        .values(native_jobs::id.eq(&id))
        .execute(&mut *conn)
        .unwrap();
    let take = |conn: &mut backend::Conn, claim: &Claim| {
        diesel::update(
            native_jobs::table
                .find(&id)
                .filter(native_jobs::table.claimable(minute())),
        )
        .set(native_jobs::table.taken(claim))
        .execute(conn)
        .unwrap()
    };
    let (first, rival) = (
        Claim::new("worker-1").unwrap(),
        Claim::new("worker-2").unwrap(),
    );

    assert_eq!(take(&mut conn, &first), 1);
    assert_eq!(take(&mut conn, &rival), 0, "fresh");
    diesel::update(native_jobs::table.find(&id))
        .set(native_jobs::table.renewed_ago(Age::new(Duration::from_secs(61)).unwrap()))
        .execute(&mut *conn)
        .unwrap();
    let outlived: i64 = native_jobs::table
        .find(&id)
        .filter(native_jobs::table.outlived(minute()))
        .count()
        .get_result(&mut *conn)
        .unwrap();
    assert_eq!(outlived, 1);
    assert_eq!(take(&mut conn, &rival), 1, "outlived");
    let holders = native_jobs::table
        .holders(minute())
        .run(&mut *conn)
        .unwrap();
    let held = holders
        .iter()
        .find(|holding| holding.key == id)
        .expect("held");
    let now: i64 = diesel::select(diesel_lease::__private::sql::ClockMicros)
        .get_result(&mut *conn)
        .unwrap();
    let since = now - held.claimed_at.timestamp_micros();
    assert!(
        (0..30_000_000).contains(&since),
        "claimed_at in UTC from the column's own type: {held:?}, {since} µs ago"
    );
    let released = diesel::update(
        native_jobs::table
            .find(&id)
            .filter(native_jobs::table.held_by(rival.token())),
    )
    .set(native_jobs::table.released())
    .execute(&mut *conn)
    .unwrap();
    assert_eq!(released, 1);
}

#[test]
fn a_token_that_differs_only_in_case_holds_nothing() {
    let mut conn = connection();
    let id = queued_job(&mut conn);
    let holder = Claim::with_token("worker-1", &unique_id("Turn")).unwrap();
    claim(&mut conn, &id, &holder, minute()).expect("claim");
    let shouting = Claim::with_token("worker-2", &holder.token().to_uppercase()).unwrap();
    let whispering = Claim::with_token("worker-3", &holder.token().to_lowercase()).unwrap();

    assert!(
        !renew(&mut conn, &id, &shouting),
        "tokens compare exactly, on MySQL too"
    );
    assert!(!finish(&mut conn, &id, &whispering));
    assert_eq!(
        job(&mut conn, &id).lease_token.as_deref(),
        Some(holder.token())
    );
}

// The exact case of the issue: a changeset with `Option` fields that also derives `QueryId`.
#[derive(Debug, Clone, AsChangeset, diesel::query_builder::QueryId)]
#[diesel(table_name = lease_jobs)]
struct Patch {
    status: Option<String>,
    worker: Option<String>,
}

#[test]
fn an_update_with_option_fields_writes_the_columns_of_each_call_never_a_cached_statement_of_another(
) {
    let mut conn = connection();
    let id = queued_job(&mut conn);
    let patch = |status: Option<&str>, worker: Option<&str>| Patch {
        status: status.map(str::to_owned),
        worker: worker.map(str::to_owned),
    };

    diesel_lease::update(lease_jobs::table.find(&id))
        .set(patch(Some("running"), None))
        .execute(&mut *conn)
        .unwrap();
    diesel_lease::update(lease_jobs::table.find(&id))
        .set(patch(None, Some("a worker")))
        .execute(&mut *conn)
        .unwrap();

    let row = job(&mut conn, &id);
    assert_eq!(
        (row.status.as_str(), row.worker.as_deref()),
        ("running", Some("a worker"))
    );
}

#[test]
fn a_refused_claim_says_whether_the_row_is_missing_held_or_not_claimable() {
    let mut conn = connection();
    let id = queued_job(&mut conn);
    let refusal = |conn: &mut backend::Conn, key: &str, status: &str| {
        let outcome = lease_jobs::table
            .claim_row(key, minute())
            .by(&Claim::new("worker-2").unwrap())
            .filter(lease_jobs::status.eq(status))
            .run::<Job>(conn)
            .unwrap();
        match outcome {
            Claimed::Refused(refused) => {
                assert_eq!(refused.key(), key, "the refusal names the row");
                refused.why().clone()
            }
            Claimed::Won(won) => panic!("won {won:?}"),
        }
    };

    assert_eq!(
        refusal(&mut conn, "no-such-job", "queued"),
        Refusal::NoSuchRow
    );
    assert_eq!(
        refusal(&mut conn, &id, "done"),
        Refusal::NotClaimable,
        "free, but the filter refuses it"
    );
    let holder = Claim::new("worker-1").unwrap();
    claim(&mut conn, &id, &holder, minute()).expect("claim");
    age(&mut conn, &id, Duration::from_secs(20));
    let Refusal::Held(held) = refusal(&mut conn, &id, "running") else {
        panic!("held")
    };
    assert_eq!(
        (held.owner.as_str(), held.token.as_str()),
        ("worker-1", holder.token())
    );
    assert!(
        held.age >= Duration::from_secs(20) && held.age < Duration::from_secs(30),
        "{held:?}"
    );
    assert!(
        held.frees_in <= Duration::from_secs(40) && held.frees_in > Duration::from_secs(30),
        "{held:?}"
    );
    let _: &LeaseHolder = &held;
}

#[test]
fn a_refusal_whose_row_changed_before_its_read_says_what_is_true_free_or_outlived_and_since_when() {
    let mut conn = connection();
    let conn = &mut conn;
    let id = queued_job(conn);
    let holder = Claim::new("worker-1").unwrap();
    claim(conn, &id, &holder, minute()).expect("a free job");
    // A claim with no filter of its own, refused while the row is held; `meanwhile` runs on a
    // connection of its own between the claim and its read of why.
    let refused = |meanwhile: Box<dyn FnOnce(&mut backend::Conn) + Send>| -> Refusal {
        let mut claimant = backend::connect();
        claimant.set_instrumentation(BeforeTheRead::new(move || {
            meanwhile(&mut backend::connect())
        }));
        let outcome = lease_jobs::table
            .claim_row(id.as_str(), minute())
            .by(&Claim::new("worker-2").unwrap())
            .run::<Job>(&mut claimant)
            .unwrap();
        let Claimed::Refused(refused) = outcome else {
            panic!("held, so refused")
        };
        refused.why().clone()
    };
    let selected = |conn: &mut backend::Conn| -> Refusal {
        lease_jobs::table
            .find(&id)
            .select(lease_jobs::table.holder(minute()))
            .first(conn)
            .unwrap()
    };

    // Its lease runs out (dated 75 s back under a 60 s lease) between the claim and its read:
    // outlived 15 s ago.
    let aged = id.clone();
    let refused_then_outlived = refused(Box::new(move |conn| {
        age(conn, &aged, Duration::from_secs(75))
    }));
    for refusal in [refused_then_outlived, selected(conn)] {
        let Refusal::Outlived { owner, token, ago } = &refusal else {
            panic!("outlived, not {refusal:?}")
        };
        assert_eq!(
            (owner.as_str(), token.as_str()),
            ("worker-1", holder.token())
        );
        assert!(
            *ago >= Duration::from_secs(15) && *ago < Duration::from_secs(25),
            "{refusal:?}"
        );
    }

    // The holder releases it between the claim and its read: free, and the words say so, not
    // that a filter refused it.
    let (released, by) = (id.clone(), holder.clone());
    let why = refused_while_fresh(conn, &id, &holder, || {
        refused(Box::new(move |conn| {
            let release = lease_jobs::table
                .held_rows(&by, vec![released.clone()])
                .release();
            assert_eq!(release.run(conn).unwrap(), [released.as_str()]);
        }))
    });
    assert_eq!(why, Refusal::Free);
    assert_eq!(why.to_string(), "free: no claim holds it now");
    assert_eq!(selected(conn), Refusal::Free);
}

/// A refusal by `refused` of the row `id`, after its lease was made fresh again for `holder`.
fn refused_while_fresh<R>(
    conn: &mut backend::Conn,
    id: &str,
    holder: &Claim,
    refused: impl FnOnce() -> R,
) -> R {
    assert_eq!(
        lease_jobs::table
            .held_rows(holder, vec![id.to_owned()])
            .renew()
            .run(conn)
            .unwrap(),
        [id.to_owned()],
        "still held by its first claim"
    );
    refused()
}

#[test]
fn a_batch_claims_at_most_its_size_of_the_matching_rows_in_the_callers_order() {
    let mut conn = connection();
    let mut ids = queued_jobs(&mut conn, 5, "queued");
    ids.sort();
    let done = queued_jobs(&mut conn, 2, "done");
    let worker = Claim::new("worker-1").unwrap();

    let batch = lease_jobs::table
        .claim_batch(3, minute())
        .by(&worker)
        .filter(lease_jobs::id.eq_any(ids.iter().chain(&done)))
        .filter(lease_jobs::status.eq("queued"))
        .order_by(lease_jobs::id)
        .set(lease_jobs::status.eq("running"))
        .returning(Job::as_select())
        .run(&mut *conn)
        .unwrap();

    let mut won: Vec<&str> = batch.rows().iter().map(|job| job.id.as_str()).collect();
    won.sort();
    assert_eq!(won, ids[..3], "the first three in the order asked for");
    assert_eq!(
        batch.keys(),
        batch
            .rows()
            .iter()
            .map(|job| job.id.clone())
            .collect::<Vec<_>>(),
        "each row's key, in the order of the rows"
    );
    assert_eq!(
        batch.claim(),
        &worker,
        "the batch carries the caller's claim"
    );
    for job in batch.rows() {
        assert_eq!(
            (job.status.as_str(), job.worker.as_deref()),
            ("running", Some("worker-1"))
        );
        assert_eq!(job.lease_token.as_deref(), Some(worker.token()));
    }
    for id in ids[3..].iter().chain(&done) {
        assert_eq!(
            job(&mut conn, id).lease_token,
            None,
            "{id} was not asked for and is not held"
        );
    }
    let rest = lease_jobs::table
        .claim_batch(10, minute())
        .by(&Claim::new("worker-2").unwrap())
        .filter(lease_jobs::id.eq_any(&ids))
        .returning(lease_jobs::id)
        .run::<String>(&mut *conn)
        .unwrap();
    let mut rest = rest.into_parts().0;
    rest.sort();
    assert_eq!(
        rest,
        ids[3..],
        "held rows are not claimable, the others are"
    );
}

#[test]
fn a_batch_finishes_in_one_guarded_statement_that_says_which_rows_it_changed() {
    let mut conn = connection();
    let ids = queued_jobs(&mut conn, 4, "queued");
    let batch = lease_jobs::table
        .claim_batch(4, minute())
        .by(&Claim::new("worker-1").unwrap())
        .filter(lease_jobs::id.eq_any(&ids))
        .set(lease_jobs::status.eq("running"))
        .returning(lease_jobs::id)
        .run::<String>(&mut *conn)
        .unwrap();
    assert_eq!(batch.len(), 4);
    // One row is lost to a rescuer after its lease ran out.
    let lost = &ids[0];
    age(&mut conn, lost, Duration::from_secs(61));
    let rescuer = Claim::new("worker-2").unwrap();
    claim(&mut conn, lost, &rescuer, minute()).expect("taken over");

    let mut renewed = batch.renew().run(&mut *conn).unwrap();
    let mut finished = batch
        .release()
        .set(lease_jobs::status.eq("done"))
        .run(&mut *conn)
        .unwrap();
    renewed.sort();
    finished.sort();

    let mut expected = ids[1..].to_vec();
    expected.sort();
    assert_eq!(renewed, expected, "a renewal too says which rows it held");
    assert_eq!(
        finished, expected,
        "the rows the claim still held, and only those"
    );
    for id in &ids[1..] {
        let row = job(&mut conn, id);
        assert_eq!((row.status.as_str(), row.lease_token), ("done", None));
    }
    assert_eq!(
        job(&mut conn, lost).lease_token.as_deref(),
        Some(rescuer.token()),
        "the rescuer's row is untouched"
    );
    assert!(
        batch.release().run(&mut *conn).unwrap().is_empty(),
        "never twice"
    );
}

#[test]
fn a_release_of_more_keys_than_one_list_takes_releases_every_row() {
    let mut conn = connection();
    // Keys sharing a prefix, claimed by it: a key list that long in the claim would make
    // MariaDB scan the table.
    let (pattern, ids) = queued_run(&mut conn, 1_000);
    let worker = Claim::new("worker-1").unwrap();
    let batch = lease_jobs::table
        .claim_batch(1_000, minute())
        .by(&worker)
        .filter(lease_jobs::id.like(&pattern))
        .returning(lease_jobs::id)
        .run::<String>(&mut *conn)
        .unwrap();
    assert_eq!(batch.len(), 1_000);

    let released = lease_jobs::table
        .held_rows(&worker, ids.clone())
        .release()
        .run(&mut *conn)
        .unwrap();
    assert_eq!(released.len(), 1_000, "every key of every list");
    let still_held: i64 = lease_jobs::table
        .filter(lease_jobs::id.like(&pattern))
        .filter(lease_jobs::lease_token.is_not_null())
        .count()
        .get_result(&mut *conn)
        .unwrap();
    assert_eq!(still_held, 0);
}

#[test]
fn a_batch_size_out_of_range_is_refused_before_anything_is_sent() {
    let mut conn = connection();
    let ids = queued_jobs(&mut conn, 2, "queued");
    let run = |conn: &mut backend::Conn, size: usize| {
        lease_jobs::table
            .claim_batch(size, minute())
            .by(&Claim::new("worker").unwrap())
            .filter(lease_jobs::id.eq_any(&ids))
            .returning(lease_jobs::id)
            .run::<String>(conn)
    };

    assert!(matches!(run(&mut conn, 0), Err(Error::InvalidBatchSize(_))));
    assert!(matches!(
        run(&mut conn, diesel_lease::MAX_BATCH_SIZE + 1),
        Err(Error::InvalidBatchSize(_))
    ));
    let reap = lease_jobs::table
        .reap(0, minute())
        .filter(lease_jobs::id.eq_any(&ids))
        .run(&mut *conn);
    assert!(matches!(reap, Err(Error::InvalidBatchSize(_))), "{reap:?}");
    for id in &ids {
        assert_eq!(job(&mut conn, id).lease_token, None, "nothing was written");
    }
    assert_eq!(
        run(&mut conn, diesel_lease::MAX_BATCH_SIZE).unwrap().len(),
        2,
        "the largest size is taken"
    );
}

#[test]
fn sixteen_workers_claim_batches_of_ten_from_two_thousand_jobs_and_each_job_is_won_once() {
    const WORKERS: usize = 16;
    // The jobs are found by their ids' prefix: a list of 2,000 keys would make MariaDB scan the
    // table and lock every row it reads, other tests' included.
    let (pattern, ids) = queued_run(&mut connection(), 2_000);
    let queued = |conn: &mut backend::Conn| queued_in(conn, &pattern);

    // A worker's empty batch means nothing is claimable now (all held, or a lost conflict), not
    // that the queue is done: the queue is done when no job is left queued.
    let take = |worker: usize, conn: &mut backend::Conn| {
        let batch = claim_queued(conn, &pattern, 10, worker);
        assert!(batch.len() <= 10);
        let finished = batch
            .release()
            .set(lease_jobs::status.eq("done"))
            .run(conn)
            .unwrap();
        assert_eq!(finished.len(), batch.len(), "every row won is still held");
        batch.into_parts().0
    };
    let mut won = drain(&backend::pool_of(WORKERS as u32), WORKERS, take, |conn| {
        queued(conn) > 0
    });

    won.sort();
    assert_eq!(won.len(), 2_000, "each job won exactly once");
    assert_eq!(won, ids);
}

#[test]
fn a_reap_takes_only_outlived_rows_that_match_its_filter_and_fences_their_holder() {
    let mut conn = connection();
    let outlived = queued_jobs(&mut conn, 2, "queued");
    let fresh = queued_jobs(&mut conn, 1, "queued");
    let done = queued_jobs(&mut conn, 1, "queued");
    let holder = claimed_and_aged(&mut conn, &outlived, "worker-1", Duration::from_secs(120));
    claimed_and_aged(&mut conn, &fresh, "worker-2", Duration::from_secs(10));
    claimed_and_aged(&mut conn, &done, "worker-3", Duration::from_secs(120));
    diesel::update(lease_jobs::table.filter(lease_jobs::id.eq_any(&done)))
        .set(lease_jobs::status.eq("done"))
        .execute(&mut *conn)
        .unwrap();
    let all: Vec<String> = outlived
        .iter()
        .chain(&fresh)
        .chain(&done)
        .cloned()
        .collect();

    let mut reaped = lease_jobs::table
        .reap(100, minute())
        .filter(lease_jobs::id.eq_any(&all))
        .filter(lease_jobs::status.eq("running"))
        .set(lease_jobs::status.eq("queued"))
        .run(&mut *conn)
        .unwrap();

    reaped.sort();
    let mut expected = outlived.clone();
    expected.sort();
    assert_eq!(
        reaped, expected,
        "the outlived running rows, not the fresh one nor the done one"
    );
    for id in &outlived {
        let row = job(&mut conn, id);
        assert_eq!((row.status.as_str(), row.lease_token), ("queued", None));
    }
    assert!(job(&mut conn, &fresh[0]).lease_token.is_some());
    assert!(
        job(&mut conn, &done[0]).lease_token.is_some(),
        "the filter kept it"
    );
    let late = holder
        .release()
        .set(lease_jobs::status.eq("done"))
        .run(&mut *conn)
        .unwrap();
    assert!(
        late.is_empty(),
        "the reaped holder's late finish lands nowhere"
    );
}

#[test]
fn sixteen_reapers_race_over_five_hundred_outlived_rows_and_each_is_reaped_once() {
    const REAPERS: usize = 16;
    let ids = queued_jobs(&mut connection(), 500, "queued");
    claimed_and_aged(
        &mut connection(),
        &ids,
        "worker-dead",
        Duration::from_secs(120),
    );

    // An empty reap means nothing is reapable now, not that none is left.
    let reap = |_, conn: &mut backend::Conn| {
        lease_jobs::table
            .reap(10, minute())
            .filter(lease_jobs::id.eq_any(&ids))
            .set(lease_jobs::status.eq("queued"))
            .run(conn)
            .expect("no reap errors")
    };
    let stale = |conn: &mut backend::Conn| {
        let stale = lease_jobs::table.stale(minute()).run(conn).unwrap();
        stale.iter().any(|holding| ids.contains(&holding.key))
    };
    let mut reaped = drain(&backend::pool_of(REAPERS as u32), REAPERS, reap, stale);

    reaped.sort();
    let mut expected = ids.clone();
    expected.sort();
    assert_eq!(reaped.len(), 500, "each row reaped exactly once");
    assert_eq!(reaped, expected);
}

#[test]
fn holders_stale_rows_and_counts_per_owner_read_by_the_databases_clock() {
    let mut conn = connection();
    let (first, second) = (unique_id("owner"), unique_id("owner"));
    let young = queued_jobs(&mut conn, 2, "queued");
    let old = queued_jobs(&mut conn, 1, "queued");
    let others = queued_jobs(&mut conn, 2, "queued");
    claimed_and_aged(&mut conn, &young, &first, Duration::from_secs(10));
    claimed_and_aged(&mut conn, &old, &first, Duration::from_secs(90));
    let held = claimed_and_aged(&mut conn, &others, &second, Duration::from_secs(30));

    let ours =
        |holdings: Vec<diesel_lease::__private::Holding<String>>| -> Vec<diesel_lease::__private::Holding<String>> {
            holdings
                .into_iter()
                .filter(|holding| holding.owner == first || holding.owner == second)
                .collect()
        };
    let holders = ours(lease_jobs::table.holders(minute()).run(&mut *conn).unwrap());
    assert_eq!(holders.len(), 5);
    assert_eq!(holders[0].key, old[0], "oldest first");
    let second_holds = holders
        .iter()
        .find(|holding| holding.owner == second)
        .unwrap();
    assert_eq!(second_holds.token, held.claim().token());
    assert!(
        second_holds.age >= Duration::from_secs(30) && second_holds.age < Duration::from_secs(40),
        "{second_holds:?}"
    );
    assert!(
        second_holds.time_left > Duration::from_secs(20)
            && second_holds.time_left <= Duration::from_secs(30)
    );
    let leased_at = job(&mut conn, &second_holds.key).leased_at.unwrap();
    assert!(
        (second_holds.claimed_at - leased_at)
            .num_milliseconds()
            .abs()
            <= 1,
        "{second_holds:?} against {leased_at}"
    );

    let stale = ours(lease_jobs::table.stale(minute()).run(&mut *conn).unwrap());
    assert_eq!(
        stale.iter().map(|holding| &holding.key).collect::<Vec<_>>(),
        [&old[0]]
    );
    assert!(stale[0].is_stale());

    let counts = lease_jobs::table.held_per_owner().run(&mut *conn).unwrap();
    let count = |owner: &str| {
        counts
            .iter()
            .find(|(name, _)| name == owner)
            .map(|(_, rows)| *rows)
    };
    assert_eq!((count(&first), count(&second)), (Some(3), Some(2)));
}

#[test]
fn the_fence_rises_with_every_take_and_with_nothing_else() {
    let mut conn = connection();
    let id = queued_job(&mut conn);
    let fence_of_row = |conn: &mut backend::Conn| job(conn, &id).fence;
    let take = |conn: &mut backend::Conn, claim: &Claim| -> i64 {
        let outcome = lease_jobs::table
            .claim_row(id.as_str(), minute())
            .by(claim)
            .run::<Job>(conn)
            .unwrap();
        let won = outcome.won().expect("claimable");
        assert_eq!(
            won.row().fence,
            won.fence(),
            "the claim reports the row's fence"
        );
        won.fence()
    };

    let first = Claim::new("worker-1").unwrap();
    assert_eq!(take(&mut conn, &first), 1, "the first take");
    assert!(renew(&mut conn, &id, &first));
    assert_eq!(fence_of_row(&mut conn), 1, "a renewal leaves the fence");

    age(&mut conn, &id, Duration::from_secs(61));
    let second = Claim::new("worker-2").unwrap();
    assert_eq!(take(&mut conn, &second), 2, "a takeover after the lease");
    assert!(
        !renew(&mut conn, &id, &first),
        "the first holder is fenced off by its token as well"
    );
    let written = lease_jobs::table
        .held_rows(&second, vec![id.clone()])
        .update()
        .set(lease_jobs::status.eq("running"))
        .run(&mut *conn)
        .unwrap();
    assert_eq!(written, std::slice::from_ref(&id));
    assert_eq!(
        fence_of_row(&mut conn),
        2,
        "a holder's write leaves the fence"
    );

    age(&mut conn, &id, Duration::from_secs(61));
    let reaped = lease_jobs::table
        .reap(10, minute())
        .filter(lease_jobs::id.eq(&id))
        .run(&mut *conn)
        .unwrap();
    assert_eq!(reaped, std::slice::from_ref(&id));
    assert_eq!(
        fence_of_row(&mut conn),
        2,
        "a reap releases, it does not take"
    );
    let third = Claim::new("worker-3").unwrap();
    assert_eq!(take(&mut conn, &third), 3, "a take after a reap");

    let fourth = Claim::new("worker-4").unwrap();
    let batch_of_one = |conn: &mut backend::Conn| {
        lease_jobs::table
            .claim_batch(1, minute())
            .by(&fourth)
            .filter(lease_jobs::id.eq(&id))
            .returning(lease_jobs::id)
            .run::<String>(conn)
            .unwrap()
    };
    assert!(batch_of_one(&mut conn).is_empty(), "held");
    assert!(finish(&mut conn, &id, &third));
    let batch = batch_of_one(&mut conn);
    assert_eq!(
        batch.fences(),
        [4],
        "a batch reports each row's fence; a release left it at 3"
    );
}

#[test]
fn a_take_composed_by_hand_raises_the_fence_too() {
    let mut conn = connection();
    let id = queued_job(&mut conn);
    claim(&mut conn, &id, &Claim::new("worker-1").unwrap(), minute()).expect("claim");
    age(&mut conn, &id, Duration::from_secs(61));

    let by_hand = Claim::new("worker-2").unwrap();
    let taken = diesel_lease::update(
        lease_jobs::table
            .find(&id)
            .filter(lease_jobs::table.claimable(minute())),
    )
    .set(lease_jobs::table.taken(&by_hand))
    .execute(&mut *conn)
    .unwrap();

    assert_eq!(taken, 1);
    assert_eq!(
        job(&mut conn, &id).fence,
        2,
        "higher than the first holder's"
    );
}

#[test]
fn the_callers_changes_read_the_row_as_it_was_before_the_claim_or_release() {
    let mut conn = connection();
    let previous = |conn: &mut backend::Conn, id: &str| job(conn, id).previous_worker;
    let carry_worker = lease_jobs::previous_worker.eq(lease_jobs::worker);

    // One row, taken over from an outlived holder: the caller reads the old holder.
    let id = queued_job(&mut conn);
    claim(&mut conn, &id, &Claim::new("worker-1").unwrap(), minute()).unwrap();
    age(&mut conn, &id, Duration::from_secs(120));
    let outcome = lease_jobs::table
        .claim_row(id.as_str(), minute())
        .by(&Claim::new("worker-2").unwrap())
        .set(carry_worker)
        .run::<Job>(&mut *conn)
        .unwrap();
    let taker = outcome.won().expect("outlived, so claimable");
    assert_eq!(previous(&mut conn, &id).as_deref(), Some("worker-1"));

    // Its release: the caller reads the holder it releases.
    assert!(taker.release().set(carry_worker).run(&mut *conn).unwrap());
    assert_eq!(previous(&mut conn, &id).as_deref(), Some("worker-2"));

    // A batch, taken over from an outlived holder, then reaped.
    let ids = queued_jobs(&mut conn, 2, "queued");
    claimed_and_aged(&mut conn, &ids, "worker-3", Duration::from_secs(120));
    let batch = lease_jobs::table
        .claim_batch(2, minute())
        .by(&Claim::new("worker-4").unwrap())
        .filter(lease_jobs::id.eq_any(&ids))
        .set(carry_worker)
        .returning(lease_jobs::id)
        .run::<String>(&mut *conn)
        .unwrap();
    assert_eq!(batch.len(), 2);
    for id in &ids {
        assert_eq!(previous(&mut conn, id).as_deref(), Some("worker-3"));
    }
    age_jobs(&mut conn, &ids, Duration::from_secs(120));
    let reaped = lease_jobs::table
        .reap(10, minute())
        .filter(lease_jobs::id.eq_any(&ids))
        .set(carry_worker)
        .run(&mut *conn)
        .unwrap();
    assert_eq!(reaped.len(), 2);
    for id in &ids {
        assert_eq!(
            previous(&mut conn, id).as_deref(),
            Some("worker-4"),
            "the reaper reads the holder it reaps, as on every backend"
        );
    }
}
