// The agent locks' scenarios, included once per backend by tests/agent.rs: `backend` names the
// backend's support module. Time passes by ageing rows: their busy_since moved back.
use std::time::Duration;

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel_lease::{Age, ClaimLease, Error as LeaseError, Lease};
use diesel_lease_agent::schema::{conversations, user_settings};
use diesel_lease_agent::{AgentLocks, ClickRef, Error, Holder, HolderKind, TurnRef};

use crate::common::{after_rounds, race, unique_id};

type Pooled = diesel::r2d2::PooledConnection<diesel::r2d2::ConnectionManager<backend::Conn>>;

const LEASE: Duration = Duration::from_secs(120);
const HOLD: Duration = Duration::from_secs(10);

fn connection() -> Pooled {
    backend::pool().get().expect("a pooled connection")
}

fn locks(node: &str) -> AgentLocks {
    AgentLocks::new(node, Lease::new(LEASE).unwrap()).unwrap()
}

fn hold() -> Lease {
    Lease::new(HOLD).unwrap()
}

fn turn() -> TurnRef {
    TurnRef::new(&unique_id("turn")).unwrap()
}

fn new_user() -> String {
    unique_id("user")
}

fn new_chat(conn: &mut backend::Conn, user: &str) -> String {
    let id = unique_id("chat");
    diesel::insert_into(conversations::table)
        .values((
            conversations::id.eq(&id),
            conversations::user_id.eq(user),
            conversations::title.eq("a chat"),
        ))
        .execute(conn)
        .unwrap();
    id
}

/// `(owner, reference)` of the conversation's lock.
fn chat_lock(conn: &mut backend::Conn, chat: &str) -> (Option<String>, Option<String>) {
    conversations::table
        .find(chat)
        .select((conversations::busy_owner, conversations::busy_turn_ref))
        .first(conn)
        .unwrap()
}

/// `(owner, reference)` of the user's lock, or `None` when the user has no settings row.
fn user_lock(conn: &mut backend::Conn, user: &str) -> Option<(Option<String>, Option<String>)> {
    user_settings::table
        .find(user)
        .select((user_settings::busy_owner, user_settings::busy_turn_ref))
        .first(conn)
        .optional()
        .unwrap()
}

fn updated_at(conn: &mut backend::Conn, user: &str) -> DateTime<Utc> {
    user_settings::table
        .find(user)
        .select(user_settings::updated_at)
        .first(conn)
        .unwrap()
}

/// Dates the conversation's lock `age` back, as if taken `age` ago.
fn age_chat(conn: &mut backend::Conn, chat: &str, age: Duration) {
    diesel::update(conversations::table.find(chat))
        .set(conversations::table.renewed_ago(Age::new(age).unwrap()))
        .execute(conn)
        .unwrap();
}

/// Dates the user's lock `age` back, as if taken `age` ago.
fn age_user(conn: &mut backend::Conn, user: &str, age: Duration) {
    diesel::update(user_settings::table.find(user))
        .set(user_settings::table.renewed_ago(Age::new(age).unwrap()))
        .execute(conn)
        .unwrap();
}

fn past_the_lease() -> Duration {
    LEASE + Duration::from_secs(1)
}

