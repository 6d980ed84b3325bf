// Releases of the agent locks, included once per backend by tests/agent.rs (and
// tests/pooler.rs) after scenarios/agent.rs, whose helpers it uses: a turn's locks released by
// that turn alone, a lost turn's by release_stale once, a click's by its own reference.

#[test]
fn release_frees_both_locks_and_a_late_release_frees_nothing_of_a_newer_turn() {
    let mut conn = connection();
    let (node, user, old, new) = (locks("node-a"), new_user(), turn(), turn());
    let chat = new_chat(&mut conn, &user);
    node.acquire(&mut *conn, &chat, &user, &old).unwrap();
    assert!(node.release(&mut *conn, &chat, &user, &old).unwrap());
    assert_eq!(chat_lock(&mut conn, &chat), (None, None));
    assert_eq!(user_lock(&mut conn, &user), Some((None, None)));

    node.acquire(&mut *conn, &chat, &user, &old).unwrap();
    age_chat(&mut conn, &chat, past_the_lease());
    age_user(&mut conn, &user, past_the_lease());
    node.acquire(&mut *conn, &chat, &user, &new).unwrap();

    assert!(
        !node.release(&mut *conn, &chat, &user, &old).unwrap(),
        "the old turn holds nothing now"
    );
    assert!(
        node.held(&mut *conn, &chat, &user, &new).unwrap(),
        "the newer turn keeps both locks"
    );
}

#[test]
fn release_stale_frees_only_a_lost_turns_locks_and_says_so_once() {
    let mut conn = connection();
    let (node, user, lost) = (locks("node-a"), new_user(), turn());
    let chat = new_chat(&mut conn, &user);
    node.acquire(&mut *conn, &chat, &user, &lost).unwrap();

    assert!(
        !node.release_stale(&mut *conn, &chat, &user, &lost).unwrap(),
        "younger than the lease: the turn may still run"
    );
    assert!(node.held(&mut *conn, &chat, &user, &lost).unwrap());

    age_chat(&mut conn, &chat, past_the_lease());
    assert!(node.release_stale(&mut *conn, &chat, &user, &lost).unwrap());
    assert_eq!(chat_lock(&mut conn, &chat), (None, None));
    assert_eq!(
        user_lock(&mut conn, &user),
        Some((None, None)),
        "the user's lock went too"
    );
    assert!(
        !node.release_stale(&mut *conn, &chat, &user, &lost).unwrap(),
        "only once"
    );
}

#[test]
fn release_stale_leaves_a_user_lock_that_another_holds() {
    let mut conn = connection();
    let (node, user, lost) = (locks("node-a"), new_user(), turn());
    let (chat, other_chat) = (new_chat(&mut conn, &user), new_chat(&mut conn, &user));
    node.acquire(&mut *conn, &chat, &user, &lost).unwrap();
    age_chat(&mut conn, &chat, past_the_lease());
    age_user(&mut conn, &user, past_the_lease());
    let next = turn();
    node.acquire(&mut *conn, &other_chat, &user, &next).unwrap();

    assert!(node.release_stale(&mut *conn, &chat, &user, &lost).unwrap());

    assert!(
        node.held(&mut *conn, &other_chat, &user, &next).unwrap(),
        "the next turn keeps the user's lock"
    );
}

#[test]
fn release_user_frees_only_the_clicks_own_lock() {
    let mut conn = connection();
    let (node, user, click) = (locks("node-a"), new_user(), ClickRef::new());
    node.acquire_user(&mut *conn, &user, &click, hold())
        .unwrap();

    assert!(!node
        .release_user(&mut *conn, &user, &ClickRef::new())
        .unwrap());
    assert_eq!(
        user_lock(&mut conn, &user).unwrap().1.as_deref(),
        Some(click.as_str())
    );
    assert!(node.release_user(&mut *conn, &user, &click).unwrap());
    assert_eq!(user_lock(&mut conn, &user), Some((None, None)));
}
