include!("schema/jobs_and_other.rs");

// A batch is ordered by the claimed table's own columns.
fn main() -> Result<(), diesel_lease::Error> {
    let lease = Lease::from_secs(30)?;
    let _ = jobs::table.claim_batch(10, lease).order_by(other::id);
    Ok(())
}