fn refused_by(result: Result<(), Error>) -> (&'static str, Holder) {
    match result {
        Err(Error::ConversationBusy(holder)) => ("ConversationBusy", holder),
        Err(Error::TurnInFlight(holder)) => ("TurnInFlight", holder),
        Err(Error::ClickInFlight(holder)) => ("ClickInFlight", holder),
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn acquire_takes_both_locks_for_the_turn() {
    let mut conn = connection();
    let (user, node, turn) = (new_user(), locks("node-a"), turn());
    let chat = new_chat(&mut conn, &user);

    node.acquire(&mut *conn, &chat, &user, &turn).unwrap();

    let held = (Some("node-a".to_owned()), Some(turn.as_str().to_owned()));
    assert_eq!(chat_lock(&mut conn, &chat), held);
    assert_eq!(
        user_lock(&mut conn, &user),
        Some(held),
        "the missing settings row was created, locked"
    );
    assert!(node.held(&mut *conn, &chat, &user, &turn).unwrap());
    assert!(node.fresh(&mut *conn, &chat, &turn).unwrap());
}

#[test]
fn a_second_turn_in_the_same_chat_is_conversation_busy_and_learns_who_holds_it() {
    let mut conn = connection();
    let (user, first) = (new_user(), turn());
    let chat = new_chat(&mut conn, &user);
    locks("node-a")
        .acquire(&mut *conn, &chat, &user, &first)
        .unwrap();

    let (refusal, holder) = refused_by(locks("node-b").acquire(&mut *conn, &chat, &user, &turn()));

    assert_eq!(refusal, "ConversationBusy");
    assert_eq!(
        (
            holder.kind,
            holder.owner.as_str(),
            holder.reference.as_str()
        ),
        (HolderKind::Turn, "node-a", first.as_str())
    );
    assert!(holder.age < Duration::from_secs(30), "{holder}");
    assert!(
        holder.frees_in > LEASE - Duration::from_secs(30) && holder.frees_in <= LEASE,
        "{holder}"
    );
}

#[test]
fn a_turn_of_the_user_in_another_chat_is_turn_in_flight_and_takes_no_lock() {
    let mut conn = connection();
    let (user, first, second) = (new_user(), turn(), turn());
    let (chat, other_chat) = (new_chat(&mut conn, &user), new_chat(&mut conn, &user));
    locks("node-a")
        .acquire(&mut *conn, &chat, &user, &first)
        .unwrap();

    let (refusal, holder) =
        refused_by(locks("node-b").acquire(&mut *conn, &other_chat, &user, &second));

    assert_eq!((refusal, holder.kind), ("TurnInFlight", HolderKind::Turn));
    assert_eq!(holder.reference, first.as_str());
    assert_eq!(
        chat_lock(&mut conn, &other_chat),
        (None, None),
        "both or neither: the chat lock was rolled back"
    );
}

#[test]
fn a_click_blocks_the_users_turns_and_a_turn_blocks_the_users_clicks() {
    let mut conn = connection();
    let node = locks("node-a");
    let (clicker, turner) = (new_user(), new_user());
    let (clicker_chat, turner_chat) = (new_chat(&mut conn, &clicker), new_chat(&mut conn, &turner));
    let click = ClickRef::new();
    node.acquire_user(&mut *conn, &clicker, &click, hold())
        .unwrap();
    node.acquire(&mut *conn, &turner_chat, &turner, &turn())
        .unwrap();

    let (refusal, holder) = refused_by(node.acquire(&mut *conn, &clicker_chat, &clicker, &turn()));
    assert_eq!(
        (refusal, holder.kind, holder.reference.as_str()),
        ("ClickInFlight", HolderKind::Click, click.as_str())
    );
    assert_eq!(chat_lock(&mut conn, &clicker_chat), (None, None));

    let (refusal, holder) =
        refused_by(node.acquire_user(&mut *conn, &turner, &ClickRef::new(), hold()));
    assert_eq!((refusal, holder.kind), ("TurnInFlight", HolderKind::Turn));

    let (refusal, _) =
        refused_by(node.acquire_user(&mut *conn, &clicker, &ClickRef::new(), hold()));
    assert_eq!(refusal, "ClickInFlight", "one click at a time too");
}

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
fn a_turn_reference_is_never_a_clicks() {
    let mut conn = connection();
    let click = ClickRef::new();
    assert!(
        matches!(
            TurnRef::new(click.as_str()),
            Err(LeaseError::InvalidToken(_))
        ),
        "acquire cannot be given a click's ref"
    );
    let shouted = TurnRef::new(&click.as_str().to_uppercase()).unwrap();
    assert_eq!(
        HolderKind::of(shouted.as_str()),
        HolderKind::Turn,
        "CLICK: is no click"
    );
    assert!(matches!(
        ClickRef::parse("turn-1"),
        Err(LeaseError::InvalidToken(_))
    ));
    assert_eq!(HolderKind::of(click.as_str()), HolderKind::Click);
    assert_eq!(HolderKind::of(turn().as_str()), HolderKind::Turn);
    let user = new_user();
    locks("node-a")
        .acquire_user(&mut *conn, &user, &click, hold())
        .unwrap();
    assert_eq!(
        user_lock(&mut conn, &user),
        Some((Some("node-a".into()), Some(click.as_str().into())))
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
fn a_conversation_of_another_user_is_its_own_error_and_writes_nothing() {
    let mut conn = connection();
    let (ana, bob) = (new_user(), new_user());
    let anas_chat = new_chat(&mut conn, &ana);

    let result = locks("node-a").acquire(&mut *conn, &anas_chat, &bob, &turn());

    assert!(
        matches!(&result, Err(Error::ConversationOfAnotherUser { conversation, user }) if *conversation == anas_chat && *user == bob),
        "{result:?}"
    );
    assert_eq!(chat_lock(&mut conn, &anas_chat), (None, None));
    assert_eq!(user_lock(&mut conn, &bob), None);
}

#[test]
fn a_turn_cannot_hold_the_user_from_a_second_conversation() {
    let mut conn = connection();
    let (node, user, mine) = (locks("node-a"), new_user(), turn());
    let (chat, other_chat) = (new_chat(&mut conn, &user), new_chat(&mut conn, &user));
    node.acquire(&mut *conn, &chat, &user, &mine).unwrap();

    let (refusal, holder) = refused_by(node.acquire(&mut *conn, &other_chat, &user, &mine));

    assert_eq!(
        (refusal, holder.reference.as_str()),
        ("TurnInFlight", mine.as_str())
    );
    assert_eq!(chat_lock(&mut conn, &other_chat), (None, None));
}

#[test]
fn acquiring_again_with_the_same_turn_succeeds_so_a_retry_is_safe() {
    let mut conn = connection();
    let (node, user, mine) = (locks("node-a"), new_user(), turn());
    let chat = new_chat(&mut conn, &user);
    node.acquire(&mut *conn, &chat, &user, &mine).unwrap();
    age_chat(&mut conn, &chat, LEASE / 2);
    age_user(&mut conn, &user, LEASE / 2);

    node.acquire(&mut *conn, &chat, &user, &mine).unwrap();

    assert!(node.held(&mut *conn, &chat, &user, &mine).unwrap());
    let (_, holder) = refused_by(locks("node-b").acquire(&mut *conn, &chat, &user, &turn()));
    assert!(
        holder.age < LEASE / 4,
        "the retry restarted the lease: {holder}"
    );
}

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

#[test]
fn an_unknown_conversation_is_its_own_error_and_writes_nothing() {
    let mut conn = connection();
    let user = new_user();

    let result = locks("node-a").acquire(&mut *conn, "no-such-chat", &user, &turn());

    assert!(
        matches!(&result, Err(Error::UnknownConversation(id)) if id == "no-such-chat"),
        "{result:?}"
    );
    assert_eq!(user_lock(&mut conn, &user), None, "not even the user's row");
}

#[test]
fn bad_input_is_a_clear_error_and_writes_nothing() {
    let mut conn = connection();
    let (node, user) = (locks("node-a"), new_user());
    let chat = new_chat(&mut conn, &user);
    let too_long = "x".repeat(256);

    assert!(matches!(
        node.acquire(&mut *conn, "", &user, &turn()),
        Err(Error::InvalidId(_))
    ));
    assert!(matches!(
        node.acquire(&mut *conn, &chat, " ", &turn()),
        Err(Error::InvalidId(_))
    ));
    assert!(matches!(
        node.acquire(&mut *conn, &chat, &too_long, &turn()),
        Err(Error::InvalidId(_))
    ));
    assert!(matches!(TurnRef::new(""), Err(LeaseError::InvalidToken(_))));
    assert!(matches!(
        TurnRef::new(&too_long),
        Err(LeaseError::InvalidToken(_))
    ));
    assert!(matches!(
        AgentLocks::new("", Lease::new(LEASE).unwrap()),
        Err(Error::Lease(LeaseError::InvalidOwner(_)))
    ));
    assert!(
        matches!(
            Lease::from_secs(0).map_err(Error::from),
            Err(Error::Lease(LeaseError::InvalidLease(_)))
        ),
        "a zero lease"
    );
    let longer_than_the_lease = Lease::new(LEASE + Duration::from_secs(1)).unwrap();
    assert!(matches!(
        node.acquire_user(&mut *conn, &user, &ClickRef::new(), longer_than_the_lease),
        Err(Error::HoldExceedsLease { .. })
    ));
    assert!(matches!(
        node.keep_user(&mut *conn, &user, &ClickRef::new(), longer_than_the_lease),
        Err(Error::HoldExceedsLease { .. })
    ));
    assert!(matches!(
        node.release(&mut *conn, &chat, "", &turn()),
        Err(Error::InvalidId(_))
    ));

    assert_eq!(chat_lock(&mut conn, &chat), (None, None));
    assert_eq!(user_lock(&mut conn, &user), None);
}

#[test]
fn no_lock_statement_touches_updated_at() {
    let mut conn = connection();
    let (node, user, mine, click) = (locks("node-a"), new_user(), turn(), ClickRef::new());
    let chat = new_chat(&mut conn, &user);
    node.acquire_user(&mut *conn, &user, &click, hold())
        .unwrap();
    let settings_changed = updated_at(&mut conn, &user);

    node.keep_user(&mut *conn, &user, &click, hold()).unwrap();
    node.release_user(&mut *conn, &user, &click).unwrap();
    node.acquire(&mut *conn, &chat, &user, &mine).unwrap();
    node.held(&mut *conn, &chat, &user, &mine).unwrap();
    node.release(&mut *conn, &chat, &user, &mine).unwrap();
    node.acquire(&mut *conn, &chat, &user, &mine).unwrap();
    age_chat(&mut conn, &chat, past_the_lease());
    node.release_stale(&mut *conn, &chat, &user, &mine).unwrap();

    assert_eq!(updated_at(&mut conn, &user), settings_changed);
}

#[test]
fn thirty_two_turns_race_for_one_chat_and_exactly_one_wins() {
    let pool = backend::pool();
    let user = new_user();
    let chat = new_chat(&mut pool.get().unwrap(), &user);

    let results = race(&backend::pool_of(32), 32, |racer, conn| {
        locks(&format!("node-{racer}")).acquire(conn, &chat, &user, &turn())
    });

    assert_eq!(results.iter().filter(|result| result.is_ok()).count(), 1);
    for result in results.into_iter().filter(Result::is_err) {
        assert_eq!(
            refused_by(result).0,
            "ConversationBusy",
            "never a database error, never a deadlock"
        );
    }
}

#[test]
fn thirty_two_turns_of_one_new_user_race_in_thirty_two_chats_and_exactly_one_wins() {
    let pool = backend::pool();
    let user = new_user(); // no settings row yet: the racers create it
    let chats: Vec<String> = (0..32)
        .map(|_| new_chat(&mut pool.get().unwrap(), &user))
        .collect();

    let results = race(&backend::pool_of(32), 32, |racer, conn| {
        let node = locks(&format!("node-{racer}"));
        (racer, node.acquire(conn, &chats[racer], &user, &turn()))
    });

    let winners: Vec<usize> = results
        .iter()
        .filter(|(_, result)| result.is_ok())
        .map(|(racer, _)| *racer)
        .collect();
    assert_eq!(winners.len(), 1, "{results:?}");
    let mut conn = pool.get().unwrap();
    for (racer, result) in results {
        if result.is_err() {
            assert_eq!(
                refused_by(result).0,
                "TurnInFlight",
                "never a database error, never a deadlock"
            );
            assert_eq!(
                chat_lock(&mut conn, &chats[racer]),
                (None, None),
                "no chat lock without its user lock"
            );
        }
    }
}

#[test]
fn turns_and_clicks_of_one_user_never_hold_the_user_together() {
    const ROUNDS: usize = 10;
    let pool = backend::pool();
    let user = new_user();
    let chats: Vec<String> = (0..8)
        .map(|_| new_chat(&mut pool.get().unwrap(), &user))
        .collect();

    for _ in 0..ROUNDS {
        let results = race(&backend::pool_of(16), 16, |racer, conn| {
            let node = locks(&format!("node-{racer}"));
            if racer % 2 == 0 {
                let mine = turn();
                let result = node.acquire(conn, &chats[racer / 2], &user, &mine);
                (
                    HolderKind::Turn,
                    chats[racer / 2].clone(),
                    mine.as_str().to_owned(),
                    result,
                )
            } else {
                let click = ClickRef::new();
                let result = node.acquire_user(conn, &user, &click, hold());
                (
                    HolderKind::Click,
                    String::new(),
                    click.as_str().to_owned(),
                    result,
                )
            }
        });

        let winners: Vec<_> = results
            .iter()
            .filter(|(.., result)| result.is_ok())
            .collect();
        assert_eq!(
            winners.len(),
            1,
            "never both a turn and a click, nor two of either: {results:?}"
        );
        let (winner_kind, winner_chat, winner_ref) =
            (winners[0].0, winners[0].1.clone(), winners[0].2.clone());
        let expected: &str = match winner_kind {
            HolderKind::Turn => "TurnInFlight",
            HolderKind::Click => "ClickInFlight",
        };
        for (_, _, _, result) in results.into_iter().filter(|(.., result)| result.is_err()) {
            let (refusal, holder) = refused_by(result);
            assert_eq!(
                (refusal, holder.kind, holder.reference.as_str()),
                (expected, winner_kind, winner_ref.as_str()),
                "the refusal names the winner"
            );
        }
        let mut conn = pool.get().unwrap();
        // Only the winner's node may release its lock: the row names it.
        let Some((Some(winner_node), _)) = user_lock(&mut conn, &user) else {
            panic!("the winner holds the user's lock")
        };
        let node = locks(&winner_node);
        match winner_kind {
            HolderKind::Turn => assert!(node
                .release(
                    &mut *conn,
                    &winner_chat,
                    &user,
                    &TurnRef::new(&winner_ref).unwrap()
                )
                .unwrap()),
            HolderKind::Click => assert!(node
                .release_user(&mut *conn, &user, &ClickRef::parse(&winner_ref).unwrap())
                .unwrap()),
        }
    }
}

#[test]
fn sixteen_callers_of_release_stale_on_one_lost_turn_release_it_once() {
    let pool = backend::pool();
    let (user, lost) = (new_user(), turn());
    let chat = new_chat(&mut pool.get().unwrap(), &user);
    locks("node-down")
        .acquire(&mut *pool.get().unwrap(), &chat, &user, &lost)
        .unwrap();
    age_chat(&mut pool.get().unwrap(), &chat, past_the_lease());

    let results = race(&backend::pool_of(16), 16, |racer, conn| {
        locks(&format!("sweeper-{racer}")).release_stale(conn, &chat, &user, &lost)
    });

    let released = results
        .iter()
        .filter(|result| matches!(result, Ok(true)))
        .count();
    assert_eq!(released, 1, "{results:?}");
    assert!(results.iter().all(Result::is_ok), "{results:?}");
    assert_eq!(
        user_lock(&mut pool.get().unwrap(), &user),
        Some((None, None))
    );
}

#[test]
fn ten_thousand_turns_hold_their_locks_at_once_through_a_pool_of_four() {
    const TURNS: usize = 10_000;
    const POOL_SIZE: u32 = 4;
    let shared = backend::pool();
    let batch = unique_id("many");
    let ids: Vec<(String, String)> = (0..TURNS)
        .map(|n| (format!("{batch}-chat-{n}"), format!("{batch}-user-{n}")))
        .collect();
    {
        let mut conn = shared.get().unwrap();
        for chunk in ids.chunks(1000) {
            let chats: Vec<_> = chunk
                .iter()
                .map(|(chat, user)| (conversations::id.eq(chat), conversations::user_id.eq(user)))
                .collect();
            diesel::insert_into(conversations::table)
                .values(&chats)
                .execute(&mut *conn)
                .unwrap();
            let users: Vec<_> = chunk
                .iter()
                .map(|(_, user)| user_settings::user_id.eq(user))
                .collect();
            diesel::insert_into(user_settings::table)
                .values(&users)
                .execute(&mut *conn)
                .unwrap();
        }
    }
    let pool = backend::pool_of(POOL_SIZE);
    let turns: Vec<TurnRef> = (0..TURNS)
        .map(|n| TurnRef::new(&format!("{batch}-turn-{n}")).unwrap())
        .collect();

    std::thread::scope(|scope| {
        for worker in 0..POOL_SIZE as usize {
            let (pool, ids, turns) = (&pool, &ids, &turns);
            scope.spawn(move || {
                let node = locks(&format!("node-{worker}"));
                for n in (worker..TURNS).step_by(POOL_SIZE as usize) {
                    let mut conn = pool.get().unwrap();
                    node.acquire(&mut *conn, &ids[n].0, &ids[n].1, &turns[n])
                        .unwrap();
                }
            });
        }
    });

    // Read through another pool's connection: every lock is a committed row, none is a session
    // or a transaction of the four connections that took them.
    let mut conn = shared.get().unwrap();
    let held: i64 = conversations::table
        .filter(conversations::id.like(format!("{batch}-%")))
        .filter(conversations::busy_turn_ref.like(format!("{batch}-turn-%")))
        .count()
        .get_result(&mut *conn)
        .unwrap();
    assert_eq!(held, TURNS as i64, "every turn holds its chat at once");
    for n in (0..TURNS).step_by(97) {
        assert!(locks(&format!("node-{}", n % POOL_SIZE as usize))
            .held(&mut *conn, &ids[n].0, &ids[n].1, &turns[n])
            .unwrap());
    }
}

#[test]
fn a_reference_that_differs_only_in_case_holds_nothing() {
    let mut conn = connection();
    let (node, user) = (locks("node-a"), new_user());
    let chat = new_chat(&mut conn, &user);
    let mine = TurnRef::new(&unique_id("Turn")).unwrap();
    node.acquire(&mut *conn, &chat, &user, &mine).unwrap();
    let lower = TurnRef::new(&mine.as_str().to_lowercase()).unwrap();

    assert!(
        !node.held(&mut *conn, &chat, &user, &lower).unwrap(),
        "references compare exactly, on MySQL too"
    );
    assert!(!node.release(&mut *conn, &chat, &user, &lower).unwrap());
    assert!(
        refused_by(node.acquire(&mut *conn, &chat, &user, &lower))
            .1
            .reference
            == mine.as_str()
    );
    assert!(node.held(&mut *conn, &chat, &user, &mine).unwrap());
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

#[test]
fn a_click_of_a_user_without_settings_creates_them_as_a_turn_does() {
    let mut conn = connection();
    let user = new_user();
    assert_eq!(user_lock(&mut conn, &user), None, "no settings row yet");
    let click = ClickRef::new();

    locks("node-a")
        .acquire_user(&mut *conn, &user, &click, hold())
        .unwrap();

    assert_eq!(
        user_lock(&mut conn, &user),
        Some((Some("node-a".to_owned()), Some(click.as_str().to_owned())))
    );
}
