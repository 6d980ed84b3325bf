// MySQL/MariaDB only, included by tests/lease.rs beside the shared scenarios.
use crate::common::mysql::questions;

#[test]
fn releasing_one_row_is_one_statement_and_its_matched_count_says_whether_it_was_held() {
    let mut conn = connection();
    let (mine, rival) = (queued_job(&mut conn), queued_job(&mut conn));
    let holder = Claim::new("worker-1").unwrap();
    claim(&mut conn, &mine, &holder, minute()).expect("claim");
    claim(
        &mut conn,
        &rival,
        &Claim::new("worker-2").unwrap(),
        minute(),
    )
    .expect("claim");
    // Once, so that what is counted below is the prepared statement's execution.
    assert!(lease_jobs::table
        .held_rows(&holder, vec![rival.clone()])
        .release()
        .run(&mut *conn)
        .unwrap()
        .is_empty());

    let before = questions(&mut conn);
    let released = lease_jobs::table
        .held_rows(&holder, vec![mine.clone()])
        .release()
        .run(&mut *conn)
        .unwrap();
    assert_eq!(
        questions(&mut conn) - before - 1,
        1,
        "one UPDATE, no transaction around it"
    );
    assert_eq!(released, std::slice::from_ref(&mine));
    assert_eq!(job(&mut conn, &mine).lease_token, None);

    let not_held = lease_jobs::table
        .held_rows(&holder, vec![rival.clone()])
        .release()
        .run(&mut *conn)
        .unwrap();
    assert!(not_held.is_empty(), "another claim's row is not released");
    assert!(job(&mut conn, &rival).lease_token.is_some());
}

/// The COMMIT of the library's short transactions (a batch claim's) is a prepared statement, so
/// that an error there (a Galera certification failure, 1213) arrives with its number, whatever
/// the server's language. It costs fewer round trips than Diesel's COMMIT, whose plain text is
/// sent between two switches of the multi-statement option (`COM_SET_OPTION`), each a round trip
/// and a question of its own.
#[test]
fn a_batch_claims_commit_is_prepared_and_costs_one_round_trip() {
    use crate::common::mysql::server_count;
    let mut conn = connection();
    let ids = queued_jobs(&mut conn, 2, "queued");
    let batch = |conn: &mut backend::Conn| {
        lease_jobs::table
            .claim_batch(1, minute())
            .by(&Claim::new("worker").unwrap())
            .filter(lease_jobs::id.eq_any(&ids))
            .returning(lease_jobs::id)
            .run::<String>(conn)
            .unwrap()
    };
    let _ = batch(&mut conn); // once, so that its statements are prepared before they are counted
    let executed = |conn: &mut backend::Conn| {
        server_count(conn, "SHOW SESSION STATUS LIKE 'Com_stmt_execute'")
    };
    let (asked, prepared) = (questions(&mut conn), executed(&mut conn));
    assert_eq!(batch(&mut conn).len(), 1);
    let prepared = executed(&mut conn) - prepared;
    let statements = questions(&mut conn) - asked;
    // As counted by the server, the readings included; with Diesel's plain-text COMMIT, 16 and 5.
    assert_eq!(
        (statements, prepared),
        (14, 6),
        "the COMMIT one prepared execution, and no switch of the multi-statement option around it"
    );
}
