include!("schema/jobs_and_other.rs");

// Rows named by their owner, not by a claim's token, can only be released: a renewal or a write
// by name could keep alive, or change, a row that another life of the owner holds.
fn main() -> Result<(), diesel_lease::Error> {
    let conn = &mut SqliteConnection::establish(":memory:")?;
    jobs::table.held_by_owner("worker-1").renew().run(conn)?;
    Ok(())
}
