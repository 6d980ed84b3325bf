//! The nodes' code, written once, generic over the connection: the task locks need
//! `TaskConnection`; every other statement is one bound on `C`, named by its type.
use std::sync::Mutex;
use std::time::{Duration, Instant};

use diesel::dsl;
use diesel::prelude::*;
use diesel::query_builder::SqlQuery;
use diesel::query_dsl::methods::ExecuteDsl;
use diesel::query_dsl::LoadQuery;
use diesel::r2d2::{ConnectionManager, Pool};
use diesel_lease::Lease;
use diesel_lease_tasks::schema::task_locks;
use diesel_lease_tasks::{self, Error, Hold, TaskConnection, TaskLocks, TaskMigrations, TaskRun};
use diesel_migrations::MigrationHarness;

use super::support::{self, millis_since, timeline_start, Pooled};

/// How soon the lock of a node that died would free itself.
const LEASE: Duration = Duration::from_secs(10);
/// The task is due every second, ten times, the first half a second after the start.
const PERIOD: Duration = Duration::from_secs(1);
const TICKS: u32 = 10;
const FIRST_TICK: Duration = Duration::from_millis(500);
/// A run holds the lock at least this long, by the database's clock: longer than the nodes'
/// clocks disagree (250 ms) with room for a late thread, shorter than the period less that.
const AT_LEAST: Duration = Duration::from_millis(600);
/// A run that hangs loses its lock after this.
const AT_MOST: Duration = Duration::from_secs(5);
/// The nodes, how far each one's clock is ahead of node-a's, and how many ticks each sees:
/// node-c is stopped after tick 5 (a deploy, say), and the others go on without it.
const NODES: [(&str, Duration, u32); 3] = [
    ("node-a", Duration::ZERO, TICKS),
    ("node-b", Duration::from_millis(120), TICKS),
    ("node-c", Duration::from_millis(250), 6),
];

diesel::table! {
    /// What the task does: it records the tick it runs for, and on which node.
    scheduled_task_runs (task, tick, node) {
        task -> Text,
        tick -> BigInt,
        node -> Text,
    }
}

use scheduled_task_runs as runs;

const CREATE_RUNS: &str = "CREATE TABLE IF NOT EXISTS scheduled_task_runs (
    task VARCHAR(255) NOT NULL, tick BIGINT NOT NULL, node VARCHAR(64) NOT NULL,
    PRIMARY KEY (task, tick, node))";

/// The types of the statements the schedule runs beside the task locks, each the bound of one
/// statement on the connection.
mod statement {
    use super::*;

    pub type RecordRun = dsl::Values<
        dsl::insert_into<runs::table>,
        (
            dsl::Eq<runs::task, String>,
            dsl::Eq<runs::tick, i64>,
            dsl::Eq<runs::node, &'static str>,
        ),
    >;
    pub type RanBy = dsl::Select<
        dsl::Filter<runs::table, dsl::And<dsl::Eq<runs::task, String>, dsl::Eq<runs::tick, i64>>>,
        runs::node,
    >;
    pub type RunsOf = dsl::Select<
        dsl::Filter<runs::table, dsl::Eq<runs::task, String>>,
        (runs::tick, runs::node),
    >;
    pub type DeleteRuns = dsl::delete<dsl::Filter<runs::table, dsl::Eq<runs::task, String>>>;
    pub type DeleteLock =
        dsl::delete<dsl::Filter<task_locks::table, dsl::Eq<task_locks::name, String>>>;
}

pub struct Schedule<'a, C: Pooled> {
    setup: Pool<ConnectionManager<C>>,
    url: &'a str,
    /// The task's name, of this run of the example alone.
    task: String,
    start: Instant,
    /// Whatever went wrong on a node.
    failures: Mutex<Vec<String>>,
}

