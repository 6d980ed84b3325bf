// Each role names one column: a role given twice is refused, not settled by the last.
diesel::table! {
    use diesel::sql_types::*;
    use diesel_lease::sql_types::UtcTimestamp;

    jobs (id) {
        id -> BigInt,
        owner -> Nullable<Text>,
        worker -> Nullable<Text>,
        claim_token -> Nullable<Text>,
        claimed_at -> Nullable<UtcTimestamp>,
    }
}

diesel_lease::claim_lease!(jobs { owner: worker, claimed_at: claimed_at, owner: owner });

fn main() {}
