// MySQL/MariaDB only, included by tests/agent.rs beside the shared scenarios.

use crate::common::mysql::questions;

#[test]
fn a_turn_takes_both_free_locks_in_one_statement_and_releases_them_in_another() {
    let mut conn = connection();
    let locks = locks("node-a");
    // A turn elsewhere first: it prepares the statements, so that what follows is their execution.
    let (warm_user, warm_turn) = (new_user(), turn());
    let warm_chat = new_chat(&mut conn, &warm_user);
    locks
        .acquire(&mut *conn, &warm_chat, &warm_user, &warm_turn)
        .unwrap();
    locks
        .release(&mut *conn, &warm_chat, &warm_user, &warm_turn)
        .unwrap();
    let user = new_user();
    let chat = new_chat(&mut conn, &user);
    diesel::insert_into(user_settings::table)
        .values(user_settings::user_id.eq(&user))
        .execute(&mut *conn)
        .unwrap();

    let before = questions(&mut conn);
    let turn = turn();
    locks.acquire(&mut *conn, &chat, &user, &turn).unwrap();
    let statements = questions(&mut conn) - before - 1;

    assert_eq!(
        statements, 1,
        "one UPDATE: no BEGIN, no COMMIT, no second UPDATE"
    );
    let reference = Some(turn.as_str().to_owned());
    assert_eq!(
        chat_lock(&mut conn, &chat),
        (Some("node-a".to_owned()), reference.clone())
    );
    assert_eq!(
        user_lock(&mut conn, &user),
        Some((Some("node-a".to_owned()), reference))
    );

    let before = questions(&mut conn);
    assert!(
        locks.release(&mut *conn, &chat, &user, &turn).unwrap(),
        "it held both"
    );
    let statements = questions(&mut conn) - before - 1;
    assert_eq!(statements, 1, "one UPDATE releases both");
    assert_eq!(chat_lock(&mut conn, &chat), (None, None));
    assert_eq!(user_lock(&mut conn, &user), Some((None, None)));
}

#[derive(QueryableByName)]
struct ConnectionId {
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    id: i64,
}

#[test]
fn a_one_statement_acquire_whose_answer_is_lost_is_outcome_unknown_and_a_retry_holds_both_locks_whether_it_committed_or_not(
) {
    let mut setup = connection();
    let user = new_user();
    let chat = new_chat(&mut setup, &user);
    diesel::insert_into(user_settings::table)
        .values(user_settings::user_id.eq(&user))
        .execute(&mut *setup)
        .unwrap();
    let mut victim = backend::connect();
    let id: ConnectionId = diesel::sql_query("SELECT CONNECTION_ID() AS id")
        .get_result(&mut victim)
        .unwrap();
    diesel::sql_query(format!("KILL CONNECTION {}", id.id))
        .execute(&mut *setup)
        .unwrap();

    let turn = turn();
    let lost = locks("node-a").acquire(&mut victim, &chat, &user, &turn);
    assert!(
        matches!(lost, Err(Error::OutcomeUnknown(_))),
        "the statement may have committed: {lost:?}"
    );
    // The session was killed before the statement reached the server: it did not commit.
    assert_eq!(chat_lock(&mut setup, &chat), (None, None));
    locks("node-a")
        .acquire(&mut *setup, &chat, &user, &turn)
        .expect("a retry of the same turn is safe when the first did not commit");
    // As if the lost statement had committed: the same turn's retry holds both locks still.
    locks("node-a")
        .acquire(&mut backend::connect(), &chat, &user, &turn)
        .expect("a retry of the same turn is safe when the first committed");
    let reference = Some(turn.as_str().to_owned());
    assert_eq!(
        chat_lock(&mut setup, &chat),
        (Some("node-a".to_owned()), reference.clone())
    );
    assert_eq!(
        user_lock(&mut setup, &user),
        Some((Some("node-a".to_owned()), reference))
    );
}
