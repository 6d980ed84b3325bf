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

// A table that never named its lease columns has no claims.
fn main() -> Result<(), diesel_lease::Error> {
    let conn = &mut SqliteConnection::establish(":memory:")?;
    let lease = Lease::from_secs(30)?;
    let _ = other::table.claim_row(1_i64, lease);
    let _ = conn;
    Ok(())
}
