include!("schema/jobs_and_other.rs");
include!("schema/any_connection.rs");

// On a pool's connection of a `multi_connection!` enum, a claim read as a row type its
// selection does not load as is refused naming a backend inside and the row type, as on that
// backend's own connection: not the enum's backend, nor a feature.
fn claim(pool: &Pool<ConnectionManager<AnyConnection>>, claim: &Claim) -> Result<bool, Box<dyn std::error::Error>> {
    let claimed = jobs::table
        .claim_row(1, Lease::from_secs(30)?)
        .by(claim)
        .returning(jobs::id)
        .run::<String>(&mut pool.get()?)?;
    Ok(claimed.is_won())
}

fn main() {}
