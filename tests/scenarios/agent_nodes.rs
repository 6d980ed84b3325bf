// One turn's or click's reference on two nodes (a request retried onto another node), included
// by tests/agent.rs after scenarios/agent.rs, whose helpers it uses: a lock is the reference's
// on the node that took it, and the other node can neither take, check, keep nor release it.

/// Asserts that `result` is the `expected` refusal, naming `node` and `reference` as the holder.
fn refused_naming(result: Result<(), Error>, expected: &str, node: &str, reference: &str) {
    let (refusal, holder) = refused_by(result);
    assert_eq!(
        (refusal, holder.owner.as_str(), holder.reference.as_str()),
        (expected, node, reference),
        "{holder}"
    );
}

#[test]
fn the_same_turn_from_a_second_node_is_refused_and_cannot_touch_the_first_nodes_locks() {
    let mut conn = connection();
    let (node_a, node_b, user, mine) = (locks("node-a"), locks("node-b"), new_user(), turn());
    let chat = new_chat(&mut conn, &user);
    node_a.acquire(&mut *conn, &chat, &user, &mine).unwrap();
    let held = (Some("node-a".to_owned()), Some(mine.as_str().to_owned()));

    let retried_elsewhere = node_b.acquire(&mut *conn, &chat, &user, &mine);

    refused_naming(
        retried_elsewhere,
        "ConversationBusy",
        "node-a",
        mine.as_str(),
    );
    assert!(
        !node_b.held(&mut *conn, &chat, &user, &mine).unwrap(),
        "node-b does not hold node-a's locks"
    );
    assert!(
        !node_b.release(&mut *conn, &chat, &user, &mine).unwrap(),
        "node-b releases nothing of node-a's"
    );
    assert_eq!(chat_lock(&mut conn, &chat), held);
    assert_eq!(user_lock(&mut conn, &user), Some(held.clone()));
    assert!(node_a.held(&mut *conn, &chat, &user, &mine).unwrap());

    age_chat(&mut conn, &chat, LEASE / 2);
    age_user(&mut conn, &user, LEASE / 2);
    node_a.acquire(&mut *conn, &chat, &user, &mine).unwrap();
    let (_, holder) = refused_by(node_b.acquire(&mut *conn, &chat, &user, &mine));
    assert!(
        holder.age < LEASE / 4,
        "node-a's retry restarted the lease: {holder}"
    );
    assert!(node_a.release(&mut *conn, &chat, &user, &mine).unwrap());
    assert_eq!(chat_lock(&mut conn, &chat), (None, None));
    assert_eq!(user_lock(&mut conn, &user), Some((None, None)));
}

#[test]
fn a_retry_on_the_node_holding_the_chat_is_refused_the_users_lock_another_node_holds() {
    let mut conn = connection();
    let (user, mine) = (new_user(), turn());
    let chat = new_chat(&mut conn, &user);
    locks("node-a")
        .acquire(&mut *conn, &chat, &user, &mine)
        .unwrap();
    // A split lock, as an operator's edit could leave it: the chat is node-b's turn, the user
    // node-a's turn, by the same reference. node-b's retry renews its chat, not node-a's user.
    let node_b_turn = diesel_lease::Claim::with_token("node-b", mine.as_str()).unwrap();
    diesel::update(conversations::table.find(&chat))
        .set(conversations::table.taken(&node_b_turn))
        .execute(&mut *conn)
        .unwrap();

    let retried = locks("node-b").acquire(&mut *conn, &chat, &user, &mine);

    refused_naming(retried, "TurnInFlight", "node-a", mine.as_str());
    assert_eq!(
        user_lock(&mut conn, &user),
        Some((Some("node-a".into()), Some(mine.as_str().into())))
    );
}

#[test]
fn the_same_click_from_a_second_node_is_refused_and_cannot_touch_the_first_nodes_lock() {
    let mut conn = connection();
    let (node_a, node_b, user, click) = (
        locks("node-a"),
        locks("node-b"),
        new_user(),
        ClickRef::new(),
    );
    node_a
        .acquire_user(&mut *conn, &user, &click, hold())
        .unwrap();
    let held = Some((Some("node-a".to_owned()), Some(click.as_str().to_owned())));
    let same_click = ClickRef::parse(click.as_str()).unwrap();

    let retried_elsewhere = node_b.acquire_user(&mut *conn, &user, &same_click, hold());

    refused_naming(retried_elsewhere, "ClickInFlight", "node-a", click.as_str());
    assert!(
        !node_b
            .keep_user(&mut *conn, &user, &same_click, hold())
            .unwrap(),
        "node-b keeps nothing of node-a's"
    );
    assert!(
        !node_b.release_user(&mut *conn, &user, &same_click).unwrap(),
        "node-b releases nothing of node-a's"
    );
    assert_eq!(user_lock(&mut conn, &user), held);

    assert!(node_a.keep_user(&mut *conn, &user, &click, hold()).unwrap());
    node_a
        .acquire_user(&mut *conn, &user, &click, hold())
        .unwrap();
    assert_eq!(user_lock(&mut conn, &user), held, "node-a's retry");
    assert!(node_a.release_user(&mut *conn, &user, &click).unwrap());
    assert_eq!(user_lock(&mut conn, &user), Some((None, None)));
}

