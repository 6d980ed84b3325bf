//! Measurement 8's cells, stamped into the module of each backend: claim-and-finish throughput
//! for each thread count and batch size, and the claim of one row by key.
macro_rules! cells {
    () => {
        // ---- 8: batch claim-and-finish throughput ----

        pub fn batches(url: &str, conn: &mut Conn, plan: &Plan, results: &mut Results) -> Res<()> {
            let lease = lease()?;
            let tallies = RefCell::new([Tally::default(); 3]);
            let conn = RefCell::new(conn);
            let slice = plan.batch_slice;
            let (fewest, most) = plan.batch_jobs;
            for threads in THREADS {
                let pool = pool::<B>(url, threads as u32, false)?;
                for n in BATCHES {
                    // A fresh queue of `jobs`, drained `way` for `slice` at most; every job
                    // finished was finished once, and none is left claimed.
                    let sample = |way: Way, jobs: usize, slice: Duration| -> Res<(f64, Tally)> {
                        fill(&mut conn.borrow_mut(), jobs)?;
                        let (rate, tally) = drain(&pool, threads, slice, n, lease, way)?;
                        let c = &mut **conn.borrow_mut();
                        check(count(c, "done")? as u64 == tally.finished, "the jobs done are not the jobs the workers finished")?;
                        check(count(c, "running")? == 0, "a claimed job was left unfinished")?;
                        Ok((rate, tally))
                    };
                    // Untimed: each way once on a small queue, so that every connection has
                    // prepared what it caches; the library's rate sizes the cell's queue, for
                    // it and the same SQL by hand to drain it in about one slice.
                    let (rate, _) = sample(Way::Library, fewest, slice / 3)?;
                    sample(Way::Hand, fewest, slice / 3)?;
                    sample(Way::Naive, fewest, slice / 3)?;
                    let jobs = ((rate * slice.as_secs_f64() * QUEUE_SLACK) as usize).clamp(fewest, most);
                    println!("  {threads} thread(s), batch {n}: a queue of {jobs} jobs");
                    let timed = |way: Way| -> Res<f64> {
                        let (rate, tally) = sample(way, jobs, slice)?;
                        tallies.borrow_mut()[way as usize] += tally;
                        Ok(rate)
                    };
                    let mut variants = [
                        Variant::new(LIBRARY, || timed(Way::Library)),
                        Variant::new(HAND, || timed(Way::Hand)),
                        Variant::new(NAIVE, || timed(Way::Naive)),
                    ];
                    let samples = interleave(plan.batch_rounds, &mut variants)?;
                    let largest = BATCHES[BATCHES.len() - 1];
                    for (k, baseline_name, goal) in [
                        (Way::Hand as usize, HAND, Some(Goal::RatioAtLeast(LIKE_FOR_LIKE))),
                        (Way::Naive as usize, NAIVE, (n == largest).then_some(Goal::RatioAtLeast(OVER_NAIVE))),
                    ] {
                        let (ratio, min, max) = paired_ratio(&samples[0], &samples[k]);
                        results.push(Row {
                            section: SECTION,
                            backend: sql::NAME.into(),
                            figure: cell_figure(threads, n),
                            baseline_name: baseline_name.into(),
                            baseline: median(&samples[k]),
                            library_name: LIBRARY.into(),
                            library: median(&samples[0]),
                            unit: "jobs/s".into(),
                            ratio,
                            range: Some((min, max)),
                            better: Better::Higher,
                            goal,
                        });
                    }
                }
            }
            let [library, hand, naive] = tallies.into_inner();
            results.push(Row {
                section: SECTION,
                backend: sql::NAME.into(),
                figure: LOST_FIGURE.into(),
                baseline_name: NAIVE.into(),
                baseline: naive.lost as f64,
                library_name: LIBRARY.into(),
                library: library.lost as f64,
                unit: "".into(),
                ratio: library.lost as f64 / naive.lost as f64,
                range: None,
                better: Better::Lower,
                goal: Some(Goal::LibraryAtMost(0.0)),
            });
            results.note(format!(
                "{}: batch claims: jobs finished over all rounds: library {}, {HAND} {}, {NAIVE} {}; lost races of {HAND}: {}; \
                 claims that came back empty while jobs were still queued (their rows locked by other workers' claims): library {}, {HAND} {}, {NAIVE} {}",
                sql::NAME,
                number(library.finished as f64, ""),
                number(hand.finished as f64, ""),
                number(naive.finished as f64, ""),
                hand.lost,
                library.empty,
                hand.empty,
                naive.empty,
            ));
            Ok(())
        }

        // ---- 8: the claim of one row ----

        pub fn claim_one_row(conn: &mut Conn, plan: &Plan, results: &mut Results) -> Res<()> {
            let lease = lease()?;
            let rows = plan.claim_rows as i64;
            fill(conn, plan.claim_rows)?;
            let conn = RefCell::new(conn);
            let slice = plan.slice;
            let bare = |collect: bool| -> Res<f64> {
                let c = &mut **conn.borrow_mut();
                let (micros, last) = micros_per_claim(slice, rows, |id| {
                    let claim = Claim::new(OWNER)?;
                    let won = if collect {
                        sql::bare_claim_row::<true>(c, id, lease, &claim)?
                    } else {
                        sql::bare_claim_row::<false>(c, id, lease, &claim)?
                    };
                    check(won.is_some(), "the bare changesets' claim lost")
                })?;
                free(c, last)?;
                Ok(micros)
            };
            let mut variants = [
                Variant::new(BARE, || bare(false)),
                Variant::new("claim_row", || {
                    let c = &mut **conn.borrow_mut();
                    let (micros, last) = micros_per_claim(slice, rows, |id| {
                        let won = bench_jobs::table
                            .claim_row(id, lease)
                            .by(&Claim::new(OWNER)?)
                            .set(bench_jobs::status.eq("running"))
                            .run::<JobRow>(c)?;
                        check(won.is_won(), "the library's claim_row lost")
                    })?;
                    free(c, last)?;
                    Ok(micros)
                }),
                Variant::new(BARE_COLLECTED, || bare(true)),
            ];
            let samples = interleave(plan.rounds, &mut variants)?;
            for (k, baseline_name, goal) in [(0, BARE, Some(Goal::RatioAtMost(CLAIM_ROW))), (2, BARE_COLLECTED, None)] {
                let (ratio, min, max) = paired_ratio(&samples[1], &samples[k]);
                results.push(Row {
                    section: SECTION,
                    backend: sql::NAME.into(),
                    figure: CLAIM_ROW_FIGURE.into(),
                    baseline_name: baseline_name.into(),
                    baseline: median(&samples[k]),
                    library_name: "claim_row".into(),
                    library: median(&samples[1]),
                    unit: "µs/claim".into(),
                    ratio,
                    range: Some((min, max)),
                    better: Better::Lower,
                    goal,
                });
            }
            Ok(())
        }

        pub fn run(url: &str, options: &Options, results: &mut Results) -> Res<()> {
            println!("-- {SECTION}. batch claims ({})", sql::NAME);
            let mut conn = connect::<B>(url)?;
            setup(&mut conn)?;
            let outcome = (|| -> Res<()> {
                verify(url, &mut conn)?;
                batches(url, &mut conn, &options.plan, results)?;
                claim_one_row(&mut conn, &options.plan, results)
            })();
            let cleaned = teardown(&mut conn);
            outcome.and(cleaned)
        }
    };
}
pub(super) use cells;
