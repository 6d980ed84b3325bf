// What the scenarios of the lease, keeper and events binaries share on one backend (`backend`,
// the backend's support module): the jobs table's rows, made, read, aged and claimed.
use std::time::Duration;

use diesel::prelude::*;
use diesel_lease::prelude::*;
use diesel_lease::{testkit, HeldRows};

use crate::common::jobs::{lease_jobs, Job};
use crate::common::{by_key_alone, unique_id};

pub type Pool = diesel::r2d2::Pool<diesel::r2d2::ConnectionManager<backend::Conn>>;
pub type Pooled = diesel::r2d2::PooledConnection<diesel::r2d2::ConnectionManager<backend::Conn>>;

/// A connection of the shared pool.
pub fn connection() -> Pooled {
    backend::pool().get().expect("a pooled connection")
}

pub fn minute() -> Lease {
    Lease::from_secs(60).expect("a lease")
}

/// New jobs `ids`, in `status`.
fn insert_jobs(conn: &mut backend::Conn, ids: &[String], status: &str) {
    let rows: Vec<_> = ids
        .iter()
        .map(|id| (lease_jobs::id.eq(id), lease_jobs::status.eq(status)))
        .collect();
    for rows in rows.chunks(500) {
        diesel::insert_into(lease_jobs::table)
            .values(rows)
            .execute(conn)
            .expect("insert jobs");
    }
}

/// `count` new jobs in `status`, by id.
pub fn queued_jobs(conn: &mut backend::Conn, count: usize, status: &str) -> Vec<String> {
    let ids: Vec<String> = (0..count).map(|_| unique_id("job")).collect();
    insert_jobs(conn, &ids, status);
    ids
}

pub fn queued_job(conn: &mut backend::Conn) -> String {
    queued_jobs(conn, 1, "queued").remove(0)
}

pub fn job(conn: &mut backend::Conn, id: &str) -> Job {
    lease_jobs::table
        .find(id)
        .select(Job::as_select())
        .first(conn)
        .expect("read job")
}

/// Moves the leases of jobs `ids` back by `age`, as if they had been claimed `age` ago: time
/// passing for the rows, by the database's clock. One row at a time, by its key
/// ([`crate::common::by_key_alone`]).
pub fn age_jobs(conn: &mut backend::Conn, ids: &[String], age: Duration) {
    let age = Age::new(age).expect("an age");
    by_key_alone(conn, ids, |conn, id| {
        diesel::update(lease_jobs::table.find(id))
            .set(lease_jobs::table.renewed_ago(age))
            .execute(conn)
    });
}

pub fn age(conn: &mut backend::Conn, id: &str, age: Duration) {
    age_jobs(conn, &[id.to_owned()], age);
}

/// Claims every one of the free jobs `ids` for `claim`, setting them running: one batch claim,
/// and another for any row it passed by. A batch claim passes by a row that another statement
/// holds locked at that moment (`SKIP LOCKED`: a concurrent test's locking read, on
/// MySQL/MariaDB), so one batch may win fewer of the rows it names than are free; a later one
/// wins them. Gives back the jobs as the claim holds them.
pub fn claim_all(
    conn: &mut backend::Conn,
    ids: &[String],
    claim: &Claim,
    lease: Lease,
) -> HeldRows<lease_jobs::table> {
    let mut left = ids.to_vec();
    for _ in 0..100 {
        if left.is_empty() {
            return lease_jobs::table.held_rows(claim, ids.to_vec());
        }
        // Short key lists: MariaDB scans for 1,000 or more, locking what it scans.
        let names = &left[..left.len().min(500)];
        let batch = lease_jobs::table
            .claim_batch(names.len(), lease)
            .by(claim)
            .filter(lease_jobs::id.eq_any(names))
            .set(lease_jobs::status.eq("running"))
            .returning(lease_jobs::id)
            .run::<String>(conn)
            .expect("a batch claim");
        left.retain(|id| !batch.keys().contains(id));
    }
    panic!("{} of the free jobs were never won: {left:?}", left.len());
}

/// Claims the free jobs `ids` for a new claim of `owner`, and moves their leases `age` back.
pub fn claimed_and_aged(
    conn: &mut backend::Conn,
    ids: &[String],
    owner: &str,
    age: Duration,
) -> HeldRows<lease_jobs::table> {
    let held = claim_all(conn, ids, &Claim::new(owner).expect("an owner"), minute());
    let age = Age::new(age).expect("an age");
    // The kit's ageing, guarded by the claim's token, one row a statement (`by_key_alone`).
    by_key_alone(conn, ids, |conn, id| {
        let row = lease_jobs::table.held_rows(held.claim(), vec![id.clone()]);
        testkit::age(row, age).run(conn).map(|aged| aged.len())
    });
    held
}

/// `count` new queued jobs whose ids share a prefix of their own, in order, and the `LIKE`
/// pattern that finds them: a filter that names more rows than a key list should (on MariaDB, a
/// list of 1,000 keys or more is a scan that locks every row it reads, other tests' included).
pub fn queued_run(conn: &mut backend::Conn, count: usize) -> (String, Vec<String>) {
    let prefix = unique_id("run");
    let ids: Vec<String> = (0..count).map(|n| format!("{prefix}-{n:05}")).collect();
    insert_jobs(conn, &ids, "queued");
    (format!("{prefix}-%"), ids)
}

/// How many of the jobs `pattern` finds are still queued.
pub fn queued_in(conn: &mut backend::Conn, pattern: &str) -> i64 {
    lease_jobs::table
        .filter(lease_jobs::id.like(pattern))
        .filter(lease_jobs::status.eq("queued"))
        .count()
        .get_result(conn)
        .expect("count the queued jobs")
}

/// A batch claim by worker `worker` of up to `size` of the queued jobs `pattern` finds, in id
/// order, set running.
pub fn claim_queued(
    conn: &mut backend::Conn,
    pattern: &str,
    size: usize,
    worker: usize,
) -> diesel_lease::Batch<String, lease_jobs::table> {
    lease_jobs::table
        .claim_batch(size, minute())
        .by(&Claim::new(&format!("worker-{worker}")).expect("a claim"))
        .filter(lease_jobs::id.like(pattern))
        .filter(lease_jobs::status.eq("queued"))
        .order_by(lease_jobs::id)
        .set(lease_jobs::status.eq("running"))
        .returning(lease_jobs::id)
        .run::<String>(conn)
        .expect("no claim errors")
}

/// Runs `change` when the connection it is set on starts its first read after an `UPDATE` (the
/// read of why after a refused claim), before that read runs: the change lands between the claim
/// and its read, by the order of the calls.
pub struct BeforeTheRead {
    change: Option<Box<dyn FnOnce() + Send>>,
    claimed: bool,
}

impl BeforeTheRead {
    pub fn new(change: impl FnOnce() + Send + 'static) -> Self {
        Self {
            change: Some(Box::new(change)),
            claimed: false,
        }
    }
}

impl diesel::connection::Instrumentation for BeforeTheRead {
    fn on_connection_event(&mut self, event: diesel::connection::InstrumentationEvent<'_>) {
        use diesel::connection::InstrumentationEvent;
        match event {
            InstrumentationEvent::FinishQuery { query, .. } => {
                self.claimed |= query.to_string().trim_start().starts_with("UPDATE");
            }
            InstrumentationEvent::StartQuery { query, .. }
                if self.claimed && query.to_string().trim_start().starts_with("SELECT") =>
            {
                if let Some(change) = self.change.take() {
                    change();
                }
            }
            _ => {}
        }
    }
}
