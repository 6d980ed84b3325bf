// The caller's changes in the lease's statements, included once per backend by tests/lease.rs
// (and tests/pooler.rs) after scenarios/lease.rs, whose helpers it uses: a change that fails
// leaves no claim behind, each change reads the row as it was before the statement, and an
// update with `Option` fields writes the columns of its own call.

#[test]
fn a_failing_change_of_the_caller_leaves_no_claim_behind() {
    let mut conn = connection();
    let id = queued_job(&mut conn);
    let worker = Claim::new("worker-1").unwrap();

    let result = lease_jobs::table
        .claim_row(id.as_str(), minute())
        .by(&worker)
        .set(lease_jobs::status.eq("no-such-status"))
        .run::<Job>(&mut *conn);

    assert!(
        matches!(result, Err(Error::Database(_))),
        "the CHECK violation is a typed error: {result:?}"
    );
    let row = job(&mut conn, &id);
    assert_eq!(row.status, "queued");
    assert_eq!(
        (row.worker, row.lease_token, row.leased_at),
        (None, None, None),
        "no claim without its status"
    );
}

// The exact case of the issue: a changeset with `Option` fields that also derives `QueryId`.
#[derive(Debug, Clone, AsChangeset, diesel::query_builder::QueryId)]
#[diesel(table_name = lease_jobs)]
struct Patch {
    status: Option<String>,
    worker: Option<String>,
}

#[test]
fn an_update_with_option_fields_writes_the_columns_of_each_call_never_a_cached_statement_of_another(
) {
    let mut conn = connection();
    let id = queued_job(&mut conn);
    let patch = |status: Option<&str>, worker: Option<&str>| Patch {
        status: status.map(str::to_owned),
        worker: worker.map(str::to_owned),
    };

    diesel_lease::update(lease_jobs::table.find(&id))
        .set(patch(Some("running"), None))
        .execute(&mut *conn)
        .unwrap();
    diesel_lease::update(lease_jobs::table.find(&id))
        .set(patch(None, Some("a worker")))
        .execute(&mut *conn)
        .unwrap();

    let row = job(&mut conn, &id);
    assert_eq!(
        (row.status.as_str(), row.worker.as_deref()),
        ("running", Some("a worker"))
    );
}

#[test]
fn the_callers_changes_read_the_row_as_it_was_before_the_claim_or_release() {
    let mut conn = connection();
    let previous = |conn: &mut backend::Conn, id: &str| job(conn, id).previous_worker;
    let carry_worker = lease_jobs::previous_worker.eq(lease_jobs::worker);

    // One row, taken over from an outlived holder: the caller reads the old holder.
    let id = queued_job(&mut conn);
    claim(&mut conn, &id, &Claim::new("worker-1").unwrap(), minute()).unwrap();
    age(&mut conn, &id, Duration::from_secs(120));
    let outcome = lease_jobs::table
        .claim_row(id.as_str(), minute())
        .by(&Claim::new("worker-2").unwrap())
        .set(carry_worker)
        .run::<Job>(&mut *conn)
        .unwrap();
    let taker = outcome.won().expect("outlived, so claimable");
    assert_eq!(previous(&mut conn, &id).as_deref(), Some("worker-1"));

    // Its release: the caller reads the holder it releases.
    assert!(taker.release().set(carry_worker).run(&mut *conn).unwrap());
    assert_eq!(previous(&mut conn, &id).as_deref(), Some("worker-2"));

    // A batch, taken over from an outlived holder, then reaped.
    let ids = queued_jobs(&mut conn, 2, "queued");
    claimed_and_aged(&mut conn, &ids, "worker-3", Duration::from_secs(120));
    let batch = lease_jobs::table
        .claim_batch(2, minute())
        .by(&Claim::new("worker-4").unwrap())
        .filter(lease_jobs::id.eq_any(&ids))
        .set(carry_worker)
        .returning(lease_jobs::id)
        .run::<String>(&mut *conn)
        .unwrap();
    assert_eq!(batch.len(), 2);
    for id in &ids {
        assert_eq!(previous(&mut conn, id).as_deref(), Some("worker-3"));
    }
    age_jobs(&mut conn, &ids, Duration::from_secs(120));
    let reaped = lease_jobs::table
        .reap(10, minute())
        .filter(lease_jobs::id.eq_any(&ids))
        .set(carry_worker)
        .run(&mut *conn)
        .unwrap();
    assert_eq!(reaped.len(), 2);
    for id in &ids {
        assert_eq!(
            previous(&mut conn, id).as_deref(),
            Some("worker-4"),
            "the reaper reads the holder it reaps, as on every backend"
        );
    }
}
