include!("schema/jobs_and_other.rs");

// The changes of a claim go into its own UPDATE: only the claimed table's columns.
fn main() -> Result<(), diesel_lease::Error> {
    let lease = Lease::from_secs(30)?;
    let _ = jobs::table.claim_row(1_i64, lease).set(other::status.eq("running"));
    Ok(())
}
