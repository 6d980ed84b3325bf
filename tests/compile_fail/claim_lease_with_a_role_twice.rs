include!("schema/unmapped.rs");

// Each role names one column: a role given twice is refused, not settled by the last.
diesel_lease::claim_lease!(jobs { owner: worker, claimed_at: claimed_at, owner: owner });

fn main() {}
