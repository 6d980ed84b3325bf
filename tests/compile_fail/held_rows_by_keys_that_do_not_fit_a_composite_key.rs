include!("schema/jobs_and_other.rs");

diesel::table! {
    parcels (tenant, parcel_no) {
        tenant -> Text,
        parcel_no -> BigInt,
        owner -> Nullable<Text>,
        claim_token -> Nullable<Text>,
        claimed_at -> Nullable<diesel_lease::sql_types::UtcTimestamp>,
    }
}

diesel_lease::claim_lease!(parcels);

// A composite key is named by a tuple of its parts, in the key's column order.
fn main() -> Result<(), diesel_lease::Error> {
    let claim = Claim::new("worker-1")?;
    let _ = parcels::table.held_rows(&claim, vec![(7, "acme")]);
    Ok(())
}
