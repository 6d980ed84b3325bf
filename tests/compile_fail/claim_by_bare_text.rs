include!("schema/jobs_and_other.rs");

// A claim is made by a claim (owner and token), not by bare text: no claim can be forged or mismatched.
fn main() -> Result<(), diesel_lease::Error> {
    let lease = Lease::from_secs(30)?;
    let _ = jobs::table.claim_row(1, lease).by("worker-1");
    Ok(())
}
