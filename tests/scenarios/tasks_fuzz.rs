// The fuzzes of ShedLock's suite, included once per backend by tests/tasks.rs (and through
// PgBouncer by tests/pooler.rs) after scenarios/tasks.rs, whose helpers it uses: threads, then
// processes, each run of a task adding to a counter under its lock by a read then a write; the
// counter says how many runs ran, no addition lost.
use std::process::{Command, Stdio};
use std::sync::OnceLock;

diesel::table! {
    /// Counters the scenarios add to under a task's lock.
    task_counters (name) {
        name -> Text,
        value -> BigInt,
    }
}

/// How many runs each thread or process of a fuzz makes.
const FUZZ_RUNS: usize = 20;
/// How many processes the fuzz of processes starts.
const FUZZ_PROCESSES: usize = 4;
/// Set in a child process of the fuzz of processes: it is a worker, and this is its work.
const WORKER: &str = "DIESEL_LEASE_TASKS_WORKER";

/// A new counter at 0, in a table made anew once per test process (never by a worker).
fn new_counter() -> String {
    static MADE: OnceLock<()> = OnceLock::new();
    let conn = &mut *backend::pool().get().unwrap();
    MADE.get_or_init(|| {
        for statement in [
            "DROP TABLE IF EXISTS task_counters",
            "CREATE TABLE task_counters (name VARCHAR(255) PRIMARY KEY, value BIGINT NOT NULL)",
        ] {
            diesel::sql_query(statement).execute(conn).unwrap();
        }
    });
    let name = unique_id("counter");
    diesel::insert_into(task_counters::table)
        .values((task_counters::name.eq(&name), task_counters::value.eq(0)))
        .execute(conn)
        .unwrap();
    name
}

fn counter_value(conn: &mut backend::Conn, counter: &str) -> i64 {
    task_counters::table
        .find(counter)
        .select(task_counters::value)
        .first(conn)
        .unwrap()
}

/// Adds one to `counter` by a read, then a write of what was read plus one: two runs at once
/// would both read the same value, and one addition would be lost.
fn add_one_by_read_then_write(conn: &mut backend::Conn, counter: &str) {
    let value = counter_value(conn, counter);
    diesel::update(task_counters::table.find(counter))
        .set(task_counters::value.eq(value + 1))
        .execute(conn)
        .unwrap();
}

/// Adds one to `counter` in one statement, whatever else runs.
fn add_one(conn: &mut backend::Conn, counter: &str) {
    diesel::update(task_counters::table.find(counter))
        .set(task_counters::value.eq(task_counters::value + 1))
        .execute(conn)
        .unwrap();
}

#[test]
fn a_fuzz_of_threads_adds_once_for_each_run_that_ran_and_loses_no_addition() {
    const THREADS: usize = 8;
    let pool = backend::pool_of(4 * THREADS as u32);
    let (name, counter) = (task(), new_counter());
    // Four nodes of two threads each: a node's locks are shared by its threads.
    let nodes: Vec<_> = (0..THREADS / 2)
        .map(|node| locks_on(pool.clone(), &format!("node-{node}")))
        .collect();

    let ran_per_thread = race(&pool, THREADS, |thread, conn| {
        let node = &nodes[thread / 2];
        (0..FUZZ_RUNS)
            .filter(|_| {
                ran(node.run(&name, hold(), |task| {
                    add_one_by_read_then_write(conn, &counter);
                    Ok(task.check()?)
                }))
            })
            .count()
    });

    let ran: usize = ran_per_thread.iter().sum();
    assert!(ran > 0, "no run ran");
    let total = counter_value(&mut pool.get().unwrap(), &counter);
    assert_eq!(
        total, ran as i64,
        "{ran} runs ran, the counter says {total}"
    );
}

#[test]
fn a_fuzz_of_processes_adds_once_for_each_run_that_ran_and_loses_no_addition() {
    if let Ok(work) = std::env::var(WORKER) {
        return work_as_a_worker(&work);
    }
    let (name, counter, ready) = (task(), new_counter(), new_counter());
    // This test again, alone, in each child: its path within the test binary.
    let (_, module) = module_path!().split_once("::").unwrap();
    let test = format!(
        "{module}::a_fuzz_of_processes_adds_once_for_each_run_that_ran_and_loses_no_addition"
    );
    let workers: Vec<String> = (0..FUZZ_PROCESSES).map(|_| new_counter()).collect();

    let children: Vec<_> = workers
        .iter()
        .enumerate()
        .map(|(worker, own)| {
            let work = [
                backend::url(),
                &name,
                &counter,
                &ready,
                own,
                &worker.to_string(),
            ];
            Command::new(std::env::current_exe().unwrap())
                .args([test.as_str(), "--exact", "--nocapture", "--test-threads=1"])
                .env(WORKER, work.join("\n"))
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let output = child.wait_with_output().unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success() && stdout.contains("1 passed"),
            "a worker failed, or ran no test:\n{stdout}\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }

    let conn = &mut *backend::pool().get().unwrap();
    let ran: i64 = workers.iter().map(|own| counter_value(conn, own)).sum();
    assert!(ran > 0, "no run ran");
    let total = counter_value(conn, &counter);
    assert_eq!(total, ran, "{ran} runs ran, the counter says {total}");
}

/// A child process of the fuzz of processes: once every worker is ready, runs the task
/// [`FUZZ_RUNS`] times, adding to the shared counter and to its own for each run that ran.
fn work_as_a_worker(work: &str) {
    let [url, name, counter, ready, own, worker] = work.split('\n').collect::<Vec<_>>()[..] else {
        panic!("a worker's work: {work:?}");
    };
    let pool = backend::worker_pool(url, 6);
    let node = locks_on(pool.clone(), &format!("process-{worker}"));
    let conn = &mut *pool.get().unwrap();
    add_one(conn, ready);
    eventually("every worker ready", || {
        counter_value(conn, ready) == FUZZ_PROCESSES as i64
    });
    for _ in 0..FUZZ_RUNS {
        // The runs that ran are counted in the database.
        ran(node.run(name, hold(), |task| {
            add_one_by_read_then_write(conn, counter);
            add_one(conn, own);
            Ok(task.check()?)
        }));
    }
}
