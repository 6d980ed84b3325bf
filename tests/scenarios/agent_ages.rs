// The agent locks by their age, included once per backend by tests/agent.rs (and
// tests/pooler.rs) after scenarios/agent.rs, whose helpers it uses: a lock older than the lease
// frees itself, a click blocks turns for its hold alone unless it is kept, a turn's lock is fresh
// while it is young, and a lock exactly one lease old gets one answer for both its rows.

#[test]
fn a_lock_older_than_the_lease_frees_itself() {
    let mut conn = connection();
    let (user, lost, next) = (new_user(), turn(), turn());
    let chat = new_chat(&mut conn, &user);
    locks("node-down")
        .acquire(&mut *conn, &chat, &user, &lost)
        .unwrap();
    age_chat(&mut conn, &chat, LEASE - Duration::from_secs(1));
    age_user(&mut conn, &user, LEASE - Duration::from_secs(1));
    let (refusal, holder) = refused_by(locks("node-b").acquire(&mut *conn, &chat, &user, &next));
    assert_eq!(
        (refusal, holder.owner.as_str(), holder.reference.as_str()),
        ("ConversationBusy", "node-down", lost.as_str()),
        "not yet: a second before the lease runs out"
    );

    age_chat(&mut conn, &chat, past_the_lease());
    age_user(&mut conn, &user, past_the_lease());
    locks("node-b")
        .acquire(&mut *conn, &chat, &user, &next)
        .unwrap();

    assert!(
        !locks("node-down")
            .held(&mut *conn, &chat, &user, &lost)
            .unwrap(),
        "the lost turn stops at its next round"
    );
    assert!(locks("node-b")
        .held(&mut *conn, &chat, &user, &next)
        .unwrap());
}

#[test]
fn a_click_blocks_turns_for_its_hold_only() {
    let mut conn = connection();
    let node = locks("node-a");
    let user = new_user();
    let chat = new_chat(&mut conn, &user);
    node.acquire_user(&mut *conn, &user, &ClickRef::new(), hold())
        .unwrap();

    let (_, holder) = refused_by(node.acquire(&mut *conn, &chat, &user, &turn()));
    assert!(
        holder.frees_in <= HOLD,
        "a click frees the user within its hold: {holder}"
    );

    // The hold has passed (the row is as old as lease - hold + hold + 1 s).
    age_user(&mut conn, &user, past_the_lease());
    node.acquire(&mut *conn, &chat, &user, &turn()).unwrap();
}

#[test]
fn a_click_kept_past_its_hold_keeps_blocking_turns() {
    let mut conn = connection();
    let node = locks("node-a");
    let user = new_user();
    let chat = new_chat(&mut conn, &user);
    let click = ClickRef::new();
    node.acquire_user(&mut *conn, &user, &click, hold())
        .unwrap();
    age_user(&mut conn, &user, LEASE - Duration::from_secs(1)); // one second of the hold left

    assert!(node.keep_user(&mut *conn, &user, &click, hold()).unwrap());
    assert!(
        !node
            .keep_user(&mut *conn, &user, &ClickRef::new(), hold())
            .unwrap(),
        "only the holder keeps"
    );

    let (refusal, holder) = refused_by(node.acquire(&mut *conn, &chat, &user, &turn()));
    assert_eq!(refusal, "ClickInFlight");
    assert!(
        holder.frees_in > HOLD - Duration::from_secs(5),
        "kept: a full hold again: {holder}"
    );
    age_user(&mut conn, &user, past_the_lease());
    assert!(!node
        .keep_user(&mut *conn, &user, &ClickRef::new(), hold())
        .unwrap());
    node.acquire(&mut *conn, &chat, &user, &turn()).unwrap();
    assert!(
        !node.keep_user(&mut *conn, &user, &click, hold()).unwrap(),
        "a click taken over keeps nothing"
    );
}

#[test]
fn fresh_is_the_turns_own_young_lock() {
    let mut conn = connection();
    let (node, user, mine) = (locks("node-a"), new_user(), turn());
    let chat = new_chat(&mut conn, &user);
    assert!(
        !node.fresh(&mut *conn, &chat, &mine).unwrap(),
        "not taken yet"
    );
    node.acquire(&mut *conn, &chat, &user, &mine).unwrap();

    assert!(node.fresh(&mut *conn, &chat, &mine).unwrap());
    assert!(
        locks("node-b").fresh(&mut *conn, &chat, &mine).unwrap(),
        "fresh wherever it is asked"
    );
    assert!(
        !node.fresh(&mut *conn, &chat, &turn()).unwrap(),
        "another turn's lock is not this turn's"
    );
    age_chat(&mut conn, &chat, past_the_lease());
    assert!(
        !node.fresh(&mut *conn, &chat, &mine).unwrap(),
        "older than the lease"
    );
}

#[test]
fn a_lock_exactly_one_lease_old_is_refused_or_taken_over_never_contended() {
    let mut conn = connection();
    for _ in 0..30 {
        let user = new_user();
        let chat = new_chat(&mut conn, &user);
        let (first, second) = (turn(), turn());
        locks("node-a")
            .acquire(&mut *conn, &chat, &user, &first)
            .unwrap();
        // Both locks exactly one lease old: on SQLite's millisecond clock the claim and the read of
        // the holder fall in the same millisecond, and must agree on whether it is outlived.
        age_chat(&mut conn, &chat, LEASE);
        age_user(&mut conn, &user, LEASE);

        let result = locks("node-b").acquire(&mut *conn, &chat, &user, &second);

        // Whichever the answer, both locks agree with it: never one lock taken over and the
        // other refused.
        let holder =
            |node: &str, turn: &TurnRef| (Some(node.to_owned()), Some(turn.as_str().to_owned()));
        let (expected, said) = match &result {
            Ok(()) => (holder("node-b", &second), "taken over"),
            Err(Error::ConversationBusy(_) | Error::TurnInFlight(_)) => {
                (holder("node-a", &first), "refused")
            }
            other => panic!("the boundary is one answer, not a retry storm: {other:?}"),
        };
        assert_eq!(
            chat_lock(&mut conn, &chat),
            expected,
            "{said}: the chat's lock"
        );
        assert_eq!(
            user_lock(&mut conn, &user),
            Some(expected),
            "{said}: the user's lock"
        );
    }
}
