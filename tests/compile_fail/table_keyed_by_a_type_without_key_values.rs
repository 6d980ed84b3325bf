diesel::table! {
    use diesel::sql_types::*;
    use diesel_lease::sql_types::UtcTimestamp;

    readings (taken_at) {
        taken_at -> Timestamp,
        owner -> Nullable<Text>,
        claim_token -> Nullable<Text>,
        claimed_at -> Nullable<UtcTimestamp>,
    }
}

// A table's rows are named by their key: its SQL type must have a Rust key value.
diesel_lease::claim_lease!(readings);

fn main() {}
