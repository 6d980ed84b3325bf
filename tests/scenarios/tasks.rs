// The scheduled-task locks' scenarios, included once per backend by tests/tasks.rs, and through
// PgBouncer by tests/pooler.rs: `backend` names the backend's support module. In the spirit of
// ShedLock's shared suite of lock providers: the lock made by the first run, a second run
// refused while the first runs, a relock after an unlock, the longest and the shortest holds
// (its fuzzes, of threads and of processes counting under the lock, are scenarios/tasks_fuzz.rs).
// Time passes for a lock by ageing its row by the database's clock, never by sleeping a lease.
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use diesel::prelude::*;
use diesel::r2d2::{ConnectionManager, Pool};
use diesel_lease::__private::DatabaseTime;
use diesel_lease::{
    Age, ClaimLease, Error as LeaseError, Lease, LeaseHolder, LossReason, RunLeaseDsl,
};
use diesel_lease_tasks::schema::task_locks;
use diesel_lease_tasks::{Error, Hold, TaskError, TaskLocks, TaskRun};

use crate::common::{eventually, race, unique_id};

type TaskPool = Pool<ConnectionManager<backend::Conn>>;

const LEASE: Duration = Duration::from_secs(30);
/// Longer than any scenario runs: a hold that does not end while it runs.
const LONG: Duration = Duration::from_secs(600);

fn locks_on(pool: TaskPool, node: &str) -> TaskLocks<backend::Conn> {
    TaskLocks::new(pool, node, Lease::new(LEASE).unwrap()).unwrap()
}

fn locks(node: &str) -> TaskLocks<backend::Conn> {
    locks_on(backend::pool(), node)
}

fn task() -> String {
    unique_id("task")
}

/// A hold that neither ends while a scenario runs nor holds the lock past its run.
fn hold() -> Hold {
    Hold::at_most(LONG)
}

/// A hold that keeps the lock after the run, for as long as a scenario runs.
fn held_on() -> Hold {
    Hold::at_most(LONG).at_least(LONG)
}

/// A run of `name` on `node` whose task does nothing.
fn run_nothing(node: &TaskLocks<backend::Conn>, name: &str, hold: Hold) -> TaskRun<()> {
    node.run(name, hold, |_| Ok(())).unwrap()
}

/// Whether a run of a fuzz ran its task: not when another run held the lock, nor when the lock
/// changed hands again and again while it tried to take it (another run ran the task then).
fn ran(run: Result<TaskRun<()>, Error>) -> bool {
    match run {
        Ok(TaskRun::Ran(())) => true,
        Ok(TaskRun::HeldBy(_)) | Err(Error::Contended(_)) => false,
        Err(error) => panic!("a run failed: {error}"),
    }
}

/// Who holds the lock, by a run that was refused.
fn holder(run: TaskRun<()>) -> LeaseHolder {
    match run {
        TaskRun::HeldBy(holder) => holder,
        TaskRun::Ran(()) => panic!("the task ran: its lock was free"),
    }
}

/// `(locked_by, lock_token)` of the task's lock, or `None` when the task has no row.
fn lock_row(name: &str) -> Option<(Option<String>, Option<String>)> {
    task_locks::table
        .find(name)
        .select((task_locks::locked_by, task_locks::lock_token))
        .first(&mut *backend::pool().get().unwrap())
        .optional()
        .unwrap()
}

/// The node whose run holds the task's lock (or held it last, within its shortest hold).
fn lock_owner(name: &str) -> Option<String> {
    lock_row(name).and_then(|(node, _)| node)
}

/// Dates the task's lock as renewed `age` ago by the database's clock: time passing for it.
fn age_lock(name: &str, age: Duration) {
    let aged = diesel::update(task_locks::table.find(name))
        .set(task_locks::table.renewed_ago(Age::new(age).unwrap()))
        .execute(&mut *backend::pool().get().unwrap())
        .unwrap();
    assert_eq!(aged, 1, "the task's row");
}

fn past_the_lease() -> Duration {
    LEASE + Duration::from_secs(1)
}

#[test]
fn the_first_run_makes_the_lock_and_runs_the_task() {
    let (node, name) = (locks("node-a"), task());
    assert_eq!(lock_row(&name), None, "no lock before the task's first run");

    let run = node.run(&name, hold(), |task| {
        assert_eq!(task.name(), name);
        assert_eq!(
            lock_owner(&name).as_deref(),
            Some("node-a"),
            "the run holds the lock it made"
        );
        Ok(7)
    });

    assert_eq!(run.unwrap(), TaskRun::Ran(7));
    assert_eq!(
        lock_row(&name),
        Some((None, None)),
        "released as the run ended"
    );
}

