// Batch claims, included once per backend by tests/lease.rs (and tests/pooler.rs) after
// scenarios/lease.rs, whose helpers it uses: at most the batch's size, in the caller's order;
// renewed and finished in one guarded statement each; sizes out of range refused; sixteen
// workers draining a queue.

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
