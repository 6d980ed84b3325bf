// PostgreSQL only, included by tests/agent.rs beside the shared scenarios.
use crate::common::postgres::waits_for_a_lock;

#[test]
fn a_connection_killed_mid_acquire_leaves_no_chat_lock_without_its_user_lock() {
    let pool = backend::pool();
    let user = new_user();
    let chat = new_chat(&mut pool.get().unwrap(), &user);
    diesel::insert_into(user_settings::table)
        .values(user_settings::user_id.eq(&user))
        .execute(&mut *pool.get().unwrap())
        .unwrap();
    let (pid_tx, pid_rx) = std::sync::mpsc::channel();

    let mut blocker = backend::connect();
    let victim_result = blocker
        .transaction::<_, diesel::result::Error, _>(|blocker| {
            // Hold the user's row so that the acquire stops inside its transaction, chat lock taken.
            user_settings::table
                .find(&user)
                .select(user_settings::user_id)
                .for_update()
                .first::<String>(blocker)?;
            let victim = std::thread::spawn({
                let (chat, user) = (chat.clone(), user.clone());
                move || {
                    let mut conn = backend::connect();
                    let pid: i32 = diesel::select(diesel::dsl::sql::<diesel::sql_types::Integer>(
                        "pg_backend_pid()",
                    ))
                    .get_result(&mut conn)
                    .unwrap();
                    pid_tx.send(pid).unwrap();
                    locks("node-victim").acquire(&mut conn, &chat, &user, &turn())
                }
            });
            let pid = pid_rx.recv().unwrap();
            let mut killer = backend::connect();
            waits_for_a_lock(&mut killer, pid);
            // The victim waits with the chat's row locked: its chat lock written, uncommitted.
            let chat_row = conversations::table
                .find(&chat)
                .select(conversations::id)
                .for_update()
                .no_wait()
                .first::<String>(&mut killer);
            assert!(
                chat_row.is_err(),
                "the victim holds the chat's row: {chat_row:?}"
            );
            diesel::sql_query(format!("SELECT pg_terminate_backend({pid})"))
                .execute(&mut killer)?;
            Ok(victim.join().unwrap())
        })
        .unwrap();

    assert!(
        matches!(victim_result, Err(Error::Lease(LeaseError::Database(_)))),
        "{victim_result:?}"
    );
    let mut conn = pool.get().unwrap();
    assert_eq!(
        chat_lock(&mut conn, &chat),
        (None, None),
        "the chat lock died with its transaction"
    );
    assert_eq!(user_lock(&mut conn, &user), Some((None, None)));
    locks("node-b")
        .acquire(&mut *conn, &chat, &user, &turn())
        .unwrap();
}