impl<C> Schedule<'_, C>
where
    C: Pooled + TaskConnection + MigrationHarness<C::Backend>,
    C::Backend: TaskMigrations,
    SqlQuery: ExecuteDsl<C>,
    statement::RecordRun: ExecuteDsl<C>,
    statement::RanBy: LoadQuery<'static, C, String>,
    statement::RunsOf: LoadQuery<'static, C, (i64, String)>,
    statement::DeleteRuns: ExecuteDsl<C>,
    statement::DeleteLock: ExecuteDsl<C>,
{
    /// The schedule on the database at `url` (`setup`, a pool of it, makes the tables and reads
    /// the runs): whether every tick ran exactly once.
    pub fn run(setup: Pool<ConnectionManager<C>>, url: &str) -> Result<bool, Error> {
        let schedule = Schedule {
            setup,
            url,
            task: format!("report-{}", uuid::Uuid::new_v4().simple()),
            start: timeline_start(),
            failures: Mutex::default(),
        };
        {
            let conn = &mut *schedule.setup.get()?;
            diesel_lease_tasks::run_migrations(conn)?;
            diesel::sql_query(CREATE_RUNS).execute(conn)?;
        }
        println!(
            "task {}: every {PERIOD:?}, {TICKS} times; held at least {AT_LEAST:?}, at most \
             {AT_MOST:?}; lease {LEASE:?}\nnode-b's clock is 120 ms ahead of node-a's, node-c's \
             250 ms; node-c is stopped after tick 5\n",
            schedule.task
        );
        std::thread::scope(|scope| {
            for (node, ahead, ticks) in NODES {
                let schedule = &schedule;
                scope.spawn(move || {
                    if let Err(error) = schedule.node(node, ahead, ticks) {
                        schedule.failed(format!("{node} stopped: {error}"));
                    }
                });
            }
        });
        schedule.check()
    }

    /// One node: at each of its first `ticks` ticks by its own clock, the task, under its lock.
    fn node(&self, node: &'static str, ahead: Duration, ticks: u32) -> Result<(), Error> {
        let pool = support::pool::<C>(self.url, 4)?;
        let locks = TaskLocks::new(pool.clone(), node, Lease::new(LEASE)?)?;
        let hold = Hold::at_most(AT_MOST).at_least(AT_LEAST);
        for tick in 0..ticks {
            // The tick is due at `due` by this node's clock: `ahead` sooner than by node-a's.
            let due = (FIRST_TICK + PERIOD * tick).saturating_sub(ahead);
            std::thread::sleep(due.saturating_sub(self.start.elapsed()));
            self.tick(node, &locks, &pool, hold, tick);
        }
        if ticks < TICKS {
            self.say(node, ticks - 1, "the node is stopped");
        }
        Ok(())
    }

    /// One node's `tick`: the task under its lock, unless the table has the tick already.
    ///
    /// A shortest hold keeps the nodes that fire later out only while their delay stays within
    /// it less the clocks' disagreement (350 ms): a node whose statements waited behind a
    /// stalled COMMIT longer than that takes the lock after the tick ran, and finds the tick in
    /// the table, read under the lock; or it is refused by a late run of the tick before, and
    /// tries again as the lock frees, until the table has the tick (at most a lease).
    fn tick(
        &self,
        node: &'static str,
        locks: &TaskLocks<C>,
        pool: &Pool<ConnectionManager<C>>,
        hold: Hold,
        tick: u32,
    ) {
        let ran_by = |conn: &mut C| -> Result<Option<String>, Error> {
            let ran = runs::table
                .filter(
                    runs::task
                        .eq(self.task.clone())
                        .and(runs::tick.eq(i64::from(tick))),
                )
                .select(runs::node)
                .load(conn)?;
            Ok(ran.into_iter().next())
        };
        let asked = self.start.elapsed();
        let mut refused = false;
        while self.start.elapsed() < asked + LEASE {
            let run = locks.run(&self.task, hold, |task| {
                task.check()?;
                let conn = &mut *pool.get()?;
                if let Some(other) = ran_by(conn)? {
                    return Ok(Some(other));
                }
                diesel::insert_into(runs::table)
                    .values((
                        runs::task.eq(self.task.clone()),
                        runs::tick.eq(i64::from(tick)),
                        runs::node.eq(node),
                    ))
                    .execute(conn)?;
                Ok(None)
            });
            let holder = match run {
                Ok(TaskRun::Ran(None)) => return self.say(node, tick, "ran the task"),
                Ok(TaskRun::Ran(Some(other))) => {
                    return self.say(node, tick, &format!("late: {other} ran it already"))
                }
                Ok(TaskRun::HeldBy(holder)) => holder,
                Err(error) => return self.failed(format!("{node}, tick {tick}: {error}")),
            };
            if !refused {
                refused = true;
                self.say(
                    node,
                    tick,
                    &format!(
                        "refused: {} holds the lock, for {} ms yet",
                        holder.owner,
                        holder.frees_in.as_millis()
                    ),
                );
            }
            match pool
                .get()
                .map_err(Error::from)
                .and_then(|mut conn| ran_by(&mut conn))
            {
                Ok(Some(_)) => return,
                Ok(None) => std::thread::sleep(holder.frees_in.min(Duration::from_millis(50))),
                Err(error) => return self.failed(format!("{node}, tick {tick}: {error}")),
            }
        }
    }

    /// Every tick ran exactly once, as the table of runs has them; the example's rows removed.
    fn check(&self) -> Result<bool, Error> {
        let conn = &mut *self.setup.get()?;
        let ran: Vec<(i64, String)> = runs::table
            .filter(runs::task.eq(self.task.clone()))
            .select((runs::tick, runs::node))
            .load(conn)?;
        println!("\nthe runs, as the database has them:");
        let mut every_tick_once = true;
        for tick in 0..i64::from(TICKS) {
            let nodes: Vec<&str> = ran
                .iter()
                .filter(|(ran, _)| *ran == tick)
                .map(|(_, node)| node.as_str())
                .collect();
            let once = nodes.len() == 1;
            every_tick_once &= once;
            println!(
                "  tick {tick}: {}{}",
                nodes.join(", "),
                if once {
                    ""
                } else {
                    "  <- BROKEN: not exactly once"
                }
            );
        }
        diesel::delete(runs::table.filter(runs::task.eq(self.task.clone()))).execute(conn)?;
        diesel::delete(task_locks::table.filter(task_locks::name.eq(self.task.clone())))
            .execute(conn)?;
        let failures = self.failures.lock().unwrap_or_else(|e| e.into_inner());
        for failure in failures.iter() {
            println!("FAILED: {failure}");
        }
        let clean = every_tick_once && failures.is_empty();
        println!(
            "\n{} ticks, {} runs: {}",
            TICKS,
            ran.len(),
            if clean {
                "every tick ran exactly once"
            } else {
                "BROKEN"
            }
        );
        Ok(clean)
    }

    fn say(&self, node: &str, tick: u32, what: &str) {
        println!(
            "{:>5} ms  {node}  tick {tick}: {what}",
            millis_since(self.start)
        );
    }

    fn failed(&self, what: String) {
        println!("FAILED: {what}");
        self.failures
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(what);
    }
}
