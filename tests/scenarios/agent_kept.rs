// Turns kept by a keeper, included once per backend by tests/agent.rs (and tests/pooler.rs) after
// scenarios/agent.rs, whose helpers it uses: both locks renewed past the lease, a lost lock heard
// of at once, and a keep refused for a lock lost before it or by a keeper of another lease.

#[test]
fn a_kept_turn_outlives_its_lease_and_hears_at_once_when_it_loses_a_lock() {
    use diesel_lease::{Keeper, KeeperSettings};
    let mut conn = connection();
    let user = new_user();
    let chat = new_chat(&mut conn, &user);
    let node = locks("node-a");
    let turn = turn();
    node.acquire(&mut *conn, &chat, &user, &turn).unwrap();
    let keeper = Keeper::start(
        backend::pool_of(2),
        KeeperSettings::new(node.lease()).every(Duration::from_millis(20)),
    )
    .unwrap();
    let kept = node.keep(&keeper, &chat, &user, &turn).unwrap();

    // The turn runs on past what would have been its LEASE: both locks are renewed.
    age_chat(&mut conn, &chat, LEASE - Duration::from_secs(1));
    age_user(&mut conn, &user, LEASE - Duration::from_secs(1));
    after_rounds(&keeper, 2);
    let young = Lease::from_secs(10).unwrap();
    let chat_young: i64 = conversations::table
        .find(&chat)
        .filter(conversations::table.fresh(young))
        .count()
        .get_result(&mut *conn)
        .unwrap();
    let user_young: i64 = user_settings::table
        .find(&user)
        .filter(user_settings::table.fresh(young))
        .count()
        .get_result(&mut *conn)
        .unwrap();
    assert_eq!(
        (chat_young, user_young),
        (1, 1),
        "both locks renewed by the database's clock"
    );
    let refused = locks("node-b").acquire(&mut *conn, &chat, &user, &self::turn());
    assert!(
        matches!(refused, Err(Error::ConversationBusy(_))),
        "{refused:?}"
    );
    assert!(kept.check().is_ok());

    // An operator frees the conversation: the turn hears it within a round or two.
    diesel::update(conversations::table.find(&chat))
        .set(conversations::table.released())
        .execute(&mut *conn)
        .unwrap();
    after_rounds(&keeper, 2);
    assert!(!kept.is_held());
    assert!(matches!(kept.check(), Err(Error::TurnLost(lost)) if lost.rows == [chat.clone()]));
    assert!(!kept.release(&mut *conn).unwrap(), "it no longer held both");
    assert_eq!(
        user_lock(&mut conn, &user),
        Some((None, None)),
        "the user's lock, still its own, is released"
    );
}

#[test]
fn a_keep_refused_for_a_lost_lock_leaves_the_other_lock_to_the_turn() {
    use diesel_lease::{Keeper, KeeperSettings};
    let mut conn = connection();
    let user = new_user();
    let chat = new_chat(&mut conn, &user);
    let node = locks("node-a");
    let turn = turn();
    node.acquire(&mut *conn, &chat, &user, &turn).unwrap();
    // An operator frees the user's lock before the turn is kept.
    diesel::update(user_settings::table.find(&user))
        .set(user_settings::table.released())
        .execute(&mut *conn)
        .unwrap();
    let keeper = Keeper::start(
        backend::pool_of(2),
        KeeperSettings::new(node.lease()).every(Duration::from_millis(20)),
    )
    .unwrap();

    let kept = node.keep(&keeper, &chat, &user, &turn);

    assert!(matches!(kept, Err(Error::TurnLost(_))), "{kept:?}");
    assert_eq!(
        chat_lock(&mut conn, &chat),
        (Some("node-a".to_owned()), Some(turn.as_str().to_owned())),
        "the refused keep released nothing: the chat's lock is still the turn's"
    );
    // Nor does it keep it: dated back, it stays so while the keeper makes rounds.
    age_chat(&mut conn, &chat, past_the_lease());
    after_rounds(&keeper, 2);
    assert!(
        locks("node-b")
            .acquire(&mut *conn, &chat, &user, &self::turn())
            .is_ok(),
        "the turn's lock ran out"
    );
}

#[test]
fn a_turn_is_kept_only_by_a_keeper_of_its_lease() {
    use diesel_lease::{Keeper, KeeperSettings};
    let mut conn = connection();
    let user = new_user();
    let chat = new_chat(&mut conn, &user);
    let keeper = Keeper::start(
        backend::pool_of(1),
        KeeperSettings::new(Lease::from_secs(30).unwrap()),
    )
    .unwrap();

    let kept = locks("node-a").keep(&keeper, &chat, &user, &turn());

    assert!(
        matches!(kept, Err(Error::Lease(LeaseError::InvalidSettings(_)))),
        "{kept:?}"
    );
}
