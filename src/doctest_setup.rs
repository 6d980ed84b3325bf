// Shared by the doctests, which pull it in with a hidden `include!`: the `jobs` table with one
// queued job, on the backend that is on. SQLite when its feature is on (in
// memory, or a file of its own for a pool). Otherwise PostgreSQL at `PG_DATABASE_URL`, or else
// MySQL/MariaDB at `MYSQL_DATABASE_URL`: each doctest in a schema (PostgreSQL) or database (MySQL)
// of its own, dropped with the doctest's pool. A server whose URL is not set skips the doctest,
// as the integration tests skip it, unless `LEASE_TEST_REQUIRE_ALL_BACKENDS` is set.
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

diesel::table! {
    use diesel::sql_types::*;
    use diesel_lease::sql_types::UtcTimestamp;

    fenced_jobs (id) {
        id -> BigInt,
        owner -> Nullable<Text>,
        claim_token -> Nullable<Text>,
        claimed_at -> Nullable<UtcTimestamp>,
        fence -> BigInt,
    }
}

diesel_lease::claim_lease!(fenced_jobs { fence: fence });

#[allow(dead_code)]
#[derive(Debug, Queryable, Selectable)]
#[diesel(table_name = jobs)]
struct Job {
    id: i64,
    status: String,
    owner: Option<String>,
    claim_token: Option<String>,
    claimed_at: Option<chrono::DateTime<chrono::Utc>>,
}

/// The doctests' connection: SQLite's when it is on, else PostgreSQL's, else MySQL's.
#[cfg(feature = "sqlite")]
#[allow(dead_code)]
type DocConnection = diesel::sqlite::SqliteConnection;
#[cfg(all(not(feature = "sqlite"), feature = "postgres"))]
#[allow(dead_code)]
type DocConnection = diesel::pg::PgConnection;
#[cfg(all(not(feature = "sqlite"), not(feature = "postgres"), feature = "mysql"))]
#[allow(dead_code)]
type DocConnection = diesel::mysql::MysqlConnection;

/// The doctests' backend.
#[allow(dead_code)]
type DocBackend = <DocConnection as diesel::Connection>::Backend;

/// The type of a lease's `claimed_at` column, for tables a doctest makes itself.
#[cfg(feature = "sqlite")]
#[allow(dead_code)]
pub(crate) const TIMESTAMP: &str = "TEXT";
#[cfg(all(not(feature = "sqlite"), feature = "postgres"))]
#[allow(dead_code)]
pub(crate) const TIMESTAMP: &str = "TIMESTAMPTZ";
#[cfg(all(not(feature = "sqlite"), not(feature = "postgres"), feature = "mysql"))]
#[allow(dead_code)]
pub(crate) const TIMESTAMP: &str = "DATETIME(6)";

/// The `jobs` table on SQLite.
#[cfg(feature = "sqlite")]
#[allow(dead_code)]
const JOBS_DDL: &str = "CREATE TABLE jobs (id BIGINT PRIMARY KEY, status TEXT NOT NULL, \
                        owner TEXT, claim_token TEXT, claimed_at TEXT)";
/// The `jobs` table on PostgreSQL.
#[cfg(all(not(feature = "sqlite"), feature = "postgres"))]
#[allow(dead_code)]
const JOBS_DDL: &str = "CREATE TABLE jobs (id BIGINT PRIMARY KEY, status TEXT NOT NULL, \
                        owner TEXT, claim_token TEXT, claimed_at TIMESTAMPTZ)";
/// The `jobs` table on MySQL/MariaDB: a token compared byte for byte, and indexed.
#[cfg(all(not(feature = "sqlite"), not(feature = "postgres"), feature = "mysql"))]
#[allow(dead_code)]
const JOBS_DDL: &str = "CREATE TABLE jobs (id BIGINT PRIMARY KEY, status VARCHAR(16) NOT NULL, \
                        owner VARCHAR(255), claim_token VARCHAR(255) COLLATE utf8mb4_bin, \
                        claimed_at DATETIME(6), INDEX jobs_token (claim_token))";

/// Makes the `jobs` table, with job 1 queued, and the `fenced_jobs` table, with job 1.
#[allow(dead_code)]
fn make_jobs(conn: &mut DocConnection) -> Result<(), diesel_lease::Error> {
    diesel::sql_query(JOBS_DDL).execute(conn)?;
    diesel::sql_query("INSERT INTO jobs (id, status) VALUES (1, 'queued')").execute(conn)?;
    diesel::sql_query(format!(
        "CREATE TABLE fenced_jobs (id BIGINT PRIMARY KEY, owner VARCHAR(255), \
         claim_token VARCHAR(255), claimed_at {TIMESTAMP}, fence BIGINT NOT NULL DEFAULT 0)"
    ))
    .execute(conn)?;
    diesel::sql_query("INSERT INTO fenced_jobs (id) VALUES (1)").execute(conn)?;
    Ok(())
}

/// An empty in-memory SQLite database.
#[cfg(feature = "sqlite")]
#[allow(dead_code)]
pub(crate) fn empty_connection() -> Result<DocConnection, diesel_lease::Error> {
    Ok(DocConnection::establish(":memory:")?)
}

/// An in-memory SQLite database with one queued job.
#[cfg(feature = "sqlite")]
#[allow(dead_code)]
fn jobs_connection() -> Result<DocConnection, diesel_lease::Error> {
    let mut conn = DocConnection::establish(":memory:")?;
    make_jobs(&mut conn)?;
    Ok(conn)
}

