include!("schema/jobs_and_other.rs");

// A claim's filter is a condition on the claimed rows, not on another table.
fn main() -> Result<(), diesel_lease::Error> {
    let lease = Lease::from_secs(30)?;
    let _ = jobs::table.claim_batch(10, lease).filter(other::status.eq("queued"));
    Ok(())
}
