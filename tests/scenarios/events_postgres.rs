// PostgreSQL only, included by tests/events.rs beside the shared scenarios: a claim that loses a
// real serialization failure, between two connections that commit.
use diesel::connection::SimpleConnection;

use crate::common::postgres::waits_for_a_lock;

#[derive(QueryableByName)]
struct Pid {
    #[diesel(sql_type = diesel::sql_types::Integer)]
    pid: i32,
}

/// A claim by key, on a session whose statements run at REPEATABLE READ, of a row another
/// transaction has written: the claim waits, that transaction commits, and the claim's
/// snapshot can no longer be updated (SQLSTATE 40001).
#[test]
fn a_claim_that_loses_a_serialization_failure_claims_nothing_and_is_counted_and_told() {
    let conn = &mut connection();
    let id = queued_job(conn);
    let writer = &mut backend::connect();
    writer.batch_execute("BEGIN").unwrap();
    diesel::update(lease_jobs::table.find(&id))
        .set(lease_jobs::status.eq("done"))
        .execute(writer)
        .unwrap();

    let claimer = &mut backend::connect();
    claimer
        .batch_execute("SET SESSION default_transaction_isolation = 'repeatable read'")
        .unwrap();
    let pid = diesel::sql_query("SELECT pg_backend_pid() AS pid")
        .get_result::<Pid>(claimer)
        .unwrap()
        .pid;
    let claim = Claim::new(&unique_id("owner")).unwrap();
    let before = diesel_lease::LostConflicts::since_start().row_claims;
    let (won, events) = std::thread::scope(|scope| {
        let claiming = scope.spawn(|| {
            crate::events_during(|| {
                lease_jobs::table
                    .claim_row(&id, minute())
                    .by(&claim)
                    .returning(lease_jobs::id)
                    .run::<String>(claimer)
                    .map(|claimed| claimed.won().is_some())
            })
        });
        waits_for_a_lock(conn, pid);
        writer.batch_execute("COMMIT").unwrap();
        claiming.join().unwrap()
    });
    let won = won.unwrap_or_else(|e| panic!("a lost conflict is no error: {e}; {events}"));
    assert!(!won, "the claim lost, and claimed nothing");
    assert!(
        diesel_lease::LostConflicts::since_start().row_claims > before,
        "the lost conflict is counted"
    );
    assert_eq!(job(conn, &id).lease_token, None);
    assert!(
        events
            .lines()
            .any(|line| line.contains("write conflict lost")
                && line.contains("INFO")
                && line.contains("lease_jobs")
                && line.contains("claim by key")
                && line.contains(claim.token())),
        "{events}"
    );
}
