include!("schema/jobs_and_other.rs");

// A holder's update says what it changes before it runs.
fn main() -> Result<(), diesel_lease::Error> {
    let conn = &mut SqliteConnection::establish(":memory:")?;
    let lease = Lease::from_secs(30)?;
    let outcome = jobs::table.claim_row(1, lease).by(&Claim::new("w")?).returning(jobs::id).run::<i64>(conn)?;
    if let Some(won) = outcome.won() {
        won.update().run(conn)?;
    }
    Ok(())
}
