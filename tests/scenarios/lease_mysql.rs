// MySQL/MariaDB only, included by tests/lease.rs beside the shared scenarios.

#[test]
fn a_claim_reused_for_a_second_row_is_a_clear_error_not_the_wrong_row() {
    let Some(mut conn) = connection() else { return };
    let (first, second) = (queued_job(&mut conn), queued_job(&mut conn));
    let reused = Claim::new("worker-1").unwrap();
    claim(&mut conn, &first, &reused, minute()).expect("first row");

    let result: Result<Option<Job>, Error> =
        diesel_lease::update(lease_jobs::table.find(&second).filter(lease_jobs::table.claimable(minute())))
            .set(lease_jobs::table.taken(&reused))
            .get_if_won(&reused, &mut *conn);

    assert!(matches!(result, Err(Error::ClaimHoldsSeveralRows(2))), "{result:?}");
}
