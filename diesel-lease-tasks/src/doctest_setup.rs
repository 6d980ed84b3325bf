// The doctests' setup, which they pull in with a hidden `include!`: the lease crate's (the
// backend that is on, a pool of a database of the doctest's own), and the table of task locks.
include!("../../src/doctest_setup.rs");

/// A pool of connections to a database of its own, with the table of task locks.
#[allow(dead_code)]
fn tasks_pool() -> Result<
    diesel::r2d2::Pool<diesel::r2d2::ConnectionManager<DocConnection>>,
    Box<dyn std::error::Error>,
> {
    let pool = doc_pool(4)?;
    diesel_lease_tasks::run_migrations(&mut *pool.get()?)?;
    Ok(pool)
}
