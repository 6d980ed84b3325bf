include!("schema/jobs_and_other.rs");

// A claim says who claims before it runs.
fn main() -> Result<(), diesel_lease::Error> {
    let conn = &mut SqliteConnection::establish(":memory:")?;
    let lease = Lease::from_secs(30)?;
    let _ = jobs::table.claim_row(1, lease).returning(jobs::id).run::<i64>(conn)?;
    Ok(())
}
