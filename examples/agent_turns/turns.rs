// The nodes' code, written once and included per backend by main.rs with `Conn` set.
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use diesel::prelude::*;
use diesel::r2d2::{ConnectionManager, Pool};
use diesel_lease::agent::schema::{conversations, user_settings};
use diesel_lease::agent::{self, AgentLocks, ClickRef, Error, TurnRef};
use diesel_lease::Lease;

use super::support::{millis_since, pool, timeline_start};

/// Short, so the whole story runs in a few seconds.
const TTL: Duration = Duration::from_millis(1500);
const HOLD: Duration = Duration::from_millis(400);
const ROUND: Duration = Duration::from_millis(100);

type Db = Pool<ConnectionManager<Conn>>;

/// What the application believes is running, to catch a broken invariant.
#[derive(Default)]
struct Running {
    chats: HashMap<String, String>,
    users: HashMap<String, String>,
}

struct Story {
    db: Db,
    run: String,
    start: Instant,
    running: Mutex<Running>,
    broken: Mutex<Vec<String>>,
    counts: Mutex<HashMap<&'static str, usize>>,
}

impl Story {
    fn say(&self, node: &str, what: &str) {
        println!("{:>5} ms  {node:<7} {what}", millis_since(self.start));
    }

    fn count(&self, what: &'static str) {
        *self
            .counts
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(what)
            .or_default() += 1;
    }

    fn id(&self, name: &str) -> String {
        format!("{}-{name}", self.run)
    }

    fn locks(&self, node: &str) -> Result<AgentLocks, Error> {
        AgentLocks::new(node, Lease::new(TTL)?)
    }

    /// Marks `reference` running in `chat` (None for a click) for `user`; two at once is a broken invariant.
    fn started(&self, chat: Option<&str>, user: &str, reference: &str) {
        let mut running = self.running.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(chat) = chat {
            if let Some(other) = running.chats.insert(chat.to_owned(), reference.to_owned()) {
                self.broken(format!("two turns in chat {chat}: {other} and {reference}"));
            }
        }
        if let Some(other) = running.users.insert(user.to_owned(), reference.to_owned()) {
            self.broken(format!(
                "two in flight for user {user}: {other} and {reference}"
            ));
        }
    }

    fn ended(&self, chat: Option<&str>, user: &str) {
        let mut running = self.running.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(chat) = chat {
            running.chats.remove(chat);
        }
        running.users.remove(user);
    }

    fn broken(&self, what: String) {
        println!("BROKEN: {what}");
        self.broken
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(what);
    }

    /// A turn: acquire both locks, run `rounds` rounds checking `held` before each, release.
    fn turn(&self, node: &str, chat: &str, user: &str, rounds: u32) -> Result<bool, Error> {
        let (locks, turn) = (
            self.locks(node)?,
            TurnRef::new(&format!("turn-{}", uuid_like()))?,
        );
        let (chat, user) = (self.id(chat), self.id(user));
        let conn = &mut self.db.get()?;
        match locks.acquire(conn, &chat, &user, &turn) {
            Ok(()) => {
                self.count("turns acquired");
                self.started(Some(&chat), &user, turn.as_str());
                self.say(
                    node,
                    &format!(
                        "acquired {} for {} in {}",
                        turn.as_str(),
                        short(&user),
                        short(&chat)
                    ),
                );
            }
            Err(refusal) => {
                self.refused(node, &refusal);
                return Ok(false);
            }
        }
        for round in 1..=rounds {
            if !locks.held(conn, &chat, &user, &turn)? {
                self.say(
                    node,
                    &format!("lost {} before round {round}: stops", turn.as_str()),
                );
                return Ok(false);
            }
            std::thread::sleep(ROUND);
        }
        self.ended(Some(&chat), &user);
        let released = locks.release(conn, &chat, &user, &turn)?;
        self.say(
            node,
            &format!(
                "released {} ({})",
                turn.as_str(),
                if released {
                    "both locks"
                } else {
                    "already taken over"
                }
            ),
        );
        Ok(true)
    }

