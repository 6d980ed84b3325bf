// MySQL/MariaDB only, included by tests/lease.rs: a batch claim locks the rows it takes and no
// others, whatever secondary indexes the table has (issue 15, item 2). InnoDB keeps every row a
// locking read scanned through a secondary index locked until the commit, and a sorting one every
// row that matched; a claim that did so left concurrent claimers nothing to take, and made
// holders' writes on their own rows wait.
/// How many deadlocks the server has detected since it started (`lock_deadlocks`, on by default
/// in MySQL and MariaDB alike). Server-wide: the suite's other scenarios deadlock never, so a
/// deadlock while the claimers run is theirs, or a defect worth failing on all the same.
fn deadlocks(conn: &mut backend::Conn) -> i64 {
    crate::common::mysql::server_count(
        conn,
        "SELECT CAST(COUNT AS CHAR) AS Value FROM information_schema.INNODB_METRICS \
         WHERE NAME = 'lock_deadlocks'",
    )
}

diesel::table! {
    use diesel::sql_types::*;
    use diesel_lease::sql_types::UtcTimestamp;

    locked_queue (id) {
        id -> BigInt,
        status -> Text,
        owner -> Nullable<Text>,
        claim_token -> Nullable<Text>,
        claimed_at -> Nullable<UtcTimestamp>,
    }
}

diesel_lease::claim_lease!(locked_queue);

/// The rows always due: each claimer holds at most a batch, so at least 80 stay due.
const DUE_ROWS: i64 = 96;
const CLAIMERS: usize = 4;
const BATCH: usize = 4;
/// Batches each claimer claims and finishes.
const ROUNDS: usize = 150;

/// The queue, made anew with an index on each of `indexes` beside the lease columns and the
/// token's index that `LeaseColumns` writes, its rows queued, its statistics those of a table in
/// use.
fn locked_queue(indexes: &[&str]) {
    let conn = &mut backend::connect();
    diesel::sql_query("DROP TABLE IF EXISTS locked_queue")
        .execute(conn)
        .expect("the old queue dropped");
    diesel::sql_query(
        "CREATE TABLE locked_queue (id BIGINT PRIMARY KEY, status VARCHAR(16) NOT NULL)",
    )
    .execute(conn)
    .expect("the queue");
    let lease_columns = diesel_lease::LeaseColumns::new("locked_queue")
        .up_sql::<diesel::mysql::Mysql>()
        .expect("the lease columns' DDL");
    diesel::connection::SimpleConnection::batch_execute(conn, &lease_columns)
        .expect("the lease columns");
    for (number, columns) in indexes.iter().enumerate() {
        diesel::sql_query(format!(
            "CREATE INDEX locked_queue_{number} ON locked_queue ({columns})"
        ))
        .execute(conn)
        .expect("an index");
    }
    let rows: Vec<_> = (1..=DUE_ROWS)
        .map(|id| (locked_queue::id.eq(id), locked_queue::status.eq("queued")))
        .collect();
    diesel::insert_into(locked_queue::table)
        .values(&rows)
        .execute(conn)
        .expect("the rows");
    diesel::sql_query("ANALYZE TABLE locked_queue")
        .execute(conn)
        .expect("the statistics");
}

/// What one claimer saw.
#[derive(Debug, Default)]
struct Seen {
    batches: usize,
    empty: usize,
    writes: usize,
    lock_waits: usize,
    /// Guarded writes that found their row no longer held: a row two claims held at once.
    lost: usize,
    errors: Vec<String>,
}

/// Claims `ROUNDS` batches of the rows not done, by id, and finishes each row it won with a
/// holder's guarded write that queues it again, so that the queue stays due. Every call is
/// bounded; a holder's write that waited a second for a lock is counted.
fn claim_and_finish(pool: &Claimers, claimer: usize) -> Seen {
    let conn = &mut *pool.get().expect("a connection");
    diesel::sql_query("SET SESSION innodb_lock_wait_timeout = 1")
        .execute(conn)
        .expect("a short lock wait");
    let session = session_id(conn);
    let worker = Claim::new(&format!("claimer-{claimer}")).expect("a claim");
    let mut seen = Seen::default();
    for _ in 0..ROUNDS {
        let batch = answers_within(session, "a batch claim", || {
            locked_queue::table
                .claim_batch(BATCH, minute())
                .by(&worker)
                .filter(locked_queue::status.ne("done"))
                .order_by(locked_queue::id)
                .set(locked_queue::status.eq("running"))
                .returning(locked_queue::id)
                .run::<i64>(&mut *conn)
        });
        seen.batches += 1;
        let batch = match batch {
            Ok(batch) => batch,
            Err(e) => {
                seen.errors.push(e.to_string());
                continue;
            }
        };
        if batch.is_empty() {
            seen.empty += 1;
        }
        for key in batch.keys() {
            let finish = locked_queue::table
                .held_rows(&worker, vec![*key])
                .release()
                .set(locked_queue::status.eq("queued"));
            seen.writes += 1;
            match answers_within(session, "a holder's write", || finish.run(&mut *conn)) {
                Ok(finished) if finished == [*key] => {}
                Ok(_) => seen.lost += 1,
                Err(e) if e.to_string().contains("Lock wait timeout") => seen.lock_waits += 1,
                Err(e) => seen.errors.push(e.to_string()),
            }
        }
    }
    seen
}