#[test]
fn a_task_whose_name_differs_only_in_case_is_another_task() {
    let (node_a, node_b) = (locks("node-a"), locks("node-b"));
    let name = task();
    let other = name.to_uppercase();

    assert_eq!(run_nothing(&node_a, &name, held_on()), TaskRun::Ran(()));
    assert_eq!(run_nothing(&node_b, &other, held_on()), TaskRun::Ran(()));
    assert_eq!(
        holder(run_nothing(&node_b, &name, held_on())).owner,
        "node-a"
    );
    assert_eq!(lock_owner(&other).as_deref(), Some("node-b"));
}

#[test]
fn first_runs_on_many_nodes_at_once_make_one_lock_and_fail_none() {
    const NODES: usize = 8;
    let pool = backend::pool_of(3 * NODES as u32);
    let nodes: Vec<_> = (0..NODES)
        .map(|node| locks_on(pool.clone(), &format!("node-{node}")))
        .collect();
    for _ in 0..5 {
        let name = task();
        // Each finds no row, and makes it: the rows of the others are as good as its own.
        let runs = race(&pool, NODES, |node, _| {
            run_nothing(&nodes[node], &name, held_on())
        });
        let ran = runs.iter().filter(|run| **run == TaskRun::Ran(())).count();
        assert_eq!(ran, 1, "{runs:?}");
    }
}

#[test]
fn a_second_run_while_the_first_runs_is_refused_and_says_who_holds_the_lock() {
    let (node_a, node_b, name) = (locks("node-a"), locks("node-b"), task());
    let refused_ran = AtomicBool::new(false);

    let run = node_a.run(&name, hold(), |task| {
        let (_, token) = lock_row(&name).unwrap();
        // Another node's run, and another run of this node: the lock is the first run's.
        for rival in [&node_b, &node_a] {
            let refused = rival.run(&name, hold(), |_| {
                refused_ran.store(true, Ordering::SeqCst);
                Ok(())
            })?;
            let holder = holder(refused);
            assert_eq!(
                (Some(holder.owner.as_str()), Some(holder.token.as_str())),
                (Some("node-a"), token.as_deref())
            );
            assert!(holder.frees_in <= LEASE, "{holder:?}");
        }
        task.check()?;
        Ok("the first run")
    });

    assert_eq!(run.unwrap(), TaskRun::Ran("the first run"));
    assert!(
        !refused_ran.load(Ordering::SeqCst),
        "a refused run never runs its task"
    );
}

#[test]
fn a_released_lock_is_taken_again_by_the_same_node_and_by_another() {
    let (node_a, node_b, name) = (locks("node-a"), locks("node-b"), task());

    assert_eq!(run_nothing(&node_a, &name, hold()), TaskRun::Ran(()));
    assert_eq!(run_nothing(&node_a, &name, hold()), TaskRun::Ran(()));
    assert_eq!(run_nothing(&node_b, &name, hold()), TaskRun::Ran(()));
    assert_eq!(lock_row(&name), Some((None, None)));
}

#[test]
fn a_task_longer_than_the_lease_keeps_its_lock_renewed_by_the_keeper() {
    // A short lease, so that the keeper's renewals (every third of it) come soon.
    let lease = Lease::from_secs(6).unwrap();
    let node_a = TaskLocks::new(backend::pool(), "node-a", lease).unwrap();
    let node_b = TaskLocks::new(backend::pool(), "node-b", lease).unwrap();
    let name = task();
    let fresh = || -> bool {
        let fresh: i64 = task_locks::table
            .find(&name)
            .filter(task_locks::table.fresh(lease))
            .count()
            .get_result(&mut *backend::pool().get().unwrap())
            .unwrap();
        fresh == 1
    };

    let run = node_a.run(&name, hold(), |task| {
        // As if the task had run past its lease, twice: only renewals make the lock fresh again.
        for _ in 0..2 {
            age_lock(&name, lease.as_duration() + Duration::from_secs(1));
            eventually("the keeper renews the lock", &fresh);
        }
        assert_eq!(holder(run_nothing(&node_b, &name, hold())).owner, "node-a");
        task.check()?;
        Ok("a long task")
    });

    assert_eq!(run.unwrap(), TaskRun::Ran("a long task"));
}

