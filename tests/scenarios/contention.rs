// Batch claims under contention, on every backend, included by tests/lease.rs: 16 workers drain a
// queue in batches, and a batch comes back empty only when no job is due and free. Queue workers
// sleep or stop at an empty batch; one that came while jobs were free would starve them. The
// queue is `lease_jobs`, and `indexed_jobs`, the same with an index on its status column, which
// changes the plans of the claim's reads.
use diesel::prelude::*;
use diesel_lease::prelude::*;

use crate::common::race;
use crate::common::unique_id;

const WORKERS: usize = 16;

/// What a drain saw: how many batch claims ran, and how many came back empty while more jobs
/// were queued than the other workers' batches could hold (so some were due and free).
#[derive(Debug, Default)]
struct Drained {
    batches: usize,
    empty_while_free: usize,
}

impl Drained {
    fn add(self, other: Drained) -> Drained {
        Drained {
            batches: self.batches + other.batches,
            empty_while_free: self.empty_while_free + other.empty_while_free,
        }
    }

    /// At most 1% of the batch claims came back empty while jobs were due and free.
    fn assert_empty_only_when_nothing_is_free(&self) {
        assert!(
            self.empty_while_free * 100 <= self.batches,
            "at most 1% of batches empty while jobs were due and free: {self:?}"
        );
    }
}

/// The drain of a queue in `$table`, and its scenarios at batches of 10 and 100.
macro_rules! drained_queue {
    ($table:ident) => {
        use super::*;
        use crate::common::jobs::$table;

        /// `jobs` new jobs drained by `WORKERS` workers in batches of `size`, each batch finished
        /// at once.
        fn drain_in_batches(size: usize, jobs: usize) -> Drained {
            let pattern = format!("{}-%", unique_id("run"));
            let rows: Vec<_> = (0..jobs)
                .map(|n| {
                    (
                        $table::id.eq(pattern.replace('%', &format!("{n:05}"))),
                        $table::status.eq("queued"),
                    )
                })
                .collect();
            let conn = &mut super::super::support::connection();
            for rows in rows.chunks(500) {
                diesel::insert_into($table::table)
                    .values(rows)
                    .execute(conn)
                    .unwrap();
            }
            let queued = |conn: &mut backend::Conn| -> i64 {
                $table::table
                    .filter($table::id.like(&pattern))
                    .filter($table::status.eq("queued"))
                    .count()
                    .get_result(conn)
                    .unwrap()
            };
            // Rows other workers' claims may have locked and not yet committed still read as
            // queued.
            let in_flight = ((WORKERS - 1) * size) as i64;
            let pool = backend::pool_of(WORKERS as u32);
            let seen = race(&pool, WORKERS, |worker, conn| {
                let claim = Claim::new(&format!("worker-{worker}")).unwrap();
                let mut seen = Drained::default();
                for _ in 0..10_000 {
                    let batch = $table::table
                        .claim_batch(size, Lease::from_secs(60).unwrap())
                        .by(&claim)
                        .filter($table::id.like(&pattern))
                        .filter($table::status.eq("queued"))
                        .order_by($table::id)
                        .set($table::status.eq("running"))
                        .returning($table::id)
                        .run::<String>(conn)
                        .expect("no claim errors");
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
                        .set($table::status.eq("done"))
                        .run(conn)
                        .unwrap();
                    assert_eq!(finished.len(), batch.len(), "a batch finishes whole");
                }
                panic!("worker {worker} never saw the queue drained");
            });
            seen.into_iter().fold(Drained::default(), Drained::add)
        }

        #[test]
        fn sixteen_workers_claiming_batches_of_ten_get_an_empty_one_only_when_nothing_is_free() {
            drain_in_batches(10, 2_000).assert_empty_only_when_nothing_is_free();
        }

        #[test]
        fn sixteen_workers_claiming_batches_of_a_hundred_get_an_empty_one_only_when_nothing_is_free(
        ) {
            drain_in_batches(100, 6_000).assert_empty_only_when_nothing_is_free();
        }
    };
}

mod without_a_status_index {
    use super::backend;
    drained_queue!(lease_jobs);
}

mod with_a_status_index {
    use super::backend;
    drained_queue!(indexed_jobs);
}
