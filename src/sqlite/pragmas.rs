//! The settings a pool of SQLite connections needs: WAL and a busy timeout, and, if asked, a
//! COMMIT that does not wait for the disk.
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
    synchronous_normal: bool,
}

impl Default for SqlitePragmas {
    /// WAL, and a writer waits up to 5 seconds for another.
    fn default() -> Self {
        Self {
            busy_timeout: std::time::Duration::from_secs(5),
            synchronous_normal: false,
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
        Self {
            busy_timeout,
            ..self
        }
    }

    /// `synchronous = NORMAL`: a COMMIT no longer waits for the write-ahead log to reach the
    /// disk (SQLite's default, `FULL`, does, holding the database's write lock meanwhile). Under
    /// heavy disk writing a COMMIT of `FULL` was seen to take 250-700 ms, past a click's hold:
    /// the statement's time dates a claim or a keep, so the call returned after its hold had
    /// run out. What it risks: the database stays consistent, and a crash of the process loses
    /// nothing, but a power loss or a crash of the operating system may undo the last
    /// transactions committed before it: a claim, a renewal, a release or the caller's finish
    /// that was acknowledged may be gone, so that a job finished may run again, and a lock
    /// released may hold until its lease runs out.
    ///
    /// ```
    /// use diesel::{Connection, RunQueryDsl};
    /// use diesel::sql_types::Integer;
    ///
    /// #[derive(diesel::QueryableByName)]
    /// struct Synchronous {
    ///     #[diesel(sql_type = Integer)]
    ///     synchronous: i32,
    /// }
    ///
    /// let file = std::env::temp_dir().join(format!("synchronous-{}.db", std::process::id()));
    /// let conn = &mut diesel::SqliteConnection::establish(&file.to_string_lossy())?;
    /// let read = |conn: &mut diesel::SqliteConnection| {
    ///     diesel::sql_query("PRAGMA synchronous").get_result::<Synchronous>(conn).map(|row| row.synchronous)
    /// };
    /// diesel_lease::sqlite::SqlitePragmas::default().apply(conn)?;
    /// assert_eq!(read(conn)?, 2, "FULL by default");
    /// diesel_lease::sqlite::SqlitePragmas::default().synchronous_normal().apply(conn)?;
    /// assert_eq!(read(conn)?, 1, "NORMAL");
    /// # std::fs::remove_file(&file).ok();
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn synchronous_normal(self) -> Self {
        Self {
            synchronous_normal: true,
            ..self
        }
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
            "PRAGMA busy_timeout = {}; PRAGMA journal_mode = WAL; PRAGMA synchronous = {};",
            self.busy_timeout.as_millis(),
            if self.synchronous_normal {
                "NORMAL"
            } else {
                "FULL"
            }
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
