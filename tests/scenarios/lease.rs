// The generic layer's scenarios, included once per backend by tests/lease.rs: `backend` names
// the backend's support module (pool, connections), so every statement here is concrete. This
// file: a row's claim, won or lost, and the token that proves it; and the helpers (claim, renew,
// finish) of the scenario files included after it.
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
