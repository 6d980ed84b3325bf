//! Measurement 8's workers, stamped into the module of each backend: the queue, the library's,
//! the hand-written and the naive claims, and threads draining the queue.
macro_rules! workers {
    () => {

        pub fn setup(conn: &mut Conn) -> Res<()> {
            diesel::sql_query("DROP TABLE IF EXISTS bench_jobs").execute(conn)?;
            for ddl in sql::DDL {
                diesel::sql_query(*ddl).execute(conn)?;
            }
            Ok(())
        }

        pub fn teardown(conn: &mut Conn) -> Res<()> {
            diesel::sql_query("DROP TABLE IF EXISTS bench_jobs").execute(conn)?;
            Ok(())
        }

        /// A fresh queue: jobs 1..=`jobs`, all queued.
        pub fn fill(conn: &mut Conn, jobs: usize) -> Res<()> {
            diesel::sql_query(sql::EMPTY).execute(conn)?;
            let mut first = 1;
            while first <= jobs {
                let last = (first + 999).min(jobs);
                let values: Vec<String> = (first..=last).map(|id| format!("({id}, 'queued')")).collect();
                diesel::sql_query(format!("INSERT INTO bench_jobs (id, status) VALUES {}", values.join(", ")))
                    .execute(conn)?;
                first = last + 1;
            }
            if let Some(after) = sql::AFTER_FILL {
                diesel::sql_query(after).execute(conn)?;
            }
            Ok(())
        }

        /// Jobs 1..=`last` queued and unclaimed again.
        fn free(conn: &mut Conn, last: i64) -> Res<()> {
            diesel::sql_query(format!(
                "UPDATE bench_jobs SET status = 'queued', owner = NULL, claim_token = NULL, claimed_at = NULL WHERE id <= {last}"
            ))
            .execute(conn)?;
            if let Some(after) = sql::AFTER_FREE {
                diesel::sql_query(after).execute(conn)?;
            }
            Ok(())
        }

        fn count(conn: &mut Conn, status: &str) -> QueryResult<i64> {
            read_one(bench_jobs::table.filter(bench_jobs::status.eq(status)).count(), conn)
        }

        fn lease() -> Res<Lease> {
            Ok(Lease::new(Duration::from_micros(LEASE_MICROS as u64))?)
        }

        // ---- The three ways to claim and finish a batch ----

        pub fn lib_claim(conn: &mut Conn, n: usize, lease: Lease) -> Res<Batch<i64, bench_jobs::table>> {
            Ok(bench_jobs::table
                .claim_batch(n, lease)
                .by(&Claim::new(OWNER)?)
                .filter(bench_jobs::status.eq("queued"))
                .order_by(bench_jobs::id)
                .set(bench_jobs::status.eq("running"))
                .returning(bench_jobs::id)
                .run::<i64>(conn)?)
        }

        pub fn lib_release(conn: &mut Conn, batch: &Batch<i64, bench_jobs::table>) -> Res<Vec<i64>> {
            Ok(batch.release().set(bench_jobs::status.eq("done")).run(conn)?)
        }

        /// Select the candidates, then claim each by id, as naive callers do.
        fn naive_claim(conn: &mut Conn, n: usize, lease: Lease, claim: &Claim) -> Res<Option<(Vec<i64>, u64)>> {
            let t = bench_jobs::table;
            let candidates: Vec<i64> = read(
                t.select(bench_jobs::id)
                    .filter(bench_jobs::status.eq("queued"))
                    .filter(t.claimable(lease))
                    .order(bench_jobs::id)
                    .limit(n as i64),
                conn,
            )?;
            if candidates.is_empty() {
                return Ok(None);
            }
            let mut won = Vec::with_capacity(candidates.len());
            let mut lost = 0;
            for id in candidates {
                let claimed = diesel_lease::update(
                    t.find(id).filter(t.claimable(lease)).filter(bench_jobs::status.eq("queued")),
                )
                .set((bench_jobs::status.eq("running"), t.taken(claim)))
                .execute(conn);
                match claimed {
                    Ok(1) => won.push(id),
                    Ok(_) | Err(DieselError::DatabaseError(DatabaseErrorKind::SerializationFailure, _)) => lost += 1,
                    Err(error) => return Err(error.into()),
                }
            }
            Ok(Some((won, lost)))
        }

        /// One worker's step: claim a batch and finish it. `None` when the claim came back empty.
        fn step(way: Way, conn: &mut Conn, n: usize, lease: Lease) -> Res<Option<Tally>> {
            let (claimed, finished, lost) = match way {
                Way::Library => {
                    let batch = lib_claim(conn, n, lease)?;
                    if batch.is_empty() {
                        return Ok(None);
                    }
                    (batch.len(), lib_release(conn, &batch)?.len(), 0)
                }
                Way::Hand => {
                    let token = new_token();
                    let keys = sql::hand_claim(conn, n as i64, OWNER, &token)?;
                    if keys.is_empty() {
                        return Ok(None);
                    }
                    (keys.len(), sql::hand_release(conn, &keys, &token, "done")?.len(), 0)
                }
                Way::Naive => {
                    let claim = Claim::new(OWNER)?;
                    let Some((won, lost)) = naive_claim(conn, n, lease, &claim)? else {
                        return Ok(None);
                    };
                    let finished = if won.is_empty() {
                        0
                    } else {
                        sql::hand_release(conn, &won, claim.token(), "done")?.len()
                    };
                    (won.len(), finished, lost)
                }
            };
            // A job claimed and then not finished was lost too (taken over meanwhile).
            Ok(Some(Tally {
                finished: finished as u64,
                lost: lost + (claimed - finished) as u64,
                empty: 0,
            }))
        }

        /// One sample: `threads` workers, each on its own pooled connection, claim and finish
        /// jobs `way` until no job is left queued or `slice` has passed. Jobs finished per
        /// second, and what the workers did.
        pub fn drain(pool: &ConnPool, threads: usize, slice: Duration, n: usize, lease: Lease, way: Way) -> Res<(f64, Tally)> {
            let barrier = Barrier::new(threads);
            let outcomes: Vec<Res<(Tally, f64)>> = std::thread::scope(|scope| {
                let handles: Vec<_> = (0..threads)
                    .map(|_| {
                        let barrier = &barrier;
                        scope.spawn(move || -> Res<(Tally, f64)> {
                            let conn = pool.get();
                            barrier.wait();
                            let mut conn = conn?;
                            let mut tally = Tally::default();
                            let start = Instant::now();
                            while start.elapsed() < slice {
                                match step(way, &mut conn, n, lease)? {
                                    Some(done) => tally += done,
                                    None if count(&mut conn, "queued")? == 0 => break,
                                    None => tally.empty += 1,
                                }
                            }
                            Ok((tally, start.elapsed().as_secs_f64()))
                        })
                    })
                    .collect();
                handles
                    .into_iter()
                    .map(|handle| handle.join().unwrap_or_else(|_| Err("a worker panicked".into())))
                    .collect()
            });
            let mut tally = Tally::default();
            let mut seconds = 0f64;
            for outcome in outcomes {
                let (t, s) = outcome?;
                tally += t;
                seconds = seconds.max(s);
            }
            Ok((tally.finished as f64 / seconds, tally))
        }
    };
}
pub(super) use workers;
