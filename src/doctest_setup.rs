// Shared by the doctests: an in-memory SQLite database with one queued job.
#[allow(unused_imports)]
use diesel::prelude::*;

diesel::table! {
    use diesel::sql_types::*;
    use diesel_lease::sql_types::UtcTimestamp;

    jobs (id) {
        id -> BigInt,
        status -> Text,
        owner -> Nullable<Text>,
        claim_token -> Nullable<Text>,
        claimed_at -> Nullable<UtcTimestamp>,
    }
}

diesel_lease::claim_lease!(jobs);

#[allow(dead_code)]
#[derive(Debug, Queryable)]
struct Job {
    id: i64,
    status: String,
    owner: Option<String>,
    claim_token: Option<String>,
    claimed_at: Option<chrono::DateTime<chrono::Utc>>,
}

#[allow(dead_code)]
fn jobs_connection() -> Result<diesel::sqlite::SqliteConnection, diesel_lease::Error> {
    let mut conn = diesel::sqlite::SqliteConnection::establish(":memory:")?;
    diesel::sql_query(
        "CREATE TABLE jobs (id BIGINT PRIMARY KEY, status TEXT NOT NULL, owner TEXT, \
         claim_token TEXT, claimed_at TEXT)",
    )
    .execute(&mut conn)?;
    diesel::sql_query("INSERT INTO jobs (id, status) VALUES (1, 'queued')").execute(&mut conn)?;
    Ok(conn)
}

/// An in-memory SQLite database with the agent tables and two chats of `user-1`.
#[cfg(feature = "agent")]
#[allow(dead_code)]
fn agent_connection() -> Result<diesel::sqlite::SqliteConnection, diesel_lease::agent::Error> {
    use diesel_lease::agent::schema::conversations;

    let mut conn = diesel::sqlite::SqliteConnection::establish(":memory:")
        .map_err(diesel_lease::Error::from)?;
    diesel_lease::agent::run_migrations(&mut conn)?;
    diesel::insert_into(conversations::table)
        .values(&vec![
            (conversations::id.eq("chat-1"), conversations::user_id.eq("user-1")),
            (conversations::id.eq("chat-2"), conversations::user_id.eq("user-1")),
        ])
        .execute(&mut conn)?;
    Ok(conn)
}

/// A pool of SQLite connections to a database file of its own, with one queued job.
#[allow(dead_code)]
fn jobs_pool() -> Result<
    diesel::r2d2::Pool<diesel::r2d2::ConnectionManager<diesel::sqlite::SqliteConnection>>,
    Box<dyn std::error::Error>,
> {
    let file = std::env::temp_dir().join(format!("diesel-lease-doctest-{}.db", uuid::Uuid::new_v4()));
    let pool = diesel::r2d2::Pool::builder()
        .max_size(2)
        .connection_customizer(Box::new(diesel_lease::sqlite::SqlitePragmas::default()))
        .build(diesel::r2d2::ConnectionManager::new(file.to_string_lossy()))?;
    let conn = &mut pool.get()?;
    diesel::sql_query(
        "CREATE TABLE jobs (id BIGINT PRIMARY KEY, status TEXT NOT NULL, owner TEXT, \
         claim_token TEXT, claimed_at TEXT)",
    )
    .execute(conn)?;
    diesel::sql_query("INSERT INTO jobs (id, status) VALUES (1, 'queued')").execute(conn)?;
    Ok(pool)
}

/// A pool of SQLite connections to a database file of its own, with the agent tables and two
/// chats of `user-1`.
#[cfg(feature = "agent")]
#[allow(dead_code)]
fn agent_pool() -> Result<
    diesel::r2d2::Pool<diesel::r2d2::ConnectionManager<diesel::sqlite::SqliteConnection>>,
    Box<dyn std::error::Error>,
> {
    use diesel_lease::agent::schema::conversations;

    let file = std::env::temp_dir().join(format!("diesel-lease-agent-{}.db", uuid::Uuid::new_v4()));
    let pool = diesel::r2d2::Pool::builder()
        .max_size(2)
        .connection_customizer(Box::new(diesel_lease::sqlite::SqlitePragmas::default()))
        .build(diesel::r2d2::ConnectionManager::new(file.to_string_lossy()))?;
    let conn = &mut pool.get()?;
    diesel_lease::agent::run_migrations(conn)?;
    diesel::insert_into(conversations::table)
        .values(&vec![
            (conversations::id.eq("chat-1"), conversations::user_id.eq("user-1")),
            (conversations::id.eq("chat-2"), conversations::user_id.eq("user-1")),
        ])
        .execute(conn)?;
    Ok(pool)
}
