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