    fn refused(&self, node: &str, refusal: &Error) {
        self.count(match refusal {
            Error::ConversationBusy(_) => "refused: conversation busy",
            Error::TurnInFlight(_) => "refused: turn in flight",
            Error::ClickInFlight(_) => "refused: click in flight",
            _ => "failed",
        });
        self.say(node, &format!("refused: {refusal}"));
    }
}

fn short(id: &str) -> &str {
    id.rsplit('-').next().unwrap_or(id)
}

/// A reference unique enough for the example's turns.
fn uuid_like() -> String {
    ClickRef::new().as_str()["click:".len().."click:".len() + 8].to_owned()
}

pub(super) fn run(url: &str, sqlite: bool) -> Result<bool, Error> {
    let db: Db = pool(url, 8, sqlite)?;
    let story = Story {
        run: format!("demo{}", std::process::id()),
        db,
        start: timeline_start(),
        running: Mutex::default(),
        broken: Mutex::default(),
        counts: Mutex::default(),
    };
    setup(&story)?;
    println!("ttl {TTL:?}, click hold {HOLD:?}; users ana, ben, caro\n");

    std::thread::scope(|scope| -> Result<(), Error> {
        let nodes = [
            scope.spawn(|| ana_chats(&story)),
            scope.spawn(|| ben_confirms(&story)),
            scope.spawn(|| caros_node_dies(&story)),
        ];
        for node in nodes {
            node.join().expect("a node thread panicked")?;
        }
        Ok(())
    })?;
    summary(&story)
}

fn setup(story: &Story) -> Result<(), Error> {
    let conn = &mut story.db.get()?;
    agent::run_migrations(conn)?;
    let chats = [
        ("chat1", "ana"),
        ("chat2", "ana"),
        ("chat3", "ben"),
        ("chat4", "caro"),
    ];
    let rows: Vec<_> = chats
        .iter()
        .map(|(chat, user)| {
            (
                conversations::id.eq(story.id(chat)),
                conversations::user_id.eq(story.id(user)),
            )
        })
        .collect();
    diesel::insert_into(conversations::table)
        .values(&rows)
        .execute(conn)?;
    Ok(())
}

/// ana's turn runs on node-a; a second turn in the same chat and one in her other chat are refused.
fn ana_chats(story: &Story) -> Result<(), Error> {
    std::thread::scope(|scope| -> Result<(), Error> {
        let first = scope.spawn(|| story.turn("node-a", "chat1", "ana", 4));
        std::thread::sleep(Duration::from_millis(50));
        story.turn("node-b", "chat1", "ana", 1)?;
        story.turn("node-b", "chat2", "ana", 1)?;
        first.join().expect("node-a panicked")?;
        Ok(())
    })?;
    story.turn("node-b", "chat2", "ana", 1).map(drop)
}

/// ben's turn runs; his confirmation click during it is refused; after it, the click holds the
/// user past its hold by keeping the lock, and blocks a turn until it is released.
fn ben_confirms(story: &Story) -> Result<(), Error> {
    let (locks, user) = (story.locks("node-c")?, story.id("ben"));
    let hold = Lease::new(HOLD)?;
    std::thread::scope(|scope| -> Result<(), Error> {
        let turn = scope.spawn(|| story.turn("node-c", "chat3", "ben", 3));
        std::thread::sleep(Duration::from_millis(100));
        let click = ClickRef::new();
        if let Err(refusal) = locks.acquire_user(&mut *story.db.get()?, &user, &click, hold) {
            story.refused("web-1", &refusal);
        }
        turn.join().expect("node-c panicked")?;
        Ok(())
    })?;

    let click = ClickRef::new();
    let conn = &mut story.db.get()?;
    locks.acquire_user(conn, &user, &click, hold)?;
    story.count("clicks acquired");
    story.started(None, &user, click.as_str());
    story.say(
        "web-1",
        &format!("click {} holds ben for {HOLD:?}", &click.as_str()[..14]),
    );
    std::thread::scope(|scope| -> Result<(), Error> {
        let blocked = scope.spawn(|| {
            std::thread::sleep(HOLD + Duration::from_millis(300));
            story.turn("node-a", "chat3", "ben", 1)
        });
        for _ in 0..5 {
            std::thread::sleep(Duration::from_millis(200));
            let kept = locks.keep_user(conn, &user, &click, hold)?;
            story.say(
                "web-1",
                &format!("click still working: kept the lock ({kept})"),
            );
        }
        story.ended(None, &user);
        locks.release_user(conn, &user, &click)?;
        story.say("web-1", "click done: released ben");
        blocked.join().expect("node-a panicked")?;
        Ok(())
    })?;
    story.turn("node-a", "chat3", "ben", 1).map(drop)
}

