//! The start-up check of measurement 8, stamped into the module of each backend: every
//! hand-written statement is the library's SQL, binds included.
macro_rules! verify {
    () => {
        // ---- Checks that the hand-written SQL is the library's ----

        /// `f` while another session, `other`, holds job 1 locked in a transaction.
        fn with_job_1_locked<T>(other: &mut Conn, f: impl FnOnce() -> Res<T>) -> Res<T> {
            other.transaction(|o| {
                diesel::sql_query("SELECT id FROM bench_jobs WHERE id = 1 FOR UPDATE")
                    .load::<Id>(o)?;
                f()
            })
        }

        pub fn verify(url: &str, conn: &mut Conn) -> Res<()> {
            let lease = lease()?;
            // Two jobs (key lists) and one (a key's equality), of three queued.
            for n in [2, 1] {
                fill(conn, 3)?;
                let mut token = String::new();
                let library = StatementLog::texts_of(conn, |c| {
                    let batch = lib_claim(c, n, lease)?;
                    check(
                        batch.len() == n,
                        "the library's batch did not claim all it asked for",
                    )?;
                    token = batch.claim().token().to_owned();
                    check(
                        lib_release(c, &batch)?.len() == n,
                        "the library's release did not finish its batch",
                    )
                })?;
                fill(conn, 3)?;
                let hand = StatementLog::texts_of(conn, |c| {
                    let keys = sql::hand_claim(c, n as i64, OWNER, &token)?;
                    check(
                        keys.len() == n,
                        "the hand-written batch did not claim all it asked for",
                    )?;
                    check(
                        sql::hand_release(c, &keys, &token, "done")?.len() == n,
                        "the hand-written release did not finish its batch",
                    )
                })?;
                same_statements(
                    &format!("batch claim and release of {n} job(s)"),
                    library,
                    hand,
                )?;
            }
            if sql::LOCKS_IN_ROUNDS {
                // Job 1 locked by another session: the first round (jobs 1 and 2) comes back
                // with job 2 alone, and a second round locks job 3, a list of one key.
                let other = &mut connect::<B>(url)?;
                fill(conn, 3)?;
                let mut token = String::new();
                let library = with_job_1_locked(other, || {
                    StatementLog::texts_of(conn, |c| {
                        let batch = lib_claim(c, 2, lease)?;
                        check(
                            batch.keys() == [2, 3],
                            "the library's batch did not claim jobs 2 and 3 past job 1, locked",
                        )?;
                        token = batch.claim().token().to_owned();
                        check(
                            lib_release(c, &batch)?.len() == 2,
                            "the library's release did not finish its batch",
                        )
                    })
                })?;
                fill(conn, 3)?;
                let hand = with_job_1_locked(other, || {
                    StatementLog::texts_of(conn, |c| {
                        let keys = sql::hand_claim(c, 2, OWNER, &token)?;
                        check(
                            keys == [2, 3],
                            "the hand-written batch did not claim jobs 2 and 3 past job 1, locked",
                        )?;
                        check(
                            sql::hand_release(c, &keys, &token, "done")?.len() == 2,
                            "the hand-written release did not finish its batch",
                        )
                    })
                })?;
                same_statements(
                    "batch claim and release past a locked job (two rounds)",
                    library,
                    hand,
                )?;
            }

            fill(conn, 3)?;
            let claim = Claim::with_token(OWNER, "bench-verify-token")?;
            let library = StatementLog::texts_of(conn, |c| {
                let won = bench_jobs::table
                    .claim_row(1_i64, lease)
                    .by(&claim)
                    .set(bench_jobs::status.eq("running"))
                    .run::<JobRow>(c)?;
                check(won.is_won(), "the library's claim_row lost")
            })?;
            free(conn, 1)?;
            let bare = StatementLog::texts_of(conn, |c| {
                check(
                    sql::bare_claim_row::<false>(c, 1, lease, &claim)?.is_some(),
                    "the bare changesets' claim lost",
                )
            })?;
            same_statements("claim of one row", library, bare)?;
            println!("  the hand-written batch statements are the library's, binds included");
            Ok(())
        }
    };
}
pub(super) use verify;
