include!("schema/jobs_and_other.rs");

// Code generic over the connection bounds each statement it runs by `LeaseQuery`.
fn finish<C: diesel::Connection>(conn: &mut C, claim: &Claim) -> Result<Vec<i64>, diesel_lease::Error> {
    jobs::table.held_rows(claim, [1]).release().run(conn)
}

fn main() {}
