// PostgreSQL only, included by tests/keeper.rs beside the shared scenarios.

#[derive(QueryableByName)]
struct Terminated {
    #[diesel(sql_type = diesel::sql_types::Bool)]
    terminated: bool,
}

#[test]
fn a_killed_connection_is_replaced_and_the_lease_is_kept() {
    let Some(shared) = backend::pool() else {
        return;
    };
    let ids = queued(&shared, 1);
    let (ids, claim) = claimed(&shared, &ids, minute());
    let pool = backend::pool_of(1);
    let pid: i32 = diesel::select(diesel::dsl::sql::<diesel::sql_types::Integer>(
        "pg_backend_pid()",
    ))
    .get_result(&mut pool.get().unwrap())
    .unwrap();
    let keeper = Keeper::start(pool, fast(minute())).unwrap();
    let kept = keeper.keep(lease_jobs::table, claim, ids.clone()).unwrap();
    after_rounds(&keeper, 1);

    let killed: Terminated =
        diesel::sql_query(format!("SELECT pg_terminate_backend({pid}) AS terminated"))
            .get_result(&mut shared.get().unwrap())
            .unwrap();
    assert!(killed.terminated);
    diesel::update(lease_jobs::table.find(&ids[0]))
        .set(lease_jobs::table.renewed_ago(Age::new(Duration::from_secs(50)).unwrap()))
        .execute(&mut shared.get().unwrap())
        .unwrap();
    after_rounds(&keeper, 3);

    assert!(kept.is_held(), "{:?}", kept.check());
    let fresh: i64 = lease_jobs::table
        .find(&ids[0])
        .filter(lease_jobs::table.fresh(Lease::from_secs(10).unwrap()))
        .count()
        .get_result(&mut shared.get().unwrap())
        .unwrap();
    assert_eq!(fresh, 1, "renewed over a new connection");
}
