//! The nodes' code, written once, generic over the connection: the agent locks need
//! `AgentConnection`; every other statement is one bound on `C`, named by its type.
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use diesel::dsl;
use diesel::prelude::*;
use diesel::query_dsl::methods::ExecuteDsl;
use diesel::r2d2::{ConnectionManager, Pool};
use diesel_lease::prelude::*;
use diesel_lease::LeaseQuery;
use diesel_lease_agent::schema::{conversations, user_settings};
use diesel_lease_agent::{
    self, AgentConnection, AgentLocks, AgentMigrations, ClickRef, Error, TurnRef,
};
use diesel_migrations::MigrationHarness;

use super::support::{millis_since, monotonic_now, timeline_start, Pooled};

/// Short, so the whole story runs in a few seconds.
const LEASE: Duration = Duration::from_millis(1500);
const HOLD: Duration = Duration::from_millis(400);
const ROUND: Duration = Duration::from_millis(100);

/// The types of the statements the story runs beside the agent locks, each the bound of one
/// statement on the connection.
mod statement {
    use super::*;

    pub type AddChats = dsl::Values<
        dsl::insert_into<conversations::table>,
        Vec<(
            dsl::Eq<conversations::id, String>,
            dsl::Eq<conversations::user_id, String>,
        )>,
    >;
    pub type DeleteChats =
        dsl::delete<dsl::Filter<conversations::table, dsl::Like<conversations::id, String>>>;
    pub type DeleteUsers =
        dsl::delete<dsl::Filter<user_settings::table, dsl::Like<user_settings::user_id, String>>>;

    /// Who holds the chats' locks; its type is named after it.
    #[dsl::auto_type(dsl_path = "diesel_lease::dsl")]
    pub fn chats_held(lease: Lease) -> _ {
        conversations::table.holders(lease)
    }

    /// Who holds the users' locks.
    #[dsl::auto_type(dsl_path = "diesel_lease::dsl")]
    pub fn users_held(lease: Lease) -> _ {
        user_settings::table.holders(lease)
    }
}

/// What the application believes is running, to catch a broken invariant.
#[derive(Default)]
struct Running {
    /// The turn in each chat, and what each user has in flight, each with the instant its lease
    /// or hold runs out: it runs from the statement, so counted from an instant taken before the
    /// call it ends no later in the process than in the database, however long the COMMIT took.
    chats: HashMap<String, (String, Instant)>,
    users: HashMap<String, (String, Instant)>,
}

pub struct Story<C: Pooled> {
    db: Pool<ConnectionManager<C>>,
    run: String,
    start: Instant,
    running: Mutex<Running>,
    broken: Mutex<Vec<String>>,
    counts: Mutex<HashMap<&'static str, usize>>,
}