#[test]
fn a_run_past_its_longest_hold_loses_its_lock_which_another_node_takes_once_the_lease_has_run_out()
{
    let (node_a, node_b, name) = (locks("node-a"), locks("node-b"), task());
    let longest = Hold::at_most(Duration::from_millis(100));

    let run = node_a.run(&name, longest, |task| {
        // The task hangs past its longest hold: the keeper stops renewing the lock, and says so.
        eventually("the longest hold passes", || !task.is_held());
        match task.check() {
            Err(Error::LockLost(lost)) => assert_eq!(lost.reason, LossReason::LongestHold),
            other => panic!("expected the lock lost, got {other:?}"),
        }
        // Not renewed, the lock is still the run's until it has outlived the lease.
        assert_eq!(holder(run_nothing(&node_b, &name, hold())).owner, "node-a");
        age_lock(&name, past_the_lease());
        assert_eq!(run_nothing(&node_b, &name, held_on()), TaskRun::Ran(()));
        Ok("finished, late")
    });

    // The hung run ends at last: never a clean run, and its release leaves node B's lock alone.
    match run {
        Err(Error::LockLost(lost)) => assert_eq!(lost.reason, LossReason::LongestHold),
        other => panic!("expected the lock lost, got {other:?}"),
    }
    assert_eq!(lock_owner(&name).as_deref(), Some("node-b"));
}

#[test]
fn a_lost_lock_the_task_passes_on_comes_back_as_itself_and_its_own_error_as_the_task_s() {
    let (node, name) = (locks("node-a"), task());
    let run = node.run(&name, Hold::at_most(Duration::from_millis(100)), |task| {
        eventually("the longest hold passes", || !task.is_held());
        task.check()?;
        Ok("not reached")
    });
    match run {
        Err(Error::LockLost(lost)) => assert_eq!(lost.reason, LossReason::LongestHold),
        other => panic!("expected the lock lost, got {other:?}"),
    }

    let failed = node.run(&task(), hold(), |_| Err::<(), _>("no file".into()));
    assert!(
        matches!(&failed, Err(Error::Task(own)) if own.to_string() == "no file"),
        "{failed:?}"
    );
}

#[test]
fn a_run_whose_lock_was_taken_over_is_never_a_clean_run() {
    let (node_a, node_b, name) = (locks("node-a"), locks("node-b"), task());

    let run = node_a.run(&name, hold(), |_| {
        // The run pauses past its lease before its keeper renews the lock: another node takes
        // it. The keeper's first round runs when its thread starts, late on a busy machine, and
        // may renew the lock between the ageing and node B's claim (seen once in the repeated
        // runs of the concurrency scenarios, on SQLite under load): the lock is aged again
        // until node B takes it, which the next round, a third of the lease later, cannot undo.
        eventually(
            "node B takes the lock once it has outlived the lease",
            || {
                age_lock(&name, past_the_lease());
                run_nothing(&node_b, &name, held_on()) == TaskRun::Ran(())
            },
        );
        Ok("done, as it believes")
    });

    match run {
        Err(Error::LockLost(lost)) => assert_eq!(lost.reason, LossReason::TakenOver),
        other => panic!("expected the lock lost, got {other:?}"),
    }
    assert_eq!(
        lock_owner(&name).as_deref(),
        Some("node-b"),
        "node A's release left node B's lock alone"
    );
}

#[test]
fn a_run_that_ends_before_its_shortest_hold_keeps_the_lock_until_it_has_passed() {
    let (node_a, node_b) = (locks("node-a"), locks("node-b"));
    // Shorter than the lease: the lock is dated back; longer: dated to come.
    for at_least in [Duration::from_secs(10), LONG] {
        let name = task();
        let hold = Hold::at_most(LONG).at_least(at_least);

        assert_eq!(
            run_nothing(&node_a, &name, hold),
            TaskRun::Ran(()),
            "done at once"
        );

        for rival in [&node_b, &node_a] {
            let holder = holder(run_nothing(rival, &name, hold));
            assert_eq!(holder.owner, "node-a");
            assert!(holder.frees_in <= at_least, "{holder:?}");
            if at_least > LEASE {
                assert!(holder.frees_in > LEASE, "held past the lease: {holder:?}");
            }
        }
        age_lock(&name, past_the_lease());
        assert_eq!(
            run_nothing(&node_b, &name, hold),
            TaskRun::Ran(()),
            "once the shortest hold has passed"
        );
    }
}

