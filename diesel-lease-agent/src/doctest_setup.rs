// The doctests' setup, which they pull in with a hidden `include!`: the lease crate's (the
// backend that is on, a pool of a database of the doctest's own), and the agent tables with two chats of `user-1`.
include!("../../src/doctest_setup.rs");

/// Makes the agent tables, with two chats of `user-1`.
#[allow(dead_code)]
fn make_agent_tables(conn: &mut DocConnection) -> Result<(), diesel_lease_agent::Error> {
    use diesel_lease_agent::schema::conversations;

    diesel_lease_agent::run_migrations(conn)?;
    diesel::insert_into(conversations::table)
        .values(&vec![
            (
                conversations::id.eq("chat-1"),
                conversations::user_id.eq("user-1"),
            ),
            (
                conversations::id.eq("chat-2"),
                conversations::user_id.eq("user-1"),
            ),
        ])
        .execute(conn)?;
    Ok(())
}

/// An in-memory SQLite database with the agent tables and two chats of `user-1`.
#[cfg(feature = "sqlite")]
#[allow(dead_code)]
fn agent_connection() -> Result<DocConnection, diesel_lease_agent::Error> {
    let mut conn = DocConnection::establish(":memory:").map_err(diesel_lease::Error::from)?;
    make_agent_tables(&mut conn)?;
    Ok(conn)
}

/// A connection to a schema or database of the doctest's own, with the agent tables and two
/// chats of `user-1`.
#[cfg(not(feature = "sqlite"))]
#[allow(dead_code)]
fn agent_connection() -> Result<
    diesel::r2d2::PooledConnection<diesel::r2d2::ConnectionManager<DocConnection>>,
    diesel_lease_agent::Error,
> {
    let mut conn = doc_pool(1)?.get()?;
    make_agent_tables(&mut *conn)?;
    Ok(conn)
}

/// A pool of connections to a database of its own, with the agent tables and two chats of
/// `user-1`.
#[allow(dead_code)]
fn agent_pool() -> Result<
    diesel::r2d2::Pool<diesel::r2d2::ConnectionManager<DocConnection>>,
    Box<dyn std::error::Error>,
> {
    let pool = doc_pool(2)?;
    make_agent_tables(&mut *pool.get()?)?;
    Ok(pool)
}