#[test]
fn a_turn_taken_over_by_a_second_node_with_the_same_reference_is_no_longer_the_firsts() {
    let mut conn = connection();
    let (node_a, node_b, user, mine) = (locks("node-a"), locks("node-b"), new_user(), turn());
    let chat = new_chat(&mut conn, &user);
    node_a.acquire(&mut *conn, &chat, &user, &mine).unwrap();
    age_chat(&mut conn, &chat, past_the_lease());
    age_user(&mut conn, &user, past_the_lease());

    node_b.acquire(&mut *conn, &chat, &user, &mine).unwrap();

    assert!(
        !node_a.held(&mut *conn, &chat, &user, &mine).unwrap(),
        "node-a's turn stops at its next round"
    );
    assert!(!node_a.release(&mut *conn, &chat, &user, &mine).unwrap());
    refused_naming(
        node_a.acquire(&mut *conn, &chat, &user, &mine),
        "ConversationBusy",
        "node-b",
        mine.as_str(),
    );
    assert!(node_b.held(&mut *conn, &chat, &user, &mine).unwrap());
}

#[test]
fn another_node_sweeps_a_turn_lost_with_its_node() {
    let mut conn = connection();
    let (user, lost) = (new_user(), turn());
    let chat = new_chat(&mut conn, &user);
    locks("node-down")
        .acquire(&mut *conn, &chat, &user, &lost)
        .unwrap();
    age_chat(&mut conn, &chat, past_the_lease());

    assert!(locks("node-a")
        .release_stale(&mut *conn, &chat, &user, &lost)
        .unwrap());

    assert_eq!(chat_lock(&mut conn, &chat), (None, None));
    assert_eq!(
        user_lock(&mut conn, &user),
        Some((None, None)),
        "the user's lock went too"
    );
}

/// Node names differing only in case are two nodes, whatever the collation of the lock columns'
/// owner (`busy_owner` ignores case on MySQL/MariaDB, as the migrations make it there): one
/// neither checks, keeps nor releases the other's locks.
#[test]
fn a_node_whose_name_differs_only_in_case_cannot_touch_the_other_nodes_locks() {
    let mut conn = connection();
    let (upper, lower, user, mine) = (locks("Node-A"), locks("node-a"), new_user(), turn());
    let chat = new_chat(&mut conn, &user);
    upper.acquire(&mut *conn, &chat, &user, &mine).unwrap();
    let held = (Some("Node-A".to_owned()), Some(mine.as_str().to_owned()));

    assert!(
        !lower.held(&mut *conn, &chat, &user, &mine).unwrap(),
        "node-a does not hold Node-A's locks"
    );
    assert!(
        !lower.release(&mut *conn, &chat, &user, &mine).unwrap(),
        "node-a releases nothing of Node-A's"
    );
    refused_naming(
        lower.acquire(&mut *conn, &chat, &user, &mine),
        "ConversationBusy",
        "Node-A",
        mine.as_str(),
    );
    assert_eq!(chat_lock(&mut conn, &chat), held);
    assert_eq!(user_lock(&mut conn, &user), Some(held));
    assert!(upper.release(&mut *conn, &chat, &user, &mine).unwrap());

    let (click_user, click) = (new_user(), ClickRef::new());
    upper
        .acquire_user(&mut *conn, &click_user, &click, hold())
        .unwrap();
    assert!(
        !lower
            .keep_user(&mut *conn, &click_user, &click, hold())
            .unwrap(),
        "node-a keeps nothing of Node-A's"
    );
    assert!(
        !lower.release_user(&mut *conn, &click_user, &click).unwrap(),
        "node-a releases nothing of Node-A's"
    );
    assert_eq!(
        user_lock(&mut conn, &click_user),
        Some((Some("Node-A".to_owned()), Some(click.as_str().to_owned())))
    );
}