#[test]
fn a_run_longer_than_its_shortest_hold_frees_the_lock_as_it_ends() {
    let (node_a, node_b, name) = (locks("node-a"), locks("node-b"), task());
    let at_least = Duration::from_millis(200);
    let hold = Hold::at_most(LONG).at_least(at_least);

    let run = node_a.run(&name, hold, |_| {
        let conn = &mut *backend::pool().get().unwrap();
        let start: i64 = DatabaseTime.run(conn).unwrap();
        let end = start + i64::try_from(at_least.as_micros()).unwrap();
        eventually("the shortest hold passes, by the database's clock", || {
            DatabaseTime.run::<i64>(conn).unwrap() > end
        });
        Ok(())
    });

    assert_eq!(run.unwrap(), TaskRun::Ran(()));
    assert_eq!(lock_row(&name), Some((None, None)));
    assert_eq!(run_nothing(&node_b, &name, hold), TaskRun::Ran(()));
}

#[test]
fn the_shortest_hold_holds_when_the_task_fails_or_panics() {
    let (node_a, node_b) = (locks("node-a"), locks("node-b"));
    let hold = held_on();

    let name = task();
    let failed = node_a.run(&name, hold, |_| Err::<(), _>("the task failed".into()));
    assert_eq!(failed.unwrap_err().to_string(), "the task failed");
    let held = holder(run_nothing(&node_b, &name, hold));
    assert!(held.owner == "node-a" && held.frees_in > LEASE, "{held:?}");

    let name = task();
    let panicked = catch_unwind(AssertUnwindSafe(|| {
        node_a.run(&name, hold, |_| -> Result<(), TaskError> {
            panic!("the task panicked")
        })
    }));
    assert!(panicked.is_err(), "the panic goes on unwinding");
    let held = holder(run_nothing(&node_b, &name, hold));
    assert!(held.owner == "node-a" && held.frees_in > LEASE, "{held:?}");
}

#[test]
fn a_task_that_fails_or_panics_frees_its_lock_without_a_shortest_hold() {
    let (node_a, node_b) = (locks("node-a"), locks("node-b"));

    let name = task();
    let failed = node_a.run(&name, hold(), |_| Err::<(), _>("the task failed".into()));
    assert!(failed.is_err());
    assert_eq!(lock_row(&name), Some((None, None)));

    let name = task();
    let panicked = catch_unwind(AssertUnwindSafe(|| {
        node_a.run(&name, hold(), |_| -> Result<(), TaskError> {
            panic!("the task panicked")
        })
    }));
    assert!(panicked.is_err());
    assert_eq!(
        lock_row(&name),
        Some((None, None)),
        "released as it unwound"
    );
    assert_eq!(run_nothing(&node_b, &name, hold()), TaskRun::Ran(()));
}

#[test]
fn a_hold_no_keeper_keeps_a_bad_name_or_a_bad_node_is_refused_before_anything_is_written() {
    let (node, name) = (locks("node-a"), task());
    let ran = AtomicBool::new(false);
    let run = |name: &str, hold: Hold| {
        node.run(name, hold, |_| {
            ran.store(true, Ordering::SeqCst);
            Ok(())
        })
    };

    let longer_least_than_most =
        Hold::at_most(Duration::from_secs(60)).at_least(Duration::from_secs(120));
    for bad_hold in [longer_least_than_most, Hold::at_most(Duration::ZERO)] {
        match run(&name, bad_hold) {
            Err(Error::Lease(LeaseError::InvalidSettings(_))) => {}
            other => panic!("{bad_hold:?}: expected invalid settings, got {other:?}"),
        }
    }
    for bad in ["", " padded", "a\tb", &"x".repeat(256)] {
        assert!(
            matches!(run(bad, hold()), Err(Error::InvalidName(_))),
            "{bad:?}"
        );
    }
    assert!(matches!(
        TaskLocks::new(backend::pool(), "", Lease::new(LEASE).unwrap()),
        Err(Error::Lease(LeaseError::InvalidOwner(_)))
    ));
    assert!(!ran.load(Ordering::SeqCst));
    assert_eq!(lock_row(&name), None, "nothing written");
}