impl<C> Story<C>
where
    C: Pooled + AgentConnection + MigrationHarness<C::Backend>,
    C::Backend: AgentMigrations,
    statement::AddChats: ExecuteDsl<C>,
    statement::chats_held: for<'q> LeaseQuery<'q, C, String>,
    statement::users_held: for<'q> LeaseQuery<'q, C, String>,
    statement::DeleteChats: ExecuteDsl<C>,
    statement::DeleteUsers: ExecuteDsl<C>,
{
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
        AgentLocks::new(node, Lease::new(LEASE)?)
    }

    /// Marks `reference` running in `chat` (None for a click) for `user` until `hold_ends`; two
    /// at once is a broken invariant. A turn or a click whose lease or hold has run out is in
    /// flight no more: another may take its locks over (a node that stalls past it, say).
    fn started(&self, chat: Option<&str>, user: &str, reference: &str, hold_ends: Instant) {
        let mut running = self.running.lock().unwrap_or_else(|e| e.into_inner());
        let entry = (reference.to_owned(), hold_ends);
        if let Some(chat) = chat {
            if let Some((other, other_ends)) = running.chats.insert(chat.to_owned(), entry.clone())
            {
                if monotonic_now() < other_ends {
                    self.broken(format!("two turns in chat {chat}: {other} and {reference}"));
                }
            }
        }
        if let Some((other, other_ends)) = running.users.insert(user.to_owned(), entry) {
            if monotonic_now() < other_ends {
                self.broken(format!(
                    "two in flight for user {user}: {other} and {reference}"
                ));
            }
        }
    }

    /// Moves the end of the hold of `user`'s click `reference` to `ends`.
    fn kept(&self, user: &str, reference: &str, ends: Instant) {
        let mut running = self.running.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((click, hold_ends)) = running.users.get_mut(user) {
            if click == reference {
                *hold_ends = ends;
            }
        }
    }

    /// Waits (at most 10 s) until `user` has something in flight.
    fn until_running(&self, user: &str) {
        let started = monotonic_now();
        while started.elapsed() < Duration::from_secs(10) {
            if self
                .running
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .users
                .contains_key(user)
            {
                return;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    fn ended(&self, chat: Option<&str>, user: &str) {
        let mut running = self.running.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(chat) = chat {
            running.chats.remove(chat);
        }
        running.users.remove(user);
    }

    /// Ends `user`'s click `reference`, unless a turn has taken its place since.
    fn click_ended(&self, user: &str, reference: &str) {
        let mut running = self.running.lock().unwrap_or_else(|e| e.into_inner());
        if running
            .users
            .get(user)
            .is_some_and(|(click, _)| click == reference)
        {
            running.users.remove(user);
        }
    }

    fn broken(&self, what: String) {
        println!("BROKEN: {what}");
        self.broken
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(what);
    }

    /// A turn: acquire both locks, run `rounds` rounds checking `held` before each, release.
    /// Whether it acquired them.
    fn turn(&self, node: &str, chat: &str, user: &str, rounds: u32) -> Result<bool, Error> {
        let (locks, turn) = (
            self.locks(node)?,
            TurnRef::new(&format!("turn-{}", uuid_like()))?,
        );
        let (chat, user) = (self.id(chat), self.id(user));
        let conn = &mut *self.db.get()?;
        let asked = monotonic_now();
        match locks.acquire(conn, &chat, &user, &turn) {
            Ok(()) => {
                self.count("turns acquired");
                self.started(Some(&chat), &user, turn.as_str(), asked + LEASE);
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
                self.ended(Some(&chat), &user);
                self.say(
                    node,
                    &format!("lost {} before round {round}: stops", turn.as_str()),
                );
                return Ok(true);
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

    /// The story on `db`: whether every invariant held.
    pub fn run(db: Pool<ConnectionManager<C>>) -> Result<bool, Error> {
        let story = Self {
            run: format!("demo{}", std::process::id()),
            db,
            start: timeline_start(),
            running: Mutex::default(),
            broken: Mutex::default(),
            counts: Mutex::default(),
        };
        story.setup()?;
        println!("lease {LEASE:?}, click hold {HOLD:?}; users ana, ben, caro\n");

        std::thread::scope(|scope| -> Result<(), Error> {
            let nodes = [
                scope.spawn(|| story.ana_chats()),
                scope.spawn(|| story.ben_confirms()),
                scope.spawn(|| story.caros_node_dies()),
            ];
            for node in nodes {
                node.join().expect("a node thread panicked")?;
            }
            Ok(())
        })?;
        story.summary()
    }

    fn setup(&self) -> Result<(), Error> {
        let conn = &mut *self.db.get()?;
        diesel_lease_agent::run_migrations(conn)?;
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
                    conversations::id.eq(self.id(chat)),
                    conversations::user_id.eq(self.id(user)),
                )
            })
            .collect();
        diesel::insert_into(conversations::table)
            .values(rows)
            .execute(conn)?;
        Ok(())
    }

    /// ana's turn runs on node-a; a second turn in the same chat and one in her other chat are refused.
    fn ana_chats(&self) -> Result<(), Error> {
        std::thread::scope(|scope| -> Result<(), Error> {
            let first = scope.spawn(|| self.turn("node-a", "chat1", "ana", 4));
            std::thread::sleep(Duration::from_millis(50));
            self.turn("node-b", "chat1", "ana", 1)?;
            self.turn("node-b", "chat2", "ana", 1)?;
            first.join().expect("node-a panicked")?;
            Ok(())
        })?;
        self.turn("node-b", "chat2", "ana", 1).map(drop)
    }

    /// ben's turn runs; his confirmation click during it is refused; after it, the click holds the
    /// user past its hold by keeping the lock, and blocks a turn until it is released.
    fn ben_confirms(&self) -> Result<(), Error> {
        let (locks, user) = (self.locks("node-c")?, self.id("ben"));
        let hold = Lease::new(HOLD)?;
        std::thread::scope(|scope| -> Result<(), Error> {
            let turn = scope.spawn(|| self.turn("node-c", "chat3", "ben", 3));
            // Once the turn runs, not after a guess at how long it takes to start.
            self.until_running(&user);
            let click = ClickRef::new();
            let conn = &mut *self.db.get()?;
            match locks.acquire_user(conn, &user, &click, hold) {
                Err(refusal) => self.refused("web-1", &refusal),
                // The turn ended first (a slow machine): the click had nothing to wait for.
                Ok(()) => {
                    locks.release_user(conn, &user, &click)?;
                    self.say("web-1", "the turn ended before the click: released it");
                }
            }
            turn.join().expect("node-c panicked")?;
            Ok(())
        })?;

        let click = ClickRef::new();
        let conn = &mut *self.db.get()?;
        // The hold runs from the statement's time, which is after this instant.
        let asked = monotonic_now();
        locks.acquire_user(conn, &user, &click, hold)?;
        self.count("clicks acquired");
        self.started(None, &user, click.as_str(), asked + HOLD);
        self.say(
            "web-1",
            &format!("click {} holds ben for {HOLD:?}", &click.as_str()[..14]),
        );
        std::thread::scope(|scope| -> Result<(), Error> {
            let blocked = scope.spawn(|| {
                std::thread::sleep(HOLD + Duration::from_millis(300));
                self.turn("node-a", "chat3", "ben", 1)
            });
            let mut held = true;
            for _ in 0..5 {
                std::thread::sleep(Duration::from_millis(200));
                let asked = monotonic_now();
                if !locks.keep_user(conn, &user, &click, hold)? {
                    // Its hold ran out before the keep (a COMMIT slow past it): a turn took over.
                    self.say("web-1", "click lost its lock to a turn: stops");
                    held = false;
                    break;
                }
                self.kept(&user, click.as_str(), asked + HOLD);
                self.say("web-1", "click still working: kept the lock");
            }
            self.click_ended(&user, click.as_str());
            if held {
                locks.release_user(conn, &user, &click)?;
                self.say("web-1", "click done: released ben");
            }
            blocked.join().expect("node-a panicked")?;
            Ok(())
        })?;
        self.turn("node-a", "chat3", "ben", 1).map(drop)
    }

    /// caro's turn starts on node-d, which dies; her chat stays busy until the lease has run out, then
    /// another node releases what is left with `release_stale` and runs her next turn.
    fn caros_node_dies(&self) -> Result<(), Error> {
        let (chat, user) = (self.id("chat4"), self.id("caro"));
        let lost = TurnRef::new("turn-lost-with-node-d")?;
        let conn = &mut *self.db.get()?;
        let asked = monotonic_now();
        self.locks("node-d")?.acquire(conn, &chat, &user, &lost)?;
        self.count("turns acquired");
        self.started(Some(&chat), &user, lost.as_str(), asked + LEASE);
        self.say(
            "node-d",
            &format!(
                "acquired {} for caro in chat4, then the node dies",
                lost.as_str()
            ),
        );

        std::thread::sleep(Duration::from_millis(300));
        // Refused, unless this thread stalled past the lost turn's lease: then it takes over.
        let took_over = self.turn("node-a", "chat4", "caro", 1)?;
        let sweeper = self.locks("node-a")?;
        let early = sweeper.release_stale(conn, &chat, &user, &lost)?;
        self.say(
            "node-a",
            &format!("release_stale before the lease ran out: {early} (the turn may still run)"),
        );

        std::thread::sleep(LEASE);
        self.ended(Some(&chat), &user);
        let reclaimed = sweeper.release_stale(conn, &chat, &user, &lost)?;
        self.say(
            "node-a",
            &format!("release_stale after the lease ran out: {reclaimed}"),
        );
        if reclaimed {
            self.count("stale turns released");
        } else if took_over {
            self.say(
                "node-a",
                "nothing stale: the turn after the lease took the locks over",
            );
        } else {
            self.broken("a turn lost with its node was not released".into());
        }
        self.turn("node-a", "chat4", "caro", 1).map(drop)
    }

    fn summary(&self) -> Result<bool, Error> {
        let conn = &mut *self.db.get()?;
        // Every lock still held, read through the lease layer; this run's are those it named.
        let lease = Lease::new(LEASE)?;
        let ours = |key: &String| key.starts_with(&format!("{}-", self.run));
        let chats_left = (statement::chats_held(lease).run(conn)?)
            .iter()
            .filter(|holding| ours(&holding.key))
            .count();
        let users_left = (statement::users_held(lease).run(conn)?)
            .iter()
            .filter(|holding| ours(&holding.key))
            .count();
        if chats_left + users_left > 0 {
            self.broken(format!(
                "{chats_left} chat and {users_left} user locks left behind"
            ));
        }
        let pattern = format!("{}-%", self.run);
        diesel::delete(conversations::table.filter(conversations::id.like(pattern.clone())))
            .execute(conn)?;
        diesel::delete(user_settings::table.filter(user_settings::user_id.like(pattern)))
            .execute(conn)?;

        println!("\nsummary");
        let mut counts: Vec<_> = self
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
        let broken = self.broken.lock().unwrap_or_else(|e| e.into_inner());
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
}

fn short(id: &str) -> &str {
    id.rsplit('-').next().unwrap_or(id)
}

/// A reference unique enough for the example's turns.
fn uuid_like() -> String {
    ClickRef::new().as_str()["click:".len().."click:".len() + 8].to_owned()
}
