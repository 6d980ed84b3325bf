// Batch claims under contention, on every backend, included by tests/lease.rs: 16 workers drain a
// queue in batches, and a batch comes back empty only when no job is due and free. Queue workers
// sleep or stop at an empty batch; one that came while jobs were free would starve them.
use diesel::prelude::*;
use diesel_lease::prelude::*;

use crate::common::jobs::lease_jobs;
use crate::common::race;

const WORKERS: usize = 16;

/// What a drain saw: how many batch claims ran, and how many came back empty while more jobs
/// were queued than the other workers' batches could hold (so some were due and free).
#[derive(Debug, Default)]
struct Drained {
    batches: usize,
    empty_while_free: usize,
}

/// `jobs` new jobs drained by `WORKERS` workers in batches of `size`, each batch finished at once.
fn drain_in_batches(size: usize, jobs: usize) -> Drained {
    let (pattern, _) = super::support::queued_run(&mut super::support::connection(), jobs);
    let queued = |conn: &mut backend::Conn| super::support::queued_in(conn, &pattern);
    // Rows other workers' claims may have locked and not yet committed still read as queued.
    let in_flight = ((WORKERS - 1) * size) as i64;
    let pool = backend::pool_of(WORKERS as u32);
    let seen = race(&pool, WORKERS, |worker, conn| {
        let mut seen = Drained::default();
        for _ in 0..10_000 {
            let batch = super::support::claim_queued(conn, &pattern, size, worker);
            seen.batches += 1;
            if batch.is_empty() {
                match queued(conn) {
                    0 => return seen,
                    left if left > in_flight => seen.empty_while_free += 1,
                    _ => {}
                }
                continue;
            }
            let finished = batch
                .release()
                .set(lease_jobs::status.eq("done"))
                .run(conn)
                .unwrap();
            assert_eq!(finished.len(), batch.len(), "a batch finishes whole");
        }
        panic!("worker {worker} never saw the queue drained");
    });
    seen.into_iter()
        .fold(Drained::default(), |all, one| Drained {
            batches: all.batches + one.batches,
            empty_while_free: all.empty_while_free + one.empty_while_free,
        })
}

#[test]
fn sixteen_workers_claiming_batches_of_ten_get_an_empty_one_only_when_nothing_is_free() {
    let drained = drain_in_batches(10, 2_000);
    assert!(
        drained.empty_while_free * 100 <= drained.batches,
        "at most 1% of batches empty while jobs were due and free: {drained:?}"
    );
}

#[test]
fn sixteen_workers_claiming_batches_of_a_hundred_get_an_empty_one_only_when_nothing_is_free() {
    let drained = drain_in_batches(100, 6_000);
    assert!(
        drained.empty_while_free * 100 <= drained.batches,
        "at most 1% of batches empty while jobs were due and free: {drained:?}"
    );
}
