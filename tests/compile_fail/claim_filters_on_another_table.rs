use diesel::prelude::*;
use diesel_lease::prelude::*;

diesel::table! {
    use diesel::sql_types::*;
    use diesel_lease::sql_types::UtcTimestamp;

    jobs (id) {
        id -> BigInt,
        status -> Text,
        owner -> Nullable<Text>,
        claim_token -> Nullable<Text>,
        claimed_at -> Nullable<UtcTimestamp>,
    }
}

diesel::table! {
    other (id) {
        id -> BigInt,
        status -> Text,
    }
}

diesel_lease::claim_lease!(jobs);

// A claim's filter is a condition on the claimed rows, not on another table.
fn main() -> Result<(), diesel_lease::Error> {
    let lease = Lease::from_secs(30)?;
    let _ = jobs::table.claim_batch(10, lease).filter(other::status.eq("queued"));
    Ok(())
}
