// Waits run on a pool, which give the connection back between attempts: included after
// scenarios/wait.rs, whose helpers it uses, by tests/wait.rs and tests/pooler.rs.

/// The waiting claim of job `id` by `owner` on `pool`, as `wait_for`'s, each attempt on a
/// connection checked out for it.
fn wait_on_pool(
    pool: &Pool,
    id: &str,
    owner: &str,
    recheck: Duration,
) -> Result<Claimed<Job, lease_jobs::table>, Error> {
    lease_jobs::table
        .claim_row(id, minute())
        .by(&Claim::new(owner).unwrap())
        .filter(lease_jobs::status.eq("queued"))
        .set(lease_jobs::status.eq("running"))
        .returning(Job::as_select())
        .waiting(LONGER_THAN_PATIENCE)
        .rechecking_every(recheck)
        .run_on(pool)
}

/// Fails with: `CheckedOut::lend` checking out once and keeping that connection for the whole
/// wait (the plain checkout never gets one, nor the keeper).
#[test]
fn sixteen_waiters_on_a_pool_of_four_leave_connections_to_the_keeper_and_to_others_and_win_in_turn()
{
    let conn = &mut connection();
    let (pool, updates) = backend::pool_counting_updates(4);
    // A claim kept by a keeper on the same pool: a lease of 6 s renewed every 2 s, lost unless
    // the keeper gets a connection within 3 s of each renewal's time.
    let lease = Lease::from_secs(6).unwrap();
    let keeper = Keeper::start(pool.clone(), KeeperSettings::new(lease)).unwrap();
    let kept_id = queued_job(conn);
    let kept = keeper.keep(held(conn, &kept_id, "keeper", lease)).unwrap();
    let id = queued_job(conn);
    let holder = held(conn, &id, "holder", minute());

    let waiters: Vec<_> = (0..16)
        .map(|n| {
            let (pool, id) = (pool.clone(), id.clone());
            std::thread::spawn(move || {
                let owner = format!("waiter-{n}");
                let won = wait_on_pool(&pool, &id, &owner, Duration::from_millis(50))
                    .unwrap()
                    .won()
                    .expect("every waiter wins in turn");
                assert_eq!(won.row().worker.as_deref(), Some(owner.as_str()));
                // Done at once, and queued again for the next.
                let release = won.release().set(lease_jobs::status.eq("queued"));
                assert!(release.run(&mut pool.get().unwrap()).unwrap());
                owner
            })
        })
        .collect();
    // Three refused claims a waiter on average: every waiter is waiting, or has been.
    eventually("the waiters refused", || sent(&updates) >= 48);
    if let Err(error) = pool.get() {
        panic!("a plain checkout during the waits got no connection: {error}");
    }
    assert!(holder.release().run(conn).unwrap());

    let mut owners: Vec<String> = waiters
        .into_iter()
        .map(|waiter| finished(waiter, "a waiter won and released"))
        .collect();
    owners.sort();
    owners.dedup();
    assert_eq!(owners.len(), 16, "each waiter won once");
    assert_eq!(job(conn, &id).worker, None, "released by the last");
    assert!(kept.is_held(), "the keeper lost nothing");
    assert_eq!(kept.release().run(conn).unwrap(), [kept_id]);
}

/// Fails with: `CheckedOut::lend` keeping its connection for the whole wait (a batch's as a
/// row's).
#[test]
fn a_batch_waiting_on_a_pool_of_one_gives_the_connection_back_between_attempts() {
    let pattern = format!("{}-%", unique_id("pooled"));
    let (pool, statements) = backend::pool_counting_statements(1);
    let waiter = std::thread::spawn({
        let (pool, pattern) = (pool.clone(), pattern.clone());
        move || {
            lease_jobs::table
                .claim_batch(10, minute())
                .by(&Claim::new("waiter").unwrap())
                .filter(lease_jobs::id.like(&pattern))
                .returning(lease_jobs::id)
                .waiting(LONGER_THAN_PATIENCE)
                .rechecking_every(Duration::from_millis(50))
                .run_on::<String, _>(&pool)
        }
    });
    eventually("empty batches", || sent(&statements) >= 4);
    // The pool's one connection, between two attempts.
    let mut plain = pool.get().expect("a plain checkout during the wait");
    let id = pattern.replace('%', "0");
    diesel::insert_into(lease_jobs::table)
        .values((lease_jobs::id.eq(&id), lease_jobs::status.eq("queued")))
        .execute(&mut *plain)
        .unwrap();
    drop(plain);

    let batch = finished(waiter, "the waiter took the work").unwrap();
    assert_eq!(batch.keys(), [id]);
}
