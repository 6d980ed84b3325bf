//! What both examples share: the backend named by `DATABASE_URL` (embedded SQLite when unset),
//! an r2d2 pool set up as a production application would, and the code that compiles an
//! example for each backend and runs it on the one named.
#![allow(dead_code)]

use diesel::connection::SimpleConnection;
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

    pub fn name(&self) -> &'static str {
        match self {
            Self::Sqlite(_) => "SQLite (embedded)",
            Self::Postgres(_) => "PostgreSQL",
            Self::Mysql(_) => "MySQL/MariaDB",
        }
    }
}

/// SQLite connections wait for the writer instead of failing, and write ahead.
#[derive(Debug)]
struct SqlitePragmas;

impl<C: SimpleConnection> CustomizeConnection<C, diesel::r2d2::Error> for SqlitePragmas {
    fn on_acquire(&self, conn: &mut C) -> Result<(), diesel::r2d2::Error> {
        conn.batch_execute(
            "PRAGMA busy_timeout = 10000; PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;",
        )
        .map_err(diesel::r2d2::Error::QueryError)
    }
}

/// A pool of `size` connections to `url`; SQLite's get the pragmas a concurrent application needs.
pub fn pool<C: R2D2Connection + SimpleConnection + 'static>(
    url: &str,
    size: u32,
    sqlite: bool,
) -> Result<Pool<ConnectionManager<C>>, diesel_lease::Error> {
    let builder = Pool::builder().max_size(size);
    let builder = if sqlite {
        builder.connection_customizer(Box::new(SqlitePragmas))
    } else {
        builder
    };
    Ok(builder.build(ConnectionManager::new(url))?)
}

/// The start of the example's timeline (display only: every lease decision is the database's).
#[allow(clippy::disallowed_methods)]
pub fn timeline_start() -> std::time::Instant {
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

/// Runs `example` on the backend `DATABASE_URL` names: success when `run` says every invariant held.
pub fn main(
    example: &str,
    run: impl FnOnce(&Backend) -> Result<bool, String>,
) -> std::process::ExitCode {
    let outcome = Backend::from_env(example).and_then(|backend| {
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

/// Compiles the example's code, written once in `$file` with `Conn` as its connection type, for
/// every backend whose feature is on, and defines `run`, which runs it on the backend
/// `DATABASE_URL` names. `$file`'s `run(url, sqlite, ..)` gets what follows per backend, if any.
macro_rules! on_every_backend {
    ($file:literal $(, sqlite: $sqlite:expr, postgres: $postgres:expr, mysql: $mysql:expr)?) => {
        #[cfg(feature = "sqlite")]
        mod on_sqlite {
            type Conn = diesel::SqliteConnection;
            include!($file);
        }

        #[cfg(feature = "postgres")]
        mod on_postgres {
            type Conn = diesel::PgConnection;
            include!($file);
        }

        #[cfg(feature = "mysql")]
        mod on_mysql {
            type Conn = diesel::MysqlConnection;
            include!($file);
        }

        fn run(backend: &support::Backend) -> Result<bool, String> {
            match backend {
                #[cfg(feature = "sqlite")]
                support::Backend::Sqlite(path) => {
                    on_sqlite::run(path, true $(, $sqlite)?).map_err(|e| e.to_string())
                }
                #[cfg(feature = "postgres")]
                support::Backend::Postgres(url) => {
                    on_postgres::run(url, false $(, $postgres)?).map_err(|e| e.to_string())
                }
                #[cfg(feature = "mysql")]
                support::Backend::Mysql(url) => {
                    on_mysql::run(url, false $(, $mysql)?).map_err(|e| e.to_string())
                }
                #[allow(unreachable_patterns)]
                other => Err(support::feature_off(other)),
            }
        }
    };
}
