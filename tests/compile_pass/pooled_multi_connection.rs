include!("../compile_fail/schema/jobs_and_other.rs");
include!("../compile_fail/schema/any_connection.rs");

// A pool's connection of a `multi_connection!` enum runs every statement as a native pool's
// does: `&mut pool.get()?` and `&mut *pool.get()?` alike (the agent locks too:
// diesel-lease-agent/tests/compile_pass).

#[allow(dead_code)]
fn finish(
    pool: &Pool<ConnectionManager<AnyConnection>>,
    claim: &Claim,
) -> Result<Vec<i64>, Box<dyn std::error::Error>> {
    let won = jobs::table
        .claim_row(1, Lease::from_secs(30)?)
        .by(claim)
        .returning(jobs::id)
        .run::<i64>(&mut pool.get()?)?;
    assert!(won.is_won());
    let mut released = jobs::table.held_rows(claim, [1]).release().run(&mut pool.get()?)?;
    released.extend(jobs::table.held_rows(claim, [2]).release().run(&mut *pool.get()?)?);
    Ok(released)
}

fn main() {}
