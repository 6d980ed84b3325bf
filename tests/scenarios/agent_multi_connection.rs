// The agent locks on a connection enum of Diesel's `#[derive(MultiConnection)]`
// (tests/common/any.rs), connected to this backend, included by tests/agent.rs beside the
// scenarios on the backend's own connection: a turn taken, refused to a rival, kept past its
// lease by a keeper of a pool of the enum, released; a click; a stale turn released.
mod on_a_multi_connection_enum {
    use std::time::Duration;

    use diesel::prelude::*;
    use diesel_lease::{ClaimLease, Keeper, KeeperSettings, Lease};
    use diesel_lease_agent::schema::conversations;
    use diesel_lease_agent::{AgentLocks, ClickRef, Error, HolderKind, TurnRef};

    use super::backend;
    use crate::common::any::{self, AnyConnection};
    use crate::common::{after_rounds, unique_id};

    fn locks(node: &str) -> AgentLocks {
        AgentLocks::new(node, Lease::from_secs(120).unwrap()).unwrap()
    }

    fn turn() -> TurnRef {
        TurnRef::new(&unique_id("turn")).unwrap()
    }

    fn new_chat(conn: &mut AnyConnection, user: &str) -> String {
        let id = unique_id("chat");
        diesel::insert_into(conversations::table)
            .values((conversations::id.eq(&id), conversations::user_id.eq(user)))
            .execute(conn)
            .unwrap();
        id
    }

    /// The chat's lock, renewed `age` ago by the database's clock: time passing for it.
    fn age_chat(conn: &mut AnyConnection, chat: &str, age: Duration) {
        diesel::update(conversations::table.find(chat))
            .set(conversations::table.renewed_ago(diesel_lease::Age::new(age).unwrap()))
            .execute(conn)
            .unwrap();
    }

    #[test]
    fn a_turn_is_taken_kept_and_released_and_a_click_blocks_turns() {
        backend::pool(); // the test tables, made once per run
        let pool = any::pool(backend::url(), 3);
        let conn = &mut *pool.get().unwrap();
        let user = unique_id("user");
        let (chat, other_chat) = (new_chat(conn, &user), new_chat(conn, &user));
        let (node, first) = (locks("node-a"), turn());

        node.acquire(conn, &chat, &user, &first).unwrap();
        assert!(node.held(conn, &chat, &user, &first).unwrap());
        match locks("node-b").acquire(conn, &chat, &user, &turn()) {
            Err(Error::ConversationBusy(holder)) => assert_eq!(
                (
                    holder.kind,
                    holder.owner.as_str(),
                    holder.reference.as_str()
                ),
                (HolderKind::Turn, "node-a", first.as_str())
            ),
            other => panic!("expected ConversationBusy, got {other:?}"),
        }
        assert!(matches!(
            locks("node-b").acquire(conn, &other_chat, &user, &turn()),
            Err(Error::TurnInFlight(_))
        ));

        // Kept past its lease by a keeper of enum connections: both locks renewed.
        let keeper = Keeper::start(
            any::pool(backend::url(), 2),
            KeeperSettings::new(node.lease()).every(Duration::from_millis(20)),
        )
        .unwrap();
        let kept = node.keep(&keeper, &chat, &user, &first).unwrap();
        age_chat(conn, &chat, Duration::from_secs(119));
        after_rounds(&keeper, 2);
        let fresh: i64 = conversations::table
            .find(&chat)
            .filter(conversations::table.fresh(Lease::from_secs(10).unwrap()))
            .count()
            .get_result(conn)
            .unwrap();
        assert_eq!(fresh, 1, "renewed by the database's clock");
        assert!(kept.check().is_ok());
        assert!(kept.release(conn).unwrap(), "it held both");

        // A click takes the user's lock alone, and blocks the user's turns for its hold.
        let click = ClickRef::new();
        node.acquire_user(conn, &user, &click, Lease::from_secs(10).unwrap())
            .unwrap();
        assert!(matches!(
            node.acquire(conn, &chat, &user, &turn()),
            Err(Error::ClickInFlight(_))
        ));
        assert!(node.release_user(conn, &user, &click).unwrap());

        // A turn whose node died is released once stale, by the database's clock.
        let lost = turn();
        locks("node-down")
            .acquire(conn, &chat, &user, &lost)
            .unwrap();
        age_chat(conn, &chat, Duration::from_secs(121));
        assert!(node.release_stale(conn, &chat, &user, &lost).unwrap());
        node.acquire(conn, &chat, &user, &turn()).unwrap();
    }

