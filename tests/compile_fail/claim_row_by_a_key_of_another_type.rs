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

// A row is claimed by its primary key, of the key's own type.
fn main() -> Result<(), diesel_lease::Error> {
    let conn = &mut SqliteConnection::establish(":memory:")?;
    let lease = Lease::from_secs(30)?;
    let _outcome: Claimed<(i64, String, Option<String>, Option<String>, Option<chrono::DateTime<chrono::Utc>>), _, _> =
        jobs::table.claim_row("1", lease).by(Claim::new("worker-1")?, conn)?;
    Ok(())
}
