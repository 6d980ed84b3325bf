include!("schema/jobs_and_other.rs");

// A table that never named its lease columns has no claims.
fn main() -> Result<(), diesel_lease::Error> {
    let lease = Lease::from_secs(30)?;
    let _ = other::table.claim_row(1, lease);
    Ok(())
}
