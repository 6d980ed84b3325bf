/// Everything that can go wrong in the generic lease layer.
///
/// Invalid input is rejected before anything is sent to the database, so an `Invalid*` error
/// always means that nothing was written. Database and pool errors are passed on, never panicked
/// on; [`Error::is_retryable`] tells the ones worth trying again.
///
/// ```
/// use diesel_lease::{Claim, Error, Lease};
///
/// assert!(matches!(Lease::from_millis(0).map_err(Error::from), Err(Error::InvalidLease(_))));
/// assert!(matches!(Claim::new(""), Err(Error::InvalidOwner(_))));
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The database refused or failed a statement.
    #[error("database error: {0}")]
    Database(diesel::result::Error),
    /// SQLite's database was locked by another writer for longer than the connection's
    /// `busy_timeout`: nothing was written, and trying again is safe. Give pooled connections a
    /// `busy_timeout` (see `diesel_lease::sqlite::SqlitePragmas`) so that this stays rare.
    #[error("the database is busy (locked by another writer): {0}")]
    Busy(diesel::result::Error),
    /// A connection could not be established.
    #[error("connection error: {0}")]
    Connection(#[from] diesel::ConnectionError),
    /// The connection pool gave no connection.
    #[error("connection pool error: {0}")]
    Pool(#[from] r2d2::Error),
    /// A lease or age is shorter or longer than a lease may be.
    #[error("invalid lease: {0}")]
    InvalidLease(crate::lease::OutOfRange),
    /// A keeper's settings cannot keep its lease (a renewal no sooner than the lease less the
    /// margin, a shortest hold longer than the longest), or a keeper and a claim disagree on the
    /// lease.
    #[error("invalid keeper settings: {0}")]
    InvalidSettings(String),
    /// An owner (node or worker name) is empty, too long or holds control characters.
    #[error("invalid owner: {0}")]
    InvalidOwner(String),
    /// A claim token is empty, too long or holds control characters.
    #[error("invalid claim token: {0}")]
    InvalidToken(String),
    /// A keeper's renewal thread could not be started.
    #[error("the keeper's thread could not start: {0}")]
    KeeperThread(#[source] std::io::Error),
    /// A keeper's [`shutdown`](crate::Keeper::shutdown) did not finish within its bound: what it
    /// had not released yet is released on a thread of its own, or runs out by its lease.
    #[error("the keeper did not stop within {0:?}: the rest is released in the background, or runs out by its lease")]
    StopTimedOut(std::time::Duration),
    /// A batch claim or reap asked for no rows, or for more than
    /// [`MAX_BATCH_SIZE`](crate::MAX_BATCH_SIZE).
    #[error("invalid batch size: {0}")]
    InvalidBatchSize(String),
    /// A [`ClaimCursor`](crate::ClaimCursor) that went through one table was given a claim of
    /// another.
    #[error("invalid cursor: {0}")]
    InvalidCursor(String),
    /// A wait ([`ClaimRow::waiting`](crate::ClaimRow::waiting),
    /// [`ClaimBatch::waiting`](crate::ClaimBatch::waiting)) of zero or past what the clock can
    /// count, or an interval between its attempts shorter than a millisecond.
    #[error("invalid wait: {0}")]
    InvalidWait(String),
    /// A wait was asked for inside a transaction of the caller's. It would sleep holding the
    /// transaction's locks and snapshot (on REPEATABLE READ it would never see the holder's
    /// release), so it is refused before anything is sent: wait outside the transaction, then
    /// begin it.
    #[error("a wait for a lease cannot run inside a transaction: it would sleep holding the transaction's locks and snapshot")]
    WaitInTransaction,
    /// A table, column or index name for the lease columns' DDL is empty, needs quoting, is too
    /// long, or names two lease columns alike; see
    /// [`LeaseColumns::up_sql`](crate::LeaseColumns::up_sql).
    #[error("invalid identifier: {0}")]
    InvalidIdentifier(String),
    /// A migration's directory name is empty or holds other than ASCII letters, digits, `-` and
    /// `_`; see [`LeaseColumns::write_migration`](crate::LeaseColumns::write_migration).
    #[error("invalid migration name: {0}")]
    InvalidMigrationName(String),
    /// A threshold of a health reading is out of range (a share outside 0 to 1); see
    /// [`HealthThresholds`](crate::HealthThresholds).
    #[error("invalid threshold: {0}")]
    InvalidThreshold(String),
    /// The table whose health was asked for is not where the connection looks for it (its
    /// `search_path` on PostgreSQL, its database on MySQL/MariaDB, its attached schemas on
    /// SQLite), or is no table.
    #[error("table not found: {0}")]
    TableNotFound(String),
    /// A migration's files could not be written, or its directory exists already.
    #[error("the migration's files could not be written: {0}")]
    MigrationFiles(#[source] std::io::Error),
}

impl Error {
    /// Whether trying the same call again may succeed: SQLite was busy.
    ///
    /// ```
    /// use diesel_lease::Error;
    ///
    /// assert!(!Error::InvalidOwner("empty".into()).is_retryable());
    /// ```
    pub fn is_retryable(&self) -> bool {
        matches!(self, Error::Busy(_))
    }
}

impl From<crate::OutOfRange> for Error {
    fn from(out_of_range: crate::OutOfRange) -> Self {
        Error::InvalidLease(out_of_range)
    }
}

impl From<diesel::result::Error> for Error {
    fn from(error: diesel::result::Error) -> Self {
        if is_busy(&error) {
            Error::Busy(error)
        } else {
            Error::Database(error)
        }
    }
}

/// SQLite's `SQLITE_BUSY` and `SQLITE_LOCKED`, which Diesel reports as an unknown database error
/// with SQLite's own message.
fn is_busy(error: &diesel::result::Error) -> bool {
    match error {
        diesel::result::Error::DatabaseError(diesel::result::DatabaseErrorKind::Unknown, info) => {
            matches!(
                info.message(),
                "database is locked" | "database table is locked" | "database is busy"
            )
        }
        _ => false,
    }
}

/// The conversions into `$error`, a ready-made lock's error whose `Lease` variant holds this
/// layer's [`Error`], from what that variant holds: a database error, a lease out of range, a
/// pool's error, so that `?` gives them to its users as this layer's.
#[doc(hidden)]
#[macro_export]
macro_rules! __lease_errors_convert_into {
    ($error:ty) => {
        impl From<$crate::__private::diesel::result::Error> for $error {
            fn from(error: $crate::__private::diesel::result::Error) -> Self {
                Self::Lease(error.into())
            }
        }

        impl From<$crate::OutOfRange> for $error {
            fn from(out_of_range: $crate::OutOfRange) -> Self {
                Self::Lease(out_of_range.into())
            }
        }

        impl From<$crate::__private::diesel::r2d2::PoolError> for $error {
            fn from(error: $crate::__private::diesel::r2d2::PoolError) -> Self {
                Self::Lease(error.into())
            }
        }
    };
}
