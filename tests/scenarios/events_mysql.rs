// MySQL/MariaDB only, included by tests/events.rs beside the shared scenarios: a keeper's renewal
// made the victim of a real deadlock, between two connections that commit: a claim's first
// renewal, as it is kept, since a round passes over locked rows and waits for none. (A claim by key locks
// one row, and MariaDB lets a transaction that holds a shared lock on it take it exclusively past
// a waiting claim: no deadlock of a claim by key is provoked here. A batch claim's lost conflict
// at COMMIT is the Galera scenario's, in the fault suite.)
use diesel::connection::SimpleConnection;

/// Waits until another session holds a lock on row `id`: a share lock asked for by `probe`
/// without waiting is refused. (InnoDB's tables of transactions and lock waits do not list an
/// autocommit statement that waits on MariaDB 10.11.)
fn locked_by_another(probe: &mut backend::Conn, id: &str) {
    crate::common::eventually(&format!("row {id} locked"), || {
        probe
            .transaction(|conn| {
                diesel::sql_query(
                    "SELECT id FROM lease_jobs WHERE id = ? LOCK IN SHARE MODE NOWAIT",
                )
                .bind::<diesel::sql_types::Text, _>(id)
                .execute(conn)
            })
            .is_err()
    });
}

/// Two rows `held` (in key order), and a transaction that, heavier than any renewal, has
/// written the second; then `start_renewal` starts a renewal of both (a keeper's), and once it
/// waits for the second, having locked the first, the transaction writes the first, and InnoDB
/// rolls back the renewal, which changed fewer rows (error 1213). The transaction then commits.
fn renewal_deadlocked(held: &[String], start_renewal: impl FnOnce()) {
    let conn = &mut connection();
    // After the two in key order: a renewal scans the primary key, and must wait first at the
    // second of its rows.
    let others: Vec<String> = (0..20).map(|n| format!("{}-z{n:02}", held[1])).collect();
    for id in &others {
        diesel::insert_into(lease_jobs::table)
            .values((lease_jobs::id.eq(id), lease_jobs::status.eq("queued")))
            .execute(conn)
            .unwrap();
    }
    let holder = &mut backend::connect();
    holder.batch_execute("BEGIN").unwrap();
    // One by one, by key: a list of them could be read by a scan of the table, which at
    // REPEATABLE READ locks every row, the renewal's too.
    for id in &others {
        diesel::update(lease_jobs::table.find(id))
            .set(lease_jobs::status.eq("running"))
            .execute(holder)
            .unwrap();
    }
    diesel::update(lease_jobs::table.find(&held[1]))
        .set(lease_jobs::status.eq("done"))
        .execute(holder)
        .unwrap();
    start_renewal();
    // The renewal has locked the first row; it waits for the second, which is the holder's.
    locked_by_another(&mut backend::connect(), &held[0]);
    diesel::update(lease_jobs::table.find(&held[0]))
        .set(lease_jobs::status.eq("done"))
        .execute(holder)
        .expect("the holder is not the victim");
    holder.batch_execute("COMMIT").unwrap();
}

fn two_held(conn: &mut backend::Conn, claim: &Claim) -> (HeldRows<lease_jobs::table>, Vec<String>) {
    // Next to each other in key order, so that no other test's rows lie between them.
    let prefix = unique_id("deadlock");
    let ids = vec![format!("{prefix}-a"), format!("{prefix}-b")];
    for id in &ids {
        diesel::insert_into(lease_jobs::table)
            .values((lease_jobs::id.eq(id), lease_jobs::status.eq("queued")))
            .execute(conn)
            .unwrap();
    }
    (claim_all(conn, &ids, claim, minute()), ids)
}

#[test]
fn a_keeper_renewal_that_a_deadlock_rolls_back_is_counted_and_told() {
    crate::events();
    let conn = &mut connection();
    let claim = Claim::new(&unique_id("owner")).unwrap();
    let (held, ids) = two_held(conn, &claim);
    let keeper = Keeper::start(
        backend::pool_of(2),
        KeeperSettings::new(minute()).every(Duration::from_millis(20)),
    )
    .unwrap();
    let before = diesel_lease::LostConflicts::since_start().renewals;
    // The claim's first renewal, as it is kept, is the deadlock's victim.
    let kept = std::thread::scope(|scope| {
        let mut keeping = None;
        renewal_deadlocked(&ids, || keeping = Some(scope.spawn(|| keeper.keep(&held))));
        keeping.map(|keeping| keeping.join().unwrap())
    });
    assert!(
        matches!(kept, Some(Err(diesel_lease::Error::Database(_)))),
        "the renewal rolled back: {kept:?}"
    );
    let stats = keeper.stats();
    assert!(stats.renewal_conflicts >= 1, "{stats}");
    assert!(stats.failed_renewals >= stats.renewal_conflicts, "{stats}");
    assert!(diesel_lease::LostConflicts::since_start().renewals > before);
    assert!(
        crate::events_of("keeper renewal")
            .iter()
            .any(|line| line.contains("write conflict lost")
                && line.contains("INFO")
                && line.contains("lease_jobs")),
        "the lost conflict is told"
    );
}
