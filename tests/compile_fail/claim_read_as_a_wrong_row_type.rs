include!("schema/jobs_and_other.rs");

// What a claim gives back loads as the row type its selection fits, no other.
fn main() -> Result<(), diesel_lease::Error> {
    let conn = &mut SqliteConnection::establish(":memory:")?;
    let lease = Lease::from_secs(30)?;
    let worker = Claim::new("worker-1")?;
    let _ = jobs::table.claim_row(1, lease).by(&worker).returning(jobs::id).run::<String>(conn)?;
    Ok(())
}
