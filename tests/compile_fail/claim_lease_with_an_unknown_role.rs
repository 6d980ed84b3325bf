// The roles are owner, claim_token, claimed_at and fence: a misspelt one is refused.
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

diesel_lease::claim_lease!(jobs { claimed: claimed_at });

fn main() {}
