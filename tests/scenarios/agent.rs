// The agent locks' scenarios, included once per backend by tests/agent.rs: `backend` names the
// backend's support module. Time passes by ageing rows: their busy_since moved back. This file:
// a turn's or a click's locks acquired, and who is refused them and why; and the helpers of the
// scenario files included after it.
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
