// The two tables every compile-fail case claims from: `jobs` with lease columns, `other` without.
#[allow(unused_imports)]
use diesel::prelude::*;
#[allow(unused_imports)]
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
