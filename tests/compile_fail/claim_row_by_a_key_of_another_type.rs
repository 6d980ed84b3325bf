include!("schema/jobs_and_other.rs");

// A row is claimed by its primary key, of the key's own type.
fn main() -> Result<(), diesel_lease::Error> {
    let lease = Lease::from_secs(30)?;
    let _ = jobs::table.claim_row("1", lease);
    Ok(())
}
