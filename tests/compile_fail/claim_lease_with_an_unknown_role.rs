include!("schema/unmapped.rs");

// The roles are owner, claim_token, claimed_at and fence: a misspelt one is refused.
diesel_lease::claim_lease!(jobs { claimed: claimed_at });

fn main() {}
