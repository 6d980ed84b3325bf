use diesel::prelude::*;
use diesel_lease::prelude::*;

diesel::table! {
    use diesel::sql_types::*;
    use diesel_lease::sql_types::UtcTimestamp;

    jobs (id) {
        id -> BigInt,
        owner -> Nullable<Text>,
        claim_token -> Nullable<Text>,
        claimed_at -> Nullable<UtcTimestamp>,
    }
}

diesel_lease::claim_lease!(jobs);

// diesel-lease runs on a backend whose feature is on: here `sqlite` is off.
fn main() -> Result<(), Box<dyn std::error::Error>> {
    let conn = &mut SqliteConnection::establish(":memory:")?;
    let worker = Claim::new("worker-1")?;
    let _ = jobs::table.claim_row(1, Lease::from_secs(30)?).by(&worker).returning(jobs::id).run::<i64>(conn)?;
    Ok(())
}