/// The claimers' connections.
type Claimers = diesel::r2d2::Pool<diesel::r2d2::ConnectionManager<backend::Conn>>;

#[test]
fn contending_batch_claims_lock_only_the_rows_they_take_whatever_the_tables_indexes() {
    let index_sets: [&[&str]; 4] = [&[], &["status"], &["status, id"], &["status", "claimed_at"]];
    for indexes in index_sets {
        let name = format!("the token's and {indexes:?}");
        locked_queue(indexes);
        let pool = backend::pool_of(CLAIMERS as u32);
        let deadlocks_before = deadlocks(&mut backend::connect());
        let seen: Vec<Seen> = std::thread::scope(|scope| {
            let claimers: Vec<_> = (0..CLAIMERS)
                .map(|claimer| {
                    let pool = &pool;
                    scope.spawn(move || claim_and_finish(pool, claimer))
                })
                .collect();
            claimers
                .into_iter()
                .map(|claimer| claimer.join().expect("a claimer"))
                .collect()
        });
        let deadlocks = deadlocks(&mut backend::connect()) - deadlocks_before;
        let total = |count: fn(&Seen) -> usize| seen.iter().map(count).sum::<usize>();
        let (batches, empty) = (total(|s| s.batches), total(|s| s.empty));
        let said = format!("index {name}: {deadlocks} deadlocks; per claimer {seen:?}");
        assert!(
            seen.iter().all(|s| s.errors.is_empty()),
            "no call fails: {said}"
        );
        assert!(
            empty * 100 <= batches,
            "at most 1% of batches empty while at least 80 rows are due: {said}"
        );
        assert_eq!(
            total(|s| s.lock_waits),
            0,
            "no holder's write waits for a lock: {said}"
        );
        assert_eq!(total(|s| s.lost), 0, "no row held by two claims: {said}");
        assert!(total(|s| s.writes) > 0, "rows were won: {said}");
        assert_eq!(deadlocks, 0, "no deadlock: {said}");
    }
}

/// Rows the session `conn` has read by stepping through an index or a table (`Handler_read_next`
/// and `Handler_read_rnd_next`): what a scan reads, where a read by key reads nothing.
fn rows_stepped_through(conn: &mut backend::Conn) -> i64 {
    crate::common::mysql::server_count(
        conn,
        "SELECT CAST(SUM(VARIABLE_VALUE) AS CHAR) AS Value FROM information_schema.SESSION_STATUS \
         WHERE VARIABLE_NAME IN ('HANDLER_READ_NEXT', 'HANDLER_READ_RND_NEXT')",
    )
}

/// A holder's write of more keys than MariaDB's range optimizer takes at once (past
/// `optimizer_max_sel_arg_weight`, 32,000 by default, it scans the whole index instead) must
/// still read the named rows by key: a scan of the table locks what it passes, and two large
/// writes on one table deadlock.
#[test]
fn a_holders_write_of_many_keys_reads_the_rows_it_names_by_key() {
    let conn = &mut connection();
    let claim = Claim::new(&unique_id("many")).unwrap();
    let (pattern, ids) = queued_run(conn, 64_000);
    diesel::update(lease_jobs::table.filter(lease_jobs::id.like(&pattern)))
        .set(lease_jobs::table.taken(&claim))
        .execute(conn)
        .unwrap();

    let before = rows_stepped_through(conn);
    let held = lease_jobs::table.held_rows(&claim, ids);
    assert_eq!(held.release().run(conn).unwrap().len(), 64_000);
    let stepped = rows_stepped_through(conn) - before;
    assert!(
        stepped < 64_000,
        "the release scanned {stepped} rows for 64,000 named"
    );
}
