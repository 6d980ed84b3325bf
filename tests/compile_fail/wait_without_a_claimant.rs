include!("schema/jobs_and_other.rs");

// A wait is a claim, waited for: it says who claims before it runs, as the claim does.
fn main() -> Result<(), diesel_lease::Error> {
    let conn = &mut SqliteConnection::establish(":memory:")?;
    let lease = Lease::from_secs(30)?;
    let up_to = std::time::Duration::from_secs(5);
    let _ = jobs::table.claim_row(1, lease).returning(jobs::id).waiting(up_to).run::<i64>(conn)?;
    Ok(())
}
