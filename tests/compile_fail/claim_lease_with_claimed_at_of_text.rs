#[allow(unused_imports)]
use diesel::prelude::*;

diesel::table! {
    tickets (id) {
        id -> BigInt,
        owner -> Nullable<Text>,
        claim_token -> Nullable<Text>,
        claimed_at -> Nullable<Text>,
    }
}

// A lease's time is a timestamp the database's clock writes, refused where the table is named.
diesel_lease::claim_lease!(tickets);

fn main() {}
