// MySQL/MariaDB only, included by tests/lease.rs: a library call whose statement returning rows
// failed after the server had sent its column header (an expression's error, a lock wait
// timeout, a deadlock) must leave nothing behind that makes a later call on the same connection
// wait for ever (issue 15; docs/upstream/mysql-statement-hang.md). Every call that could hang
// runs under `answers_within`, which kills the session and fails the test when it does not
// answer.
use std::sync::{Mutex, MutexGuard};

use diesel::connection::SimpleConnection;
use diesel::r2d2::{ConnectionManager, Pool};

use crate::common::mysql::{answers_within, session_id};

diesel::table! {
    use diesel::sql_types::*;
    use diesel_lease::sql_types::UtcTimestamp;

    failing_reads (id) {
        id -> BigInt,
        status -> Text,
        claims -> BigInt,
        owner -> Nullable<Text>,
        claim_token -> Nullable<Text>,
        claimed_at -> Nullable<UtcTimestamp>,
    }
}

diesel_lease::claim_lease!(failing_reads);

/// The table, made anew for one test at a time: a row with `claims = 1` fails every read that
/// evaluates `product()` on it. The index on `status` is the first one a queue's author adds.
fn failing_reads(rows: i64) -> MutexGuard<'static, ()> {
    static ONE_TEST_AT_A_TIME: Mutex<()> = Mutex::new(());
    let turn = ONE_TEST_AT_A_TIME
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let conn = &mut backend::connect();
    for ddl in [
        "DROP TABLE IF EXISTS failing_reads".to_owned(),
        "CREATE TABLE failing_reads (id BIGINT PRIMARY KEY, status VARCHAR(16) NOT NULL, \
         claims BIGINT NOT NULL DEFAULT 0, owner VARCHAR(255), \
         claim_token VARCHAR(255) COLLATE utf8mb4_bin, claimed_at DATETIME(6), KEY (status))"
            .to_owned(),
        format!(
            "INSERT INTO failing_reads (id, status) VALUES {}",
            (1..=rows)
                .map(|id| format!("({id}, 'queued')"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        // Statistics as a table in use has them, by which MariaDB picks the index on status.
        "ANALYZE TABLE failing_reads".to_owned(),
    ] {
        diesel::sql_query(ddl).execute(conn).expect("the table");
    }
    turn
}

/// `claims * 2000000000 * 2000000000 * 3`: 0 of `claims = 0`, and of `claims = 1` a BIGINT
/// overflow, an error of the statement found as the row is read, after the column header.
type Product =
    diesel::dsl::Mul<diesel::dsl::Mul<diesel::dsl::Mul<failing_reads::claims, i64>, i64>, i64>;

fn product() -> Product {
    failing_reads::claims * 2_000_000_000_i64 * 2_000_000_000_i64 * 3_i64
}

/// True of a row with `claims = 0`, an error of one with `claims = 1`.
fn overflows() -> diesel::dsl::GtEq<Product, i64> {
    product().ge(0_i64)
}

fn set_claims(id: i64, claims: i64) {
    diesel::update(failing_reads::table.find(id))
        .set(failing_reads::claims.eq(claims))
        .execute(&mut backend::connect())
        .expect("claims set");
}

/// Where a test's calls run: one plain connection, or a pool of one, whose every checkout is the
/// same connection.
trait OneConnection: Send {
    fn with<R>(&mut self, call: impl FnOnce(&mut backend::Conn) -> R) -> R;
}

impl OneConnection for backend::Conn {
    fn with<R>(&mut self, call: impl FnOnce(&mut backend::Conn) -> R) -> R {
        call(self)
    }
}

impl OneConnection for Pool<ConnectionManager<backend::Conn>> {
    fn with<R>(&mut self, call: impl FnOnce(&mut backend::Conn) -> R) -> R {
        call(&mut self.get().expect("the pool's one connection"))
    }
}

/// Three calls on one connection, each giving back the rows it won: the first answers; the
/// second, with row `failing` made to fail `product()`, fails in the database; the third, that
/// row mended, runs the same SQL again, and must answer. `call` is told which call it is (1..=3).
fn a_call_after_a_failed_read(
    mut conns: impl OneConnection,
    failing: i64,
    mut call: impl FnMut(&mut backend::Conn, i64) -> Result<Vec<i64>, Error> + Send,
    answers: [&[i64]; 2],
) {
    let session = conns.with(session_id);
    let mut run = |number: i64| {
        let what = format!("call {number}");
        answers_within(session, &what, || conns.with(|conn| call(conn, number)))
    };

    assert_eq!(run(1).expect("call 1"), answers[0]);
    set_claims(failing, 1);
    let failed = run(2);
    assert!(
        matches!(&failed, Err(Error::Database(e)) if e.to_string().contains("out of range")),
        "call 2 fails in the database: {failed:?}"
    );
    set_claims(failing, 0);
    assert_eq!(run(3).expect("call 3"), answers[1]);
}

/// The next two queued rows, by id, whose filter reads `overflows()`: row 3 failing fails the
/// batch's locking read.
fn batch_of_two(conn: &mut backend::Conn, _: i64) -> Result<Vec<i64>, Error> {
    let batch = failing_reads::table
        .claim_batch(2, minute())
        .by(&Claim::new("worker-1")?)
        .filter(failing_reads::status.eq("queued"))
        .filter(overflows())
        .order_by(failing_reads::id)
        .set(failing_reads::status.eq("running"))
        .returning(failing_reads::id)
        .run::<i64>(conn)?;
    Ok(sorted(batch.rows().to_vec()))
}

/// `keys` in order: a batch gives its rows back in none.
fn sorted(mut keys: Vec<i64>) -> Vec<i64> {
    keys.sort_unstable();
    keys
}

#[test]
fn a_batch_claim_after_one_that_failed_in_its_locking_read_answers_on_a_pool_of_one() {
    let _table = failing_reads(8);
    a_call_after_a_failed_read(backend::pool_of(1), 3, batch_of_two, [&[1, 2], &[3, 4]]);
}

#[test]
fn a_batch_claim_after_one_that_failed_in_its_locking_read_answers_on_a_plain_connection() {
    let _table = failing_reads(8);
    a_call_after_a_failed_read(backend::connect(), 3, batch_of_two, [&[1, 2], &[3, 4]]);
}

#[test]
fn a_batch_claim_after_one_whose_read_back_failed_answers_on_a_pool_of_one() {
    let _table = failing_reads(8);
    // The second call's UPDATE takes rows 3 and 4; reading them back is what fails, and the
    // batch's transaction is rolled back, so the third takes them.
    let batch_reading_the_product = |conn: &mut backend::Conn, _| {
        let batch = failing_reads::table
            .claim_batch(2, minute())
            .by(&Claim::new("worker-1")?)
            .filter(failing_reads::status.eq("queued"))
            .order_by(failing_reads::id)
            .set(failing_reads::status.eq("running"))
            .returning((failing_reads::id, product()))
            .run::<(i64, i64)>(conn)?;
        Ok(sorted(batch.keys().to_vec()))
    };
    a_call_after_a_failed_read(
        backend::pool_of(1),
        3,
        batch_reading_the_product,
        [&[1, 2], &[3, 4]],
    );
}

#[test]
fn a_claim_by_key_after_one_whose_read_back_failed_answers_on_a_pool_of_one() {
    let _table = failing_reads(4);
    // Call n claims row n; the second's UPDATE takes row 2, reading it back is what fails.
    let claim_reading_the_product = |conn: &mut backend::Conn, id| {
        let outcome = failing_reads::table
            .claim_row(id, minute())
            .by(&Claim::new("worker-1")?)
            .returning((failing_reads::id, product()))
            .run::<(i64, i64)>(conn)?;
        Ok(outcome.won().map(|won| won.row().0).into_iter().collect())
    };
    a_call_after_a_failed_read(
        backend::pool_of(1),
        2,
        claim_reading_the_product,
        [&[1], &[3]],
    );
}

#[test]
fn a_release_after_one_whose_locking_read_timed_out_answers_on_a_pool_of_one() {
    let _table = failing_reads(4);
    let mut pool = backend::pool_of(1);
    let session = pool.with(|conn| {
        diesel::sql_query("SET SESSION innodb_lock_wait_timeout = 1")
            .execute(conn)
            .expect("a short lock wait");
        session_id(conn)
    });
    let holder = pool
        .with(|conn| {
            failing_reads::table
                .claim_batch(2, minute())
                .by(&Claim::new("worker-1")?)
                .filter(failing_reads::status.eq("queued"))
                .returning(failing_reads::id)
                .run::<i64>(conn)
        })
        .expect("a batch");
    let mut release = |what| {
        answers_within(session, what, || {
            pool.with(|conn| holder.release().run(conn))
        })
    };

    // Another transaction holds row 1 locked: the release's locking read waits, and times out.
    let blocker = &mut backend::connect();
    blocker.batch_execute("BEGIN").expect("BEGIN");
    diesel::sql_query("SELECT id FROM failing_reads WHERE id = 1 FOR UPDATE")
        .execute(blocker)
        .expect("row 1 locked");
    let failed = release("release 1");
    assert!(
        matches!(&failed, Err(Error::Database(e)) if e.to_string().contains("Lock wait timeout")),
        "the release times out waiting for row 1: {failed:?}"
    );
    blocker.batch_execute("COMMIT").expect("COMMIT");
    let mut released = release("release 2").expect("release 2");
    released.sort_unstable();
    assert_eq!(released, [1, 2]);
}
