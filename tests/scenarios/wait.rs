// Waits for a lease, included once per backend by tests/wait.rs (and through the pooler by
// tests/pooler.rs). Real time passes here, since that is what a wait is, but little of it (a few
// seconds a test at most); what is asserted is outcomes and counts of statements, never times.
// Each waiter has a connection of a pool of its own that counts the statements it sends.
use std::sync::atomic::Ordering;
use std::time::Duration;

use diesel::prelude::*;
use diesel_lease::prelude::*;
use diesel_lease::{testkit, Error, Keeper, KeeperSettings};

use crate::common::jobs::{lease_jobs, Job};
use crate::common::{eventually, unique_id, Counter};

/// The first pause of a backoff, as `Waiting` documents it.
const FIRST_STEP: Duration = Duration::from_millis(20);

/// A wait longer than the scenarios' patience (`eventually`'s, about 30 s), or a lease that
/// frees later than that: what a waiter wins within it, a recheck won, not the wait's end, nor
/// a sleep until the lease frees.
const LONGER_THAN_PATIENCE: Duration = Duration::from_secs(600);

/// What the waiter on a thread of its own gave back, once it has: waited for as a test waits for
/// a condition. The thread is the test's own, not a scoped one, so that a test that fails here
/// fails at once, not once the wait is over.
fn finished<R>(waiter: std::thread::JoinHandle<R>, what: &str) -> R {
    eventually(what, || waiter.is_finished());
    waiter.join().expect("the waiter ran")
}

/// A waiter's connection, of a pool of its own whose statements are counted, the count starting
/// once it is taken (r2d2's check of the connection is not the wait's).
fn waiter() -> (Pooled, Counter) {
    let (pool, statements) = backend::pool_counting_statements(1);
    let conn = pool.get().expect("the waiter's connection");
    statements.store(0, Ordering::SeqCst);
    (conn, statements)
}

fn sent(statements: &Counter) -> u64 {
    statements.load(Ordering::SeqCst)
}

/// The most attempts `Waiting` documents for a wait of `up_to` whose pauses, once `short` of
/// them have passed, are at least three quarters of `interval`: the first attempt, those
/// pauses, one whole pause for each three quarters of the interval in `up_to`, and the last at
/// the deadline.
fn most_attempts(up_to: Duration, interval: Duration, short: u64) -> u64 {
    let shortest = interval * 3 / 4;
    let whole = u64::try_from(up_to.as_nanos() / shortest.as_nanos()).unwrap();
    2 + short + whole
}

/// How many pauses of a backoff, from its first step, doubling, come before `interval`.
fn doublings(interval: Duration) -> u64 {
    let mut step = FIRST_STEP;
    let mut short = 0;
    while step < interval {
        step *= 2;
        short += 1;
    }
    short
}

/// Claims the queued job `id` for `owner` under `lease`, leaving it queued (a holder that dies
/// leaves it so for the next).
fn held(
    conn: &mut backend::Conn,
    id: &str,
    owner: &str,
    lease: Lease,
) -> Won<Job, lease_jobs::table> {
    lease_jobs::table
        .claim_row(id, lease)
        .by(&Claim::new(owner).unwrap())
        .returning(Job::as_select())
        .run(conn)
        .unwrap()
        .won()
        .expect("the job is free")
}

/// The waiting claim of job `id` by `waiter`, which must find it queued, and sets it running.
fn wait_for(
    conn: &mut backend::Conn,
    id: &str,
    up_to: Duration,
    recheck: Duration,
) -> Result<Claimed<Job, lease_jobs::table>, Error> {
    lease_jobs::table
        .claim_row(id, minute())
        .by(&Claim::new("waiter").unwrap())
        .filter(lease_jobs::status.eq("queued"))
        .set(lease_jobs::status.eq("running"))
        .returning(Job::as_select())
        .waiting(up_to)
        .rechecking_every(recheck)
        .run(conn)
}

/// The refusal a wait gave back, with the reading it carries.
fn refused(claimed: Claimed<Job, lease_jobs::table>) -> Refusal {
    match claimed {
        Claimed::Won(won) => panic!("the wait won {:?}", won.row()),
        Claimed::Refused(refused) => refused.why().clone(),
    }
}

/// What a waiter for a job held for a minute gave back, waiting up to `up_to` and rechecking
/// every `recheck` on a thread of its own, while `meanwhile` ran on the test's connection with
/// the holder's claim (once the waiter had been refused and had read why); and how many
/// statements the waiter had sent when `meanwhile` was done, and in all.
struct Waited {
    claimed: Claimed<Job, lease_jobs::table>,
    holder: Won<Job, lease_jobs::table>,
    sent_before: u64,
    sent: u64,
}

