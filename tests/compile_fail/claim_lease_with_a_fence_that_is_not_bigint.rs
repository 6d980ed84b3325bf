include!("schema/unmapped.rs");

// The fence is a BIGINT claim counter: a column of another type cannot be one.
diesel_lease::claim_lease!(jobs { fence: status });

fn main() {}
