// What a keeper keeps, by the size of the claim, included once per backend by tests/keeper.rs
// (and tests/pooler.rs) after scenarios/keeper.rs, whose helpers it uses: a thousand rows
// renewed by one statement a round, batches of the largest size, an empty batch, and a row won
// or a batch as a claim gave it back.

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
