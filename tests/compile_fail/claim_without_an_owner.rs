include!("schema/jobs_and_other.rs");

// A claim is run by a claim (owner and token), not by bare text: no claim can be forged or mismatched.
fn main() -> Result<(), diesel_lease::Error> {
    let conn = &mut SqliteConnection::establish(":memory:")?;
    let lease = Lease::from_secs(30)?;
    let _outcome: Claimed<(i64, String, Option<String>, Option<String>, Option<chrono::DateTime<chrono::Utc>>), _, _> =
        jobs::table.claim_row(1_i64, lease).by("worker-1", conn)?;
    Ok(())
}
