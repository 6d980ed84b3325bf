//! What a reading of a table's health measures: one name per measure, shared by every backend.

/// What a reading ([`TableHealth::readings`](crate::health::TableHealth::readings)) measures.
/// Each backend reads the metrics it has and leaves the others out: PostgreSQL its statistics of the table's updates, row versions and
/// vacuums and the transaction holding its cleanup back; MySQL/MariaDB the undo history not yet
/// purged, the oldest open transaction and the table's free space; SQLite its write-ahead log
/// and free pages. [`name`](Self::name) is a stable snake_case name, for metrics.
///
/// ```
/// use diesel_lease::health::Metric;
///
/// assert_eq!(Metric::HotUpdateShare.name(), "hot_update_share");
/// assert!(Metric::HotUpdateShare.meaning().contains("HOT"));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Metric {
    /// PostgreSQL: rows updated since the statistics were reset (HOT updates included).
    Updates,
    /// PostgreSQL: updates that were HOT: the new row version went on the same page and no
    /// index got a new entry.
    HotUpdates,
    /// PostgreSQL: the share of updates that were HOT. A renewal changes one column, no index
    /// should cover it, so renewals should nearly all be HOT.
    HotUpdateShare,
    /// The rows the table holds, as the database estimates them (PostgreSQL's live row
    /// versions, MySQL/MariaDB's `TABLE_ROWS`).
    LiveRows,
    /// PostgreSQL: row versions that no transaction will read again, waiting for a vacuum (or for
    /// the transaction holding the cleanup horizon back to end).
    DeadRows,
    /// PostgreSQL: dead row versions as a share of all the table's row versions.
    DeadRowShare,
    /// PostgreSQL: how long ago the table was last vacuumed, by hand or by autovacuum, by the
    /// database's clock; absent when it never was (since the statistics were reset).
    SinceVacuum,
    /// PostgreSQL: how long ago autovacuum last vacuumed the table; absent when it never did.
    SinceAutovacuum,
    /// PostgreSQL: whether autovacuum may vacuum the table (the server's `autovacuum` setting
    /// and the table's `autovacuum_enabled`).
    Autovacuum,
    /// PostgreSQL: the table's fillfactor, the share of each page that inserts fill, leaving the
    /// rest for HOT updates.
    Fillfactor,
    /// How long the oldest transaction that keeps old row versions has been open, by the
    /// database's clock: on PostgreSQL the oldest of what holds the cleanup horizon back (another
    /// session of this database, a session of any database holding a transaction id, a prepared
    /// transaction, a replication slot); on MySQL/MariaDB the
    /// oldest open transaction of another session at REPEATABLE READ or SERIALIZABLE, which keeps
    /// its read view from its first read to its end (to the second).
    OldestTransactionAge,
    /// PostgreSQL: how many transaction ids old the horizon that transaction holds is.
    OldestTransactionXids,
    /// The session of that transaction: its backend's process id on PostgreSQL, its connection
    /// id on MySQL/MariaDB; absent for a prepared transaction.
    OldestTransactionSession,
    /// What that transaction is, in words: which session, in what state, doing what.
    OldestTransaction,
    /// MySQL/MariaDB: the history list length, undo records of committed transactions that purge
    /// has not removed yet, for the whole server (`trx_rseg_history_len`).
    HistoryListLength,
    /// SQLite: the frames in the write-ahead log.
    WalFrames,
    /// SQLite: the frames of the write-ahead log that a passive checkpoint could not copy into
    /// the database: a reader holds a snapshot older than they are.
    WalFramesLeft,
    /// SQLite: the bytes of the write-ahead log's frames.
    WalBytes,
    /// The size of a page, in bytes (PostgreSQL's block, InnoDB's page, SQLite's page).
    PageSize,
    /// The pages of the table's rows (PostgreSQL), of the table with its indexes and free space
    /// (MySQL/MariaDB), or of the database file (SQLite).
    Pages,
    /// The pages no row uses: SQLite's free list, MySQL/MariaDB's `DATA_FREE`.
    FreePages,
    /// Free pages as a share of all pages.
    FreeSpaceShare,
}

impl Metric {
    /// The metric's stable snake_case name.
    ///
    /// ```
    /// assert_eq!(diesel_lease::health::Metric::OldestTransactionAge.name(), "oldest_transaction_age");
    /// ```
    pub fn name(self) -> &'static str {
        self.describe().0
    }

    /// What the metric measures, in plain words.
    ///
    /// ```
    /// let meaning = diesel_lease::health::Metric::WalFramesLeft.meaning();
    /// assert!(meaning.contains("checkpoint"));
    /// ```
    pub fn meaning(self) -> &'static str {
        self.describe().1
    }

    fn describe(self) -> (&'static str, &'static str) {
        match self {
            Self::Updates => ("updates", "rows updated since the statistics were reset"),
            Self::HotUpdates => (
                "hot_updates",
                "updates that were HOT: no index entry written",
            ),
            Self::HotUpdateShare => ("hot_update_share", "the share of updates that were HOT"),
            Self::LiveRows => ("live_rows", "rows in the table, as estimated"),
            Self::DeadRows => ("dead_rows", "dead row versions waiting for a vacuum"),
            Self::DeadRowShare => (
                "dead_row_share",
                "dead row versions as a share of all row versions",
            ),
            Self::SinceVacuum => (
                "since_vacuum",
                "time since the last vacuum, by hand or autovacuum",
            ),
            Self::SinceAutovacuum => ("since_autovacuum", "time since the last autovacuum"),
            Self::Autovacuum => ("autovacuum", "whether autovacuum may vacuum the table"),
            Self::Fillfactor => ("fillfactor", "the share of each page that inserts fill"),
            Self::OldestTransactionAge => (
                "oldest_transaction_age",
                "how long the oldest transaction keeping old row versions has been open",
            ),
            Self::OldestTransactionXids => (
                "oldest_transaction_xids",
                "how many transaction ids old that transaction's horizon is",
            ),
            Self::OldestTransactionSession => (
                "oldest_transaction_session",
                "the session of that transaction",
            ),
            Self::OldestTransaction => ("oldest_transaction", "that transaction, in words"),
            Self::HistoryListLength => (
                "history_list_length",
                "undo records of committed transactions not yet purged",
            ),
            Self::WalFrames => ("wal_frames", "frames in the write-ahead log"),
            Self::WalFramesLeft => (
                "wal_frames_left",
                "frames a passive checkpoint could not copy back",
            ),
            Self::WalBytes => ("wal_bytes", "bytes of the write-ahead log's frames"),
            Self::PageSize => ("page_size", "the size of a page"),
            Self::Pages => ("pages", "pages of the table or database file"),
            Self::FreePages => ("free_pages", "pages no row uses"),
            Self::FreeSpaceShare => ("free_space_share", "free pages as a share of all pages"),
        }
    }
}

impl std::fmt::Display for Metric {
    /// The metric's [`name`](Self::name).
    ///
    /// ```
    /// assert_eq!(diesel_lease::health::Metric::DeadRows.to_string(), "dead_rows");
    /// ```
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
