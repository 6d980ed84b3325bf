include!("schema/jobs_and_other.rs");

// Only a table with a fence column gives a fence.
fn main() -> Result<(), diesel_lease::Error> {
    let conn = &mut SqliteConnection::establish(":memory:")?;
    let lease = Lease::from_secs(30)?;
    let worker = Claim::new("worker-1")?;
    let outcome = jobs::table.claim_row(1, lease).by(&worker).returning(jobs::id).run::<i64>(conn)?;
    let _fence: Option<i64> = outcome.won().map(|won| won.fence());
    Ok(())
}
