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

// The changes of a claim go into its own UPDATE: only the claimed table's columns.
fn main() -> Result<(), diesel_lease::Error> {
    let lease = Lease::from_secs(30)?;
    let _ = jobs::table.claim_row(1_i64, lease).set(other::status.eq("running"));
    Ok(())
}