fn waited_while(
    up_to: Duration,
    recheck: Duration,
    meanwhile: impl FnOnce(&mut backend::Conn, &Won<Job, lease_jobs::table>),
) -> Waited {
    let conn = &mut connection();
    let id = queued_job(conn);
    let holder = held(conn, &id, "holder", minute());
    let (mut waiting, statements) = waiter();
    let waiter = std::thread::spawn(move || wait_for(&mut waiting, &id, up_to, recheck));
    eventually("the waiter refused and told why", || sent(&statements) >= 2);
    meanwhile(conn, &holder);
    let sent_before = sent(&statements);
    let claimed = finished(waiter, "the wait's outcome").unwrap();
    Waited {
        claimed,
        holder,
        sent_before,
        sent: sent(&statements),
    }
}

#[test]
fn a_waiter_wins_a_row_whose_holders_lease_runs_out_while_it_waits() {
    let recheck = Duration::from_millis(100);
    let waited = waited_while(LONGER_THAN_PATIENCE, recheck, |conn, holder| {
        // Time passes for the holder's claim alone: its lease runs out by the database's clock.
        let aged = testkit::age(holder, Age::new(Duration::from_secs(61)).unwrap());
        assert_eq!(aged.run(conn).unwrap().len(), 1, "the holder's row aged");
    });

    let won = waited
        .claimed
        .won()
        .expect("the waiter won the outlived row");
    assert_eq!(won.row().worker.as_deref(), Some("waiter"));
    assert_eq!(won.row().status, "running", "its own changes, in its claim");
    let holder_renewed = waited.holder.renew().run(&mut connection()).unwrap();
    assert!(!holder_renewed, "the holder is fenced off");
}

#[test]
fn a_holder_that_releases_early_is_noticed_by_a_waiter() {
    let recheck = Duration::from_millis(150);
    let waited = waited_while(LONGER_THAN_PATIENCE, recheck, |conn, holder| {
        // 60 s of lease left, and the holder is done with the job early.
        assert!(holder.release().run(conn).unwrap());
    });

    let won = waited
        .claimed
        .won()
        .expect("the waiter won the released row");
    assert_eq!(won.row().worker.as_deref(), Some("waiter"));
}

#[test]
fn a_wait_that_ends_with_the_row_kept_gives_back_the_last_refusal_having_sent_what_it_documents() {
    let conn = &mut connection();
    let id = queued_job(conn);
    // A lease of 6 s, kept by a keeper renewing every 2 s: held throughout the wait, unless the
    // keeper is more than 3 s late.
    let lease = Lease::from_secs(6).unwrap();
    let keeper = Keeper::start(backend::pool_of(2), KeeperSettings::new(lease)).unwrap();
    let kept = keeper.keep(held(conn, &id, "holder", lease)).unwrap();
    let (mut waiting, statements) = waiter();

    // The waiter's lease is the holder's, as every claimer of a row must judge it; its recheck
    // interval the default, a third of the lease.
    let up_to = Duration::from_secs(4);
    let claimed = lease_jobs::table
        .claim_row(&id, lease)
        .by(&Claim::new("waiter").unwrap())
        .returning(Job::as_select())
        .waiting(up_to)
        .run(&mut waiting)
        .unwrap();

    let Refusal::Held(holder) = refused(claimed) else {
        panic!("the row was held throughout");
    };
    assert_eq!(holder.owner, "holder");
    assert!(kept.is_held(), "the keeper held it throughout");
    // Two statements an attempt, the claim and the read of why; at least the first attempt and
    // the last, at the deadline.
    let most = 2 * most_attempts(up_to, lease.as_duration() / 3, 0);
    let sent = sent(&statements);
    assert!(
        (4..=most).contains(&sent),
        "{sent} statements in a wait of {up_to:?}, at most {most}"
    );
    assert_eq!(kept.release().run(conn).unwrap(), [id]);
}

#[test]
fn no_such_row_or_a_row_the_filter_refuses_is_given_back_at_once() {
    let conn = &mut connection();
    let id = queued_job(conn);
    let (mut waiting, statements) = waiter();
    let up_to = Duration::from_secs(30);

    let missing = wait_for(
        &mut waiting,
        &unique_id("missing"),
        up_to,
        Duration::from_millis(100),
    );
    assert_eq!(refused(missing.unwrap()), Refusal::NoSuchRow);
    assert_eq!(sent(&statements), 2, "the claim and the read of why");

    let not_done = lease_jobs::table
        .claim_row(&id, minute())
        .by(&Claim::new("waiter").unwrap())
        .filter(lease_jobs::status.eq("done"))
        .returning(Job::as_select())
        .waiting(up_to)
        .run(&mut *waiting);
    assert_eq!(refused(not_done.unwrap()), Refusal::NotClaimable);
    assert_eq!(sent(&statements), 4, "the claim and the read of why, again");
    assert_eq!(job(conn, &id).worker, None, "nothing written");
}

#[test]
fn a_waiter_whose_filter_refuses_the_row_its_holder_left_gives_up_at_once() {
    let up_to = Duration::from_secs(30);
    let waited = waited_while(up_to, Duration::from_millis(100), |conn, holder| {
        // Done: the waiter's filter (queued) will never take it.
        let released = holder.release().set(lease_jobs::status.eq("done"));
        assert!(released.run(conn).unwrap());
    });

    assert_eq!(refused(waited.claimed), Refusal::NotClaimable);
    // An attempt under way at the release, the one after it, and one more at once in case the
    // release had landed between a claim and its read: two statements each.
    let (sent, before) = (waited.sent, waited.sent_before);
    assert!(
        sent <= before + 6,
        "{sent} statements, {before} of them before the release"
    );
}

