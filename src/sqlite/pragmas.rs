//! The settings a pool of SQLite connections needs: WAL and a busy timeout.
use diesel::QueryResult;

/// The settings a pool of SQLite connections needs, for an r2d2 pool's
/// `connection_customizer`: write-ahead logging, so that readers never block the writer, and a
/// `busy_timeout`, so that a writer waits for another rather than failing at once.
///
/// A claim that still finds the database locked when the timeout runs out is
/// [`Error::Busy`](crate::Error::Busy): nothing was written, and it may be tried again.
///
/// ```
/// use std::time::Duration;
/// use diesel::r2d2::{ConnectionManager, Pool};
/// use diesel::SqliteConnection;
/// use diesel_lease::sqlite::SqlitePragmas;
///
/// let file = std::env::temp_dir().join(format!("pragmas-{}.db", std::process::id()));
/// let pool = Pool::builder()
///     .max_size(4)
///     .connection_customizer(Box::new(SqlitePragmas::default().busy_timeout(Duration::from_secs(5))))
///     .build(ConnectionManager::<SqliteConnection>::new(file.to_string_lossy()))?;
/// # let _ = pool.get()?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SqlitePragmas {
    busy_timeout: std::time::Duration,
}

impl Default for SqlitePragmas {
    /// WAL, and a writer waits up to 5 seconds for another.
    fn default() -> Self {
        Self {
            busy_timeout: std::time::Duration::from_secs(5),
        }
    }
}

impl SqlitePragmas {
    /// How long a writer waits for another before [`Error::Busy`](crate::Error::Busy).
    ///
    /// ```
    /// let pragmas = diesel_lease::sqlite::SqlitePragmas::default()
    ///     .busy_timeout(std::time::Duration::from_secs(30));
    /// # let _ = pragmas;
    /// ```
    pub fn busy_timeout(self, busy_timeout: std::time::Duration) -> Self {
        Self { busy_timeout }
    }

    /// Sets the pragmas on one connection.
    ///
    /// ```
    /// use diesel::Connection;
    ///
    /// let conn = &mut diesel::SqliteConnection::establish(":memory:")?;
    /// diesel_lease::sqlite::SqlitePragmas::default().apply(conn)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn apply(&self, conn: &mut diesel::SqliteConnection) -> QueryResult<()> {
        use diesel::connection::SimpleConnection;
        conn.batch_execute(&format!(
            "PRAGMA busy_timeout = {}; PRAGMA journal_mode = WAL;",
            self.busy_timeout.as_millis()
        ))
    }
}

impl diesel::r2d2::CustomizeConnection<diesel::SqliteConnection, diesel::r2d2::Error>
    for SqlitePragmas
{
    fn on_acquire(&self, conn: &mut diesel::SqliteConnection) -> Result<(), diesel::r2d2::Error> {
        self.apply(conn).map_err(diesel::r2d2::Error::QueryError)
    }
}
