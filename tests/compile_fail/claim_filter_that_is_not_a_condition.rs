include!("schema/jobs_and_other.rs");

// A filter must be a boolean condition.
fn main() -> Result<(), diesel_lease::Error> {
    let lease = Lease::from_secs(30)?;
    let _ = jobs::table.claim_batch(10, lease).filter(jobs::status);
    Ok(())
}