/// caro's turn starts on node-d, which dies; her chat stays busy until the TTL has passed, then
/// another node releases what is left with `release_stale` and runs her next turn.
fn caros_node_dies(story: &Story) -> Result<(), Error> {
    let (chat, user) = (story.id("chat4"), story.id("caro"));
    let lost = TurnRef::new("turn-lost-with-node-d")?;
    let conn = &mut story.db.get()?;
    story.locks("node-d")?.acquire(conn, &chat, &user, &lost)?;
    story.count("turns acquired");
    story.started(Some(&chat), &user, lost.as_str());
    story.say(
        "node-d",
        &format!(
            "acquired {} for caro in chat4, then the node dies",
            lost.as_str()
        ),
    );

    std::thread::sleep(Duration::from_millis(300));
    story.turn("node-a", "chat4", "caro", 1)?;
    let sweeper = story.locks("node-a")?;
    let early = sweeper.release_stale(conn, &chat, &user, &lost)?;
    story.say(
        "node-a",
        &format!("release_stale before the ttl: {early} (the turn may still run)"),
    );

    std::thread::sleep(TTL);
    story.ended(Some(&chat), &user);
    let reclaimed = sweeper.release_stale(conn, &chat, &user, &lost)?;
    story.say(
        "node-a",
        &format!("release_stale after the ttl: {reclaimed}"),
    );
    if reclaimed {
        story.count("stale turns released");
    } else {
        story.broken("a turn lost with its node was not released".into());
    }
    story.turn("node-a", "chat4", "caro", 1).map(drop)
}

fn summary(story: &Story) -> Result<bool, Error> {
    let conn = &mut story.db.get()?;
    let pattern = format!("{}-%", story.run);
    let chats_left: i64 = conversations::table
        .filter(
            conversations::id
                .like(&pattern)
                .and(conversations::busy_turn_ref.is_not_null()),
        )
        .count()
        .get_result(conn)?;
    let users_left: i64 = user_settings::table
        .filter(
            user_settings::user_id
                .like(&pattern)
                .and(user_settings::busy_turn_ref.is_not_null()),
        )
        .count()
        .get_result(conn)?;
    if chats_left + users_left > 0 {
        story.broken(format!(
            "{chats_left} chat and {users_left} user locks left behind"
        ));
    }
    diesel::delete(conversations::table.filter(conversations::id.like(&pattern))).execute(conn)?;
    diesel::delete(user_settings::table.filter(user_settings::user_id.like(&pattern)))
        .execute(conn)?;

    println!("\nsummary");
    let mut counts: Vec<_> = story
        .counts
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone()
        .into_iter()
        .collect();
    counts.sort();
    for (what, count) in counts {
        println!("  {what:<28} {count}");
    }
    let broken = story.broken.lock().unwrap_or_else(|e| e.into_inner());
    println!(
        "  invariants                   {}",
        if broken.is_empty() {
            "held: one turn per chat, one in flight per user, no lock left behind"
        } else {
            "BROKEN"
        }
    );
    Ok(broken.is_empty())
}
