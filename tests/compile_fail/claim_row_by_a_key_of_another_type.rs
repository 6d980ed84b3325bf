include!("schema/jobs_and_other.rs");

// A row is claimed by its primary key, of the key's own type.
fn main() -> Result<(), diesel_lease::Error> {
    let conn = &mut SqliteConnection::establish(":memory:")?;
    let lease = Lease::from_secs(30)?;
    let _outcome: Claimed<(i64, String, Option<String>, Option<String>, Option<chrono::DateTime<chrono::Utc>>), _, _> =
        jobs::table.claim_row("1", lease).by(Claim::new("worker-1")?, conn)?;
    Ok(())
}