/// A pool of SQLite connections to a database file of its own.
#[cfg(feature = "sqlite")]
#[allow(dead_code)]
fn doc_pool(
    size: u32,
) -> Result<diesel::r2d2::Pool<diesel::r2d2::ConnectionManager<DocConnection>>, diesel_lease::Error>
{
    let file =
        std::env::temp_dir().join(format!("diesel-lease-doctest-{}.db", uuid::Uuid::new_v4()));
    Ok(diesel::r2d2::Pool::builder()
        .max_size(size)
        .connection_customizer(Box::new(diesel_lease::sqlite::SqlitePragmas::default()))
        .build(diesel::r2d2::ConnectionManager::new(file.to_string_lossy()))?)
}

/// The server's URL; when it is not set, the doctest is skipped (it exits, passing), unless
/// `LEASE_TEST_REQUIRE_ALL_BACKENDS` requires every backend.
#[cfg(not(feature = "sqlite"))]
#[allow(dead_code)]
fn server_url() -> String {
    let variable = if cfg!(feature = "postgres") {
        "PG_DATABASE_URL"
    } else {
        "MYSQL_DATABASE_URL"
    };
    match std::env::var(variable) {
        Ok(url) if !url.trim().is_empty() => url,
        _ if std::env::var_os("LEASE_TEST_REQUIRE_ALL_BACKENDS").is_some() => {
            panic!(
                "{variable} is not set, and LEASE_TEST_REQUIRE_ALL_BACKENDS requires every backend"
            )
        }
        _ => {
            eprintln!("SKIPPED: {variable} is not set");
            std::process::exit(0)
        }
    }
}

/// A schema (PostgreSQL) or database (MySQL) of one doctest's own: every connection of its pool
/// works in it, and it is dropped when the pool is.
#[cfg(not(feature = "sqlite"))]
#[derive(Debug)]
struct Scratch {
    url: String,
    name: String,
}

#[cfg(not(feature = "sqlite"))]
impl Scratch {
    #[allow(dead_code)]
    fn new(url: String) -> Result<Self, diesel_lease::Error> {
        let name = format!("doctest_{}", uuid::Uuid::new_v4().simple());
        let kind = if cfg!(feature = "postgres") {
            "SCHEMA"
        } else {
            "DATABASE"
        };
        let mut conn = DocConnection::establish(&url)?;
        diesel::connection::SimpleConnection::batch_execute(
            &mut conn,
            &format!("CREATE {kind} {name}"),
        )?;
        Ok(Scratch { url, name })
    }
}

#[cfg(not(feature = "sqlite"))]
impl diesel::r2d2::CustomizeConnection<DocConnection, diesel::r2d2::Error> for Scratch {
    fn on_acquire(&self, conn: &mut DocConnection) -> Result<(), diesel::r2d2::Error> {
        let enter = if cfg!(feature = "postgres") {
            "SET search_path TO"
        } else {
            "USE"
        };
        diesel::connection::SimpleConnection::batch_execute(conn, &format!("{enter} {}", self.name))
            .map_err(diesel::r2d2::Error::QueryError)
    }
}

#[cfg(not(feature = "sqlite"))]
impl Drop for Scratch {
    fn drop(&mut self) {
        let drop = if cfg!(feature = "postgres") {
            format!("DROP SCHEMA IF EXISTS {} CASCADE", self.name)
        } else {
            format!("DROP DATABASE IF EXISTS {}", self.name)
        };
        if let Ok(mut conn) = DocConnection::establish(&self.url) {
            let _ = diesel::connection::SimpleConnection::batch_execute(&mut conn, &drop);
        }
    }
}

/// A pool of `size` connections to a schema or database of the doctest's own.
#[cfg(not(feature = "sqlite"))]
#[allow(dead_code)]
fn doc_pool(
    size: u32,
) -> Result<diesel::r2d2::Pool<diesel::r2d2::ConnectionManager<DocConnection>>, diesel_lease::Error>
{
    let url = server_url();
    let scratch = Scratch::new(url.clone())?;
    Ok(diesel::r2d2::Pool::builder()
        .max_size(size)
        .connection_customizer(Box::new(scratch))
        .build(diesel::r2d2::ConnectionManager::new(url))?)
}

/// A connection to an empty schema or database of the doctest's own.
#[cfg(not(feature = "sqlite"))]
#[allow(dead_code)]
pub(crate) fn empty_connection() -> Result<
    diesel::r2d2::PooledConnection<diesel::r2d2::ConnectionManager<DocConnection>>,
    diesel_lease::Error,
> {
    Ok(doc_pool(1)?.get()?)
}

/// A connection to a schema or database of the doctest's own, with one queued job.
#[cfg(not(feature = "sqlite"))]
#[allow(dead_code)]
fn jobs_connection() -> Result<
    diesel::r2d2::PooledConnection<diesel::r2d2::ConnectionManager<DocConnection>>,
    diesel_lease::Error,
> {
    let mut conn = doc_pool(1)?.get()?;
    make_jobs(&mut *conn)?;
    Ok(conn)
}

/// A pool of connections to a database of its own, with one queued job.
#[allow(dead_code)]
fn jobs_pool() -> Result<
    diesel::r2d2::Pool<diesel::r2d2::ConnectionManager<DocConnection>>,
    Box<dyn std::error::Error>,
> {
    jobs_pool_of(2)
}

/// [`jobs_pool`] with `size` connections: one for each racer of a race.
#[allow(dead_code)]
fn jobs_pool_of(
    size: u32,
) -> Result<
    diesel::r2d2::Pool<diesel::r2d2::ConnectionManager<DocConnection>>,
    Box<dyn std::error::Error>,
> {
    let pool = doc_pool(size)?;
    make_jobs(&mut *pool.get()?)?;
    Ok(pool)
}
