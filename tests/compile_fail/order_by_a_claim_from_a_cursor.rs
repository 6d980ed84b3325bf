include!("schema/jobs_and_other.rs");

// A claim from a cursor takes its rows in key order: no order of the caller's replaces it.
fn main() -> Result<(), diesel_lease::Error> {
    let lease = Lease::from_secs(30)?;
    let cursor = diesel_lease::ClaimCursor::new();
    let _ = jobs::table
        .claim_batch(10, lease)
        .from_cursor(&cursor)
        .order_by(jobs::id.desc());
    Ok(())
}
