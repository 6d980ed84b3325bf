//! What the examples share: the backend named by `DATABASE_URL` (embedded SQLite when unset),
//! an r2d2 pool set up as a production application would, and `on_backend!`, which calls an
//! example's code, written once as functions generic over the connection, with a pool of the
//! backend named.
#![allow(dead_code)]

use diesel::r2d2::{ConnectionManager, CustomizeConnection, Pool, R2D2Connection};

/// The database the example runs on.
#[derive(Debug)]
pub enum Backend {
    /// An SQLite file of the example's own, in the temporary directory.
    Sqlite(String),
    Postgres(String),
    Mysql(String),
}

impl Backend {
    /// `DATABASE_URL` if set (postgres://… or mysql://…), else a new embedded SQLite file.
    pub fn from_env(example: &str) -> Result<Self, String> {
        match std::env::var("DATABASE_URL")
            .ok()
            .filter(|url| !url.is_empty())
            .ok_or(())
        {
            Err(()) => {
                let file = std::env::temp_dir()
                    .join(format!("diesel-lease-{example}-{}.db", std::process::id()));
                let _ = std::fs::remove_file(&file);
                Ok(Self::Sqlite(file.to_string_lossy().into_owned()))
            }
            Ok(url) if url.starts_with("postgres") => Ok(Self::Postgres(url)),
            Ok(url) if url.starts_with("mysql") => Ok(Self::Mysql(url)),
            Ok(url) if url.starts_with("sqlite://") => {
                Ok(Self::Sqlite(url["sqlite://".len()..].to_owned()))
            }
            Ok(url) => Err(format!(
                "DATABASE_URL {url:?}: expected postgres://, mysql:// or sqlite://"
            )),
        }
    }

    /// Where the database is: its URL, or the SQLite file's path.
    pub fn url(&self) -> &str {
        match self {
            Self::Sqlite(url) | Self::Postgres(url) | Self::Mysql(url) => url,
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            Self::Sqlite(_) => "SQLite (embedded)",
            Self::Postgres(_) => "PostgreSQL",
            Self::Mysql(_) => "MySQL/MariaDB",
        }
    }
}

/// A connection the examples pool, with what its backend needs on each connection.
pub trait Pooled: R2D2Connection + 'static {
    fn customizer() -> Option<Box<dyn CustomizeConnection<Self, diesel::r2d2::Error>>> {
        None
    }
}

/// Concurrent writers wait for each other (up to 10 s) instead of failing, and write ahead.
#[cfg(feature = "sqlite")]
impl Pooled for diesel::SqliteConnection {
    fn customizer() -> Option<Box<dyn CustomizeConnection<Self, diesel::r2d2::Error>>> {
        let pragmas = diesel_lease::sqlite::SqlitePragmas::default()
            .busy_timeout(std::time::Duration::from_secs(10));
        Some(Box::new(pragmas))
    }
}

#[cfg(feature = "postgres")]
impl Pooled for diesel::PgConnection {}

#[cfg(feature = "mysql")]
impl Pooled for diesel::MysqlConnection {}

/// A pool of `size` connections to `url`.
pub fn pool<C: Pooled>(
    url: &str,
    size: u32,
) -> Result<Pool<ConnectionManager<C>>, diesel_lease::Error> {
    let builder = Pool::builder().max_size(size);
    let builder = match C::customizer() {
        Some(customizer) => builder.connection_customizer(customizer),
        None => builder,
    };
    Ok(builder.build(ConnectionManager::new(url))?)
}

/// The start of the example's timeline (display only: every lease decision is the database's).
#[allow(clippy::disallowed_methods)]
pub fn timeline_start() -> std::time::Instant {
    std::time::Instant::now()
}

/// The process's monotonic clock, for what the application counts of a hold it was granted:
/// from an instant taken before the call that granted it, a hold ends no later in the process
/// than in the database. Never for who holds a row: that is the database's.
#[allow(clippy::disallowed_methods)]
pub fn monotonic_now() -> std::time::Instant {
    std::time::Instant::now()
}

/// Milliseconds since the example started, for its timeline (display only: every lease decision
/// is the database's).
pub fn millis_since(start: std::time::Instant) -> u128 {
    start.elapsed().as_millis()
}

/// The error for a backend whose Cargo feature is off.
pub fn feature_off(backend: &Backend) -> String {
    let feature = match backend {
        Backend::Sqlite(_) => "sqlite",
        Backend::Postgres(_) => "postgres",
        Backend::Mysql(_) => "mysql",
    };
    format!(
        "{} needs the `{feature}` feature: cargo run --example … --features {feature}",
        backend.name()
    )
}

/// What an example's run gives back: whether every invariant held.
pub type Outcome = Result<bool, Box<dyn std::error::Error>>;

/// Runs `example` on the backend `DATABASE_URL` names: success when `run` says every invariant held.
pub fn main(example: &str, run: impl FnOnce(&Backend) -> Outcome) -> std::process::ExitCode {
    let outcome = Backend::from_env(example)
        .map_err(Into::into)
        .and_then(|backend| {
            println!("{example} on {}", backend.name());
            run(&backend)
        });
    match outcome {
        Ok(true) => std::process::ExitCode::SUCCESS,
        Ok(false) => std::process::ExitCode::FAILURE,
        Err(error) => {
            eprintln!("error: {error}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// `$run`, a call of the example's code generic over the connection, with `$pool` a pool of
/// `$size` connections to `$backend`, typed for that backend; an error for a backend whose
/// feature is off. The code is compiled once per connection type by the generic call, not by
/// including a file per backend.
macro_rules! on_backend {
    ($backend:expr, $size:expr, |$pool:ident| $run:expr) => {
        match $backend {
            #[cfg(feature = "sqlite")]
            support::Backend::Sqlite(path) => {
                let $pool = support::pool::<diesel::SqliteConnection>(path, $size)?;
                $run
            }
            #[cfg(feature = "postgres")]
            support::Backend::Postgres(url) => {
                let $pool = support::pool::<diesel::PgConnection>(url, $size)?;
                $run
            }
            #[cfg(feature = "mysql")]
            support::Backend::Mysql(url) => {
                let $pool = support::pool::<diesel::MysqlConnection>(url, $size)?;
                $run
            }
            #[allow(unreachable_patterns)]
            other => Err(support::feature_off(other).into()),
        }
    };
}