    #[test]
    fn the_same_turn_or_click_from_a_second_node_is_refused_naming_the_first() {
        backend::pool(); // the test tables, made once per run
        let pool = any::pool(backend::url(), 1);
        let conn = &mut *pool.get().unwrap();
        let user = unique_id("user");
        let chat = new_chat(conn, &user);
        let (node_a, node_b, mine) = (locks("node-a"), locks("node-b"), turn());

        node_a.acquire(conn, &chat, &user, &mine).unwrap();
        match node_b.acquire(conn, &chat, &user, &mine) {
            Err(Error::ConversationBusy(holder)) => assert_eq!(
                (holder.owner.as_str(), holder.reference.as_str()),
                ("node-a", mine.as_str())
            ),
            other => panic!("expected ConversationBusy, got {other:?}"),
        }
        assert!(!node_b.held(conn, &chat, &user, &mine).unwrap());
        assert!(!node_b.release(conn, &chat, &user, &mine).unwrap());
        node_a.acquire(conn, &chat, &user, &mine).unwrap();
        assert!(
            node_a.release(conn, &chat, &user, &mine).unwrap(),
            "still node-a's"
        );

        let hold = Lease::from_secs(10).unwrap();
        let click = ClickRef::new();
        node_a.acquire_user(conn, &user, &click, hold).unwrap();
        match node_b.acquire_user(conn, &user, &click, hold) {
            Err(Error::ClickInFlight(holder)) => assert_eq!(holder.owner, "node-a"),
            other => panic!("expected ClickInFlight, got {other:?}"),
        }
        assert!(!node_b.keep_user(conn, &user, &click, hold).unwrap());
        assert!(!node_b.release_user(conn, &user, &click).unwrap());
        node_a.acquire_user(conn, &user, &click, hold).unwrap();
        assert!(
            node_a.release_user(conn, &user, &click).unwrap(),
            "still node-a's"
        );
    }

    /// On a pool's connection of the enum, spelled as on a pool of one backend's connections:
    /// `&mut pool.get()?`, with no `&mut *`.
    #[test]
    fn the_locks_run_on_a_pools_connection_of_the_enum_spelled_as_on_a_native_pool() {
        backend::pool(); // the test tables, made once per run
        let pool = any::pool(backend::url(), 2);
        let user = unique_id("user");
        let chat = new_chat(&mut pool.get().unwrap(), &user);
        let (node, mine) = (locks("node-a"), turn());

        node.acquire(&mut pool.get().unwrap(), &chat, &user, &mine)
            .unwrap();
        assert!(node
            .held(&mut pool.get().unwrap(), &chat, &user, &mine)
            .unwrap());
        assert!(matches!(
            locks("node-b").acquire(&mut pool.get().unwrap(), &chat, &user, &turn()),
            Err(Error::ConversationBusy(_))
        ));
        assert!(node
            .release(&mut pool.get().unwrap(), &chat, &user, &mine)
            .unwrap());

        let (click, hold) = (ClickRef::new(), Lease::from_secs(10).unwrap());
        node.acquire_user(&mut pool.get().unwrap(), &user, &click, hold)
            .unwrap();
        assert!(node
            .keep_user(&mut pool.get().unwrap(), &user, &click, hold)
            .unwrap());
        assert!(node
            .release_user(&mut pool.get().unwrap(), &user, &click)
            .unwrap());
    }
}
