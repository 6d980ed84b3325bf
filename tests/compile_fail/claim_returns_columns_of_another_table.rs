include!("schema/jobs_and_other.rs");

// A claim gives back what it changed: columns of the claimed table only.
fn main() -> Result<(), diesel_lease::Error> {
    let lease = Lease::from_secs(30)?;
    let _ = jobs::table.claim_batch(10, lease).returning(other::id);
    Ok(())
}
