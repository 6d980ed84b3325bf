// MySQL/MariaDB only, included by tests/keeper.rs beside the shared scenarios.

/// Connections that refuse an `UPDATE` whose `WHERE` uses no key (`sql_safe_updates`): one that
/// would scan the table, locking row after row, fails instead.
#[derive(Debug)]
struct SafeUpdates;

impl diesel::r2d2::CustomizeConnection<backend::Conn, diesel::r2d2::Error> for SafeUpdates {
    fn on_acquire(&self, conn: &mut backend::Conn) -> Result<(), diesel::r2d2::Error> {
        diesel::sql_query("SET SESSION sql_safe_updates = 1")
            .execute(conn)
            .map(drop)
            .map_err(diesel::r2d2::Error::QueryError)
    }
}

#[test]
fn renewing_one_row_finds_it_by_its_key_rather_than_scanning_the_table() {
    let held = claimed(1, minute());
    let pool = crate::common::build_pool(backend::url(), 2, Some(Box::new(SafeUpdates)));
    let keeper = Keeper::start(pool.clone(), fast(minute())).unwrap();
    let kept = keeper.keep(&held).expect("the first renewal, by key");
    // Dated back after `keep`: only the rounds' renewals, refused if they scanned, renew it.
    age_jobs(&mut connection(), held.keys(), Duration::from_secs(50));
    after_rounds(&keeper, 2);
    assert!(kept.is_held(), "{:?}", kept.check());
    assert_eq!(
        fresh_within(held.keys(), 10),
        1,
        "renewed by the keeper's rounds"
    );
    assert_eq!(
        kept.release().run(&mut pool.get().unwrap()).unwrap(),
        held.keys(),
        "released by key too"
    );
}
