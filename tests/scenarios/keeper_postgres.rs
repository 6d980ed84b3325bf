// PostgreSQL only, included by tests/keeper.rs beside the shared scenarios.

#[derive(QueryableByName)]
struct Terminated {
    #[diesel(sql_type = diesel::sql_types::Bool)]
    terminated: bool,
}

#[test]
fn a_killed_connection_is_replaced_and_the_lease_is_kept() {
    let held = claimed(1, minute());
    let pool = backend::pool_of(1);
    let pid: i32 = diesel::select(diesel::dsl::sql::<diesel::sql_types::Integer>(
        "pg_backend_pid()",
    ))
    .get_result(&mut pool.get().unwrap())
    .unwrap();
    let keeper = Keeper::start(pool, fast(minute())).unwrap();
    let kept = keeper.keep(&held).unwrap();
    after_rounds(&keeper, 1);

    let conn = &mut connection();
    let killed: Terminated =
        diesel::sql_query(format!("SELECT pg_terminate_backend({pid}) AS terminated"))
            .get_result(conn)
            .unwrap();
    assert!(killed.terminated);
    age_jobs(conn, held.keys(), Duration::from_secs(50));
    after_rounds(&keeper, 3);

    assert!(kept.is_held(), "{:?}", kept.check());
    assert_eq!(
        fresh_within(held.keys(), 10),
        1,
        "renewed over a new connection"
    );
}