#[test]
fn a_batch_waiting_on_an_empty_queue_takes_work_that_comes() {
    let conn = &mut connection();
    let pattern = format!("{}-%", unique_id("wait"));
    let (mut waiting, statements) = waiter();

    let waiter = std::thread::spawn({
        let pattern = pattern.clone();
        move || {
            lease_jobs::table
                .claim_batch(10, minute())
                .by(&Claim::new("waiter").unwrap())
                .filter(lease_jobs::id.like(&pattern))
                .filter(lease_jobs::status.eq("queued"))
                .set(lease_jobs::status.eq("running"))
                .returning(lease_jobs::id)
                .waiting(LONGER_THAN_PATIENCE)
                .rechecking_every(Duration::from_millis(100))
                .run::<String>(&mut waiting)
        }
    });
    // Twelve empty batches, a statement each, before any work comes: the backoff has reached
    // its ceiling (after 20, 40 and 80 ms) and stays there (doubling on, the twelfth would come
    // after 80 s).
    eventually("twelve empty batches", || sent(&statements) >= 12);
    let ids: Vec<String> = (0..3)
        .map(|n| pattern.replace('%', &n.to_string()))
        .collect();
    let rows: Vec<_> = ids
        .iter()
        .map(|id| (lease_jobs::id.eq(id), lease_jobs::status.eq("queued")))
        .collect();
    diesel::insert_into(lease_jobs::table)
        .values(&rows)
        .execute(conn)
        .unwrap();
    let batch = finished(waiter, "the waiter took the work");

    let mut won = batch.unwrap().keys().to_vec();
    won.sort();
    assert_eq!(won, ids, "the work that came, all of it");
}

#[test]
fn a_batch_waiting_for_work_that_never_comes_gives_back_an_empty_batch_having_sent_what_it_documents(
) {
    let pattern = format!("{}-%", unique_id("never"));
    let (mut waiting, statements) = waiter();
    let up_to = Duration::from_millis(1_500);

    let batch = lease_jobs::table
        .claim_batch(10, minute())
        .by(&Claim::new("waiter").unwrap())
        .filter(lease_jobs::id.like(&pattern))
        .returning(lease_jobs::id)
        .waiting(up_to)
        .run::<String>(&mut waiting)
        .unwrap();

    assert!(batch.is_empty());
    // One statement an empty batch, on every backend; the backoff at its default ceiling, 1 s.
    let interval = Duration::from_secs(1);
    let most = most_attempts(up_to, interval, doublings(interval));
    let sent = sent(&statements);
    assert!(
        (2..=most).contains(&sent),
        "{sent} statements in a wait of {up_to:?}, at most {most}"
    );
}

#[test]
fn a_wait_inside_a_transaction_or_with_bad_input_is_refused_before_anything_is_sent() {
    let (mut waiting, statements) = waiter();
    let id = queued_job(&mut waiting);
    let claim = Claim::new("waiter").unwrap();
    let row = || {
        lease_jobs::table
            .claim_row(&id, minute())
            .by(&claim)
            .returning(lease_jobs::id)
    };
    let batch = || {
        lease_jobs::table
            .claim_batch(10, minute())
            .by(&claim)
            .filter(lease_jobs::id.eq(&id))
            .returning(lease_jobs::id)
    };
    let second = Duration::from_secs(1);

    let (row_wait, batch_wait, sent_inside) = waiting
        .transaction(|conn| {
            let before = sent(&statements);
            let row = row().waiting(second).run::<String>(conn).map(|_| ());
            let batch = batch().waiting(second).run::<String>(conn).map(|_| ());
            diesel::QueryResult::Ok((row, batch, sent(&statements) - before))
        })
        .unwrap();
    assert!(
        matches!(row_wait, Err(Error::WaitInTransaction)),
        "{row_wait:?}"
    );
    assert!(
        matches!(batch_wait, Err(Error::WaitInTransaction)),
        "{batch_wait:?}"
    );
    assert_eq!(sent_inside, 0, "nothing sent inside the transaction");

    let before = sent(&statements);
    let zero = row().waiting(Duration::ZERO).run::<String>(&mut waiting);
    assert!(matches!(zero, Err(Error::InvalidWait(_))), "{zero:?}");
    let busy = batch()
        .waiting(second)
        .rechecking_every(Duration::from_micros(999))
        .run::<String>(&mut waiting);
    assert!(matches!(busy, Err(Error::InvalidWait(_))), "{busy:?}");
    let forever = row().waiting(Duration::MAX).run::<String>(&mut waiting);
    assert!(matches!(forever, Err(Error::InvalidWait(_))), "{forever:?}");
    assert_eq!(sent(&statements), before, "nothing sent");

    let job = job(&mut waiting, &id);
    assert_eq!(
        (job.worker, job.status.as_str()),
        (None, "queued"),
        "nothing written"
    );
}
