include!("schema/jobs_and_other.rs");

// A keeper keeps what a claim gave back (a batch, a row won, held rows), not a claim alone: a
// claim names no rows.
fn main() -> Result<(), Box<dyn std::error::Error>> {
    let pool = diesel::r2d2::Pool::new(diesel::r2d2::ConnectionManager::<SqliteConnection>::new(":memory:"))?;
    let lease = Lease::from_secs(30)?;
    let keeper = Keeper::start(pool, KeeperSettings::new(lease))?;
    let claim = Claim::new("worker-1")?;
    let _kept: Kept<jobs::table> = keeper.keep(&claim)?;
    Ok(())
}
