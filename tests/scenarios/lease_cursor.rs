// Batch claims from a cursor, included once per backend by tests/lease.rs after
// scenarios/lease.rs, whose helpers it uses: forward in key order, wrapping around to the head
// in the call that reaches the end, a row released behind the cursor claimed within one pass,
// claimers sharing a cursor on connections of their own winning disjoint rows, and a cursor of
// one table refused for another before anything is sent.

/// `count` queued jobs whose ids sort in the order made, on every server's collation: one
/// prefix, then one digit or two.
fn jobs_in_key_order(conn: &mut backend::Conn, count: usize) -> Vec<String> {
    let prefix = crate::common::unique_id("cursor");
    let ids: Vec<String> = (0..count).map(|n| format!("{prefix}-{n:02}")).collect();
    for id in &ids {
        diesel::insert_into(lease_jobs::table)
            .values((lease_jobs::id.eq(id), lease_jobs::status.eq("queued")))
            .execute(conn)
            .expect("insert a job");
    }
    ids
}

/// The next `size` of jobs `ids` from `cursor`, set running; their keys, sorted.
fn claim_from(
    conn: &mut backend::Conn,
    ids: &[String],
    size: usize,
    cursor: &diesel_lease::ClaimCursor<String>,
) -> Vec<String> {
    let batch = lease_jobs::table
        .claim_batch(size, minute())
        .by(&Claim::new("cursor-worker").unwrap())
        .filter(lease_jobs::id.eq_any(ids))
        .filter(lease_jobs::status.eq("queued"))
        .from_cursor(cursor)
        .set(lease_jobs::status.eq("running"))
        .returning(lease_jobs::id)
        .run::<String>(conn)
        .unwrap();
    let mut keys = batch.into_parts().0;
    keys.sort();
    keys
}

/// Puts job `id` back in the queue, as a finish that retries it would.
fn requeue(conn: &mut backend::Conn, id: &str) {
    diesel::update(lease_jobs::table.find(id))
        .set((
            lease_jobs::status.eq("queued"),
            lease_jobs::table.released(),
        ))
        .execute(conn)
        .expect("requeue a job");
}

#[test]
fn claims_from_a_cursor_go_forward_in_key_order_and_wrap_around_in_the_call_that_ends_a_pass() {
    let mut conn = connection();
    let ids = jobs_in_key_order(&mut conn, 5);
    let cursor = diesel_lease::ClaimCursor::new();

    assert_eq!(claim_from(&mut conn, &ids, 2, &cursor), ids[0..2]);
    assert_eq!(cursor.last().as_ref(), Some(&ids[1]));
    // Back in the queue, behind the cursor: the next claim goes on past it all the same.
    requeue(&mut conn, &ids[0]);
    requeue(&mut conn, &ids[1]);
    assert_eq!(
        claim_from(&mut conn, &ids, 2, &cursor),
        ids[2..4],
        "from where the last claim ended, not from the head"
    );
    assert_eq!(
        claim_from(&mut conn, &ids, 2, &cursor),
        [ids[0].clone(), ids[4].clone()],
        "the last row of the pass, then the rest from the head, in one call"
    );
    assert_eq!(cursor.last().as_ref(), Some(&ids[0]), "wrapped around");
    assert_eq!(
        claim_from(&mut conn, &ids, 2, &cursor),
        [ids[1].clone()],
        "fewer than asked from the head too: the pass is over"
    );
    assert_eq!(cursor.last(), None, "the next claim reads from the head");
}

#[test]
fn a_row_released_behind_the_cursor_is_claimed_within_one_pass() {
    let mut conn = connection();
    let ids = jobs_in_key_order(&mut conn, 9);
    let cursor = diesel_lease::ClaimCursor::new();
    let size = 2;
    assert_eq!(claim_from(&mut conn, &ids, size, &cursor), ids[0..2]);
    requeue(&mut conn, &ids[0]);

    // The bound the docs state: ceil(n / size) + 1 claims, n the claimable rows (8 here).
    let claimable = ids.len() - 1;
    let bound = claimable.div_ceil(size) + 1;
    let mut claims = 0;
    while !claim_from(&mut conn, &ids, size, &cursor).contains(&ids[0]) {
        claims += 1;
        assert!(
            claims < bound,
            "{} not claimed within {bound} claims of one pass",
            ids[0]
        );
    }
}

#[test]
fn claimers_sharing_a_cursor_on_connections_of_their_own_win_disjoint_rows() {
    let mut conn = connection();
    let ids = jobs_in_key_order(&mut conn, 40);
    drop(conn);
    let cursor = diesel_lease::ClaimCursor::new();
    let won = diesel_lease::testkit::race(&backend::pool_of(4), 4, |_, conn| {
        let mut mine = Vec::new();
        let mut empty = 0;
        // A claim can come back empty while the others' claims hold the rows it would take;
        // a few in a row mean the queue is drained. Bounded, so that a claim that never comes
        // back empty fails the test rather than hanging it.
        let mut claims = 0;
        while empty < 3 {
            claims += 1;
            assert!(claims < 200, "40 rows in batches of 3 never drained");
            let keys = claim_from(conn, &ids, 3, &cursor);
            if keys.is_empty() {
                empty += 1;
            } else {
                empty = 0;
                mine.extend(keys);
            }
        }
        mine
    });
    let mut all: Vec<String> = won.into_iter().flatten().collect();
    let claimed = all.len();
    all.sort();
    all.dedup();
    assert_eq!(all.len(), claimed, "no row was won twice");
    assert_eq!(all, ids, "every row was won");
}

#[test]
fn a_cursor_of_one_table_is_refused_for_another_before_anything_is_sent() {
    use crate::common::jobs::indexed_jobs;

    let mut conn = connection();
    let ids = jobs_in_key_order(&mut conn, 2);
    let cursor = diesel_lease::ClaimCursor::new();
    assert_eq!(claim_from(&mut conn, &ids, 1, &cursor), ids[0..1]);

    let other = indexed_jobs::table
        .claim_batch(1, minute())
        .by(&Claim::new("cursor-worker").unwrap())
        .from_cursor(&cursor)
        .returning(indexed_jobs::id)
        .run::<String>(&mut *conn);
    assert!(matches!(other, Err(Error::InvalidCursor(_))), "{other:?}");
    assert_eq!(
        cursor.last().as_ref(),
        Some(&ids[0]),
        "the cursor did not move"
    );
    assert_eq!(
        claim_from(&mut conn, &ids, 1, &cursor),
        ids[1..2],
        "still the first table's"
    );
}
