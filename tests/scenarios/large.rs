// A holder's writes of more keys than one statement may bind (65,535 values on PostgreSQL and
// MySQL/MariaDB, 32,766 on SQLite): one claim can hold that many rows across several batches.
// Included once per backend by tests/lease.rs. Each scenario holds rows of its own, taken by one
// statement of the table's `taken` changeset, so that the claims are not what is timed.
use diesel::prelude::*;
use diesel_lease::prelude::*;

use crate::common::items::lease_items;
use crate::common::jobs::lease_jobs;

/// Past every backend's limit for one-column keys (64,000 a statement on PostgreSQL, 16,384 on
/// MySQL/MariaDB, whose range optimizer scans past that, 31,232 on SQLite): every backend splits.
const ONE_COLUMN_KEYS: usize = 70_000;
/// Past every backend's limit for two-column keys (31,744, and 15,360 on SQLite).
const TWO_COLUMN_KEYS: i64 = 35_000;

fn connection() -> super::support::Pooled {
    super::support::connection()
}

/// `count` new jobs held by `claim`, by id in order, and the `LIKE` pattern that finds them.
fn held_jobs(conn: &mut backend::Conn, count: usize, claim: &Claim) -> (String, Vec<String>) {
    let (pattern, ids) = super::support::queued_run(conn, count);
    let taken = diesel::update(lease_jobs::table.filter(lease_jobs::id.like(&pattern)))
        .set(lease_jobs::table.taken(claim))
        .execute(conn)
        .unwrap();
    assert_eq!(taken, count);
    (pattern, ids)
}

/// How many of the jobs `pattern` finds are in `status` and held by `claim`.
fn jobs_in(conn: &mut backend::Conn, pattern: &str, status: &str, claim: &Claim) -> i64 {
    lease_jobs::table
        .filter(lease_jobs::id.like(pattern))
        .filter(lease_jobs::status.eq(status))
        .filter(lease_jobs::table.held_by(claim.token()))
        .count()
        .get_result(conn)
        .unwrap()
}

#[test]
fn a_holders_renewal_write_and_release_of_more_keys_than_a_statement_binds_each_land_whole() {
    let conn = &mut connection();
    let claim = Claim::new("worker-1").unwrap();
    let (pattern, ids) = held_jobs(conn, ONE_COLUMN_KEYS, &claim);
    let held = lease_jobs::table.held_rows(&claim, ids.clone());

    assert_eq!(held.renew().run(conn).unwrap().len(), ONE_COLUMN_KEYS);
    let mut running = held
        .update()
        .set(lease_jobs::status.eq("running"))
        .run(conn)
        .unwrap();
    running.sort();
    assert_eq!(running, ids, "every row named, each once");
    assert_eq!(
        jobs_in(conn, &pattern, "running", &claim),
        ONE_COLUMN_KEYS as i64
    );
    let done = held
        .release()
        .set(lease_jobs::status.eq("done"))
        .run(conn)
        .unwrap();
    assert_eq!(done.len(), ONE_COLUMN_KEYS);
    let still_held: i64 = lease_jobs::table
        .filter(lease_jobs::id.like(&pattern))
        .filter(lease_jobs::lease_token.is_not_null())
        .count()
        .get_result(conn)
        .unwrap();
    assert_eq!(still_held, 0, "every row released");
}

#[test]
fn a_split_write_whose_last_part_fails_changes_no_row_of_any_part() {
    let conn = &mut connection();
    let claim = Claim::new("worker-1").unwrap();
    let (pattern, ids) = held_jobs(conn, ONE_COLUMN_KEYS, &claim);
    // Each row's new status is its previous_worker: a valid one for every row but the last
    // named, whose status CHECK fails in the last part, after the other parts have run.
    diesel::update(lease_jobs::table.filter(lease_jobs::id.like(&pattern)))
        .set(lease_jobs::previous_worker.eq("done"))
        .execute(conn)
        .unwrap();
    diesel::update(lease_jobs::table.find(ids.last().unwrap()))
        .set(lease_jobs::previous_worker.eq("not a status"))
        .execute(conn)
        .unwrap();
    let held = lease_jobs::table.held_rows(&claim, ids);

    let failed = held
        .release()
        .set(lease_jobs::status.eq(lease_jobs::previous_worker.assume_not_null()))
        .run(conn);
    assert!(failed.is_err(), "the CHECK fails: {failed:?}");
    assert_eq!(
        jobs_in(conn, &pattern, "queued", &claim),
        ONE_COLUMN_KEYS as i64,
        "no part's change is left: every row queued, and held"
    );
}

#[test]
fn a_kept_claim_of_more_keys_than_a_statement_binds_is_kept_and_released_whole() {
    let conn = &mut connection();
    let claim = Claim::new("worker-1").unwrap();
    let (pattern, ids) = held_jobs(conn, ONE_COLUMN_KEYS, &claim);
    let keeper = Keeper::start(
        backend::pool_of(2),
        KeeperSettings::new(super::support::minute()),
    )
    .unwrap();
    let kept = keeper
        .keep(lease_jobs::table.held_rows(&claim, ids))
        .unwrap();
    assert!(kept.is_held());
    assert_eq!(kept.held().keys().len(), ONE_COLUMN_KEYS);
    let done = kept
        .release()
        .set(lease_jobs::status.eq("done"))
        .run(conn)
        .unwrap();
    assert_eq!(done.len(), ONE_COLUMN_KEYS);
    assert_eq!(jobs_in(conn, &pattern, "done", &claim), 0, "released");
}

#[test]
fn a_holders_writes_of_more_two_column_keys_than_a_statement_binds_each_land_whole() {
    let conn = &mut connection();
    let claim = Claim::new("worker-1").unwrap();
    let tenant = super::composite::tenant(conn, TWO_COLUMN_KEYS);
    diesel::update(lease_items::table.filter(lease_items::tenant.eq(&tenant)))
        .set(lease_items::table.taken(&claim))
        .execute(conn)
        .unwrap();
    let keys: Vec<(String, i64)> = (1..=TWO_COLUMN_KEYS)
        .map(|item_no| (tenant.clone(), item_no))
        .collect();
    let held = lease_items::table.held_rows(&claim, keys);

    assert_eq!(
        held.renew().run(conn).unwrap().len(),
        TWO_COLUMN_KEYS as usize
    );
    let running = held
        .update()
        .set(lease_items::state.eq("running"))
        .run(conn)
        .unwrap();
    assert_eq!(running.len(), TWO_COLUMN_KEYS as usize);
    let released = held
        .release()
        .set(lease_items::state.eq("done"))
        .run(conn)
        .unwrap();
    assert_eq!(released.len(), TWO_COLUMN_KEYS as usize);
    let done_and_free: i64 = lease_items::table
        .filter(lease_items::tenant.eq(&tenant))
        .filter(lease_items::state.eq("done"))
        .filter(lease_items::holder_token.is_null())
        .count()
        .get_result(conn)
        .unwrap();
    assert_eq!(done_and_free, TWO_COLUMN_KEYS);
}
