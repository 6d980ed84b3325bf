//! How a backend spells the lease columns' DDL.
use diesel::backend::Backend;

/// A backend whose lease columns diesel-lease writes the DDL of: their SQL types, and how its
/// `ALTER TABLE` and `DROP INDEX` are spelled.
///
/// Implemented for `Pg`, `Mysql` and `Sqlite` in their backend modules; a supertrait of
/// [`LeaseBackend`](crate::backend::LeaseBackend), which is what generic code bounds; used through
/// [`LeaseColumns::up_sql`](crate::LeaseColumns::up_sql).
///
/// ```
/// # #[cfg(feature = "sqlite")] {
/// use diesel::sqlite::Sqlite;
/// use diesel_lease::__private::backend::LeaseDdl;
///
/// assert_eq!(<Sqlite as LeaseDdl>::CLAIMED_AT_TYPE, "TEXT");
/// # }
/// ```
pub trait LeaseDdl: Backend {
    /// The owner column's type (nullable: `NULL` is free).
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")] {
    /// # use diesel_lease::__private::backend::LeaseDdl;
    /// assert_eq!(<diesel::sqlite::Sqlite as LeaseDdl>::OWNER_TYPE, "TEXT");
    /// # }
    /// ```
    const OWNER_TYPE: &'static str;
    /// The claim token column's type (nullable); it must compare exactly.
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")] {
    /// # use diesel_lease::__private::backend::LeaseDdl;
    /// assert_eq!(<diesel::sqlite::Sqlite as LeaseDdl>::CLAIM_TOKEN_TYPE, "TEXT");
    /// # }
    /// ```
    const CLAIM_TOKEN_TYPE: &'static str;
    /// The `claimed_at` column's type (nullable), which
    /// [`UtcTimestamp`](crate::sql_types::UtcTimestamp) reads and writes.
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")] {
    /// # use diesel_lease::__private::backend::LeaseDdl;
    /// assert_eq!(<diesel::sqlite::Sqlite as LeaseDdl>::CLAIMED_AT_TYPE, "TEXT");
    /// # }
    /// ```
    const CLAIMED_AT_TYPE: &'static str;
    /// The character that quotes an identifier.
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")] {
    /// # use diesel_lease::__private::backend::LeaseDdl;
    /// assert_eq!(<diesel::sqlite::Sqlite as LeaseDdl>::QUOTE, '"');
    /// # }
    /// ```
    const QUOTE: char;
    /// Whether one `ALTER TABLE` adds or drops a single column only (SQLite's).
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")] {
    /// # use diesel_lease::__private::backend::LeaseDdl;
    /// assert!(<diesel::sqlite::Sqlite as LeaseDdl>::ONE_COLUMN_PER_ALTER);
    /// # }
    /// ```
    const ONE_COLUMN_PER_ALTER: bool;
    /// Whether `DROP INDEX` names the index's table too (MySQL's and MariaDB's).
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")] {
    /// # use diesel_lease::__private::backend::LeaseDdl;
    /// assert!(!<diesel::sqlite::Sqlite as LeaseDdl>::DROP_INDEX_NAMES_TABLE);
    /// # }
    /// ```
    const DROP_INDEX_NAMES_TABLE: bool;

    /// The backend's own advice on the lease columns, as SQL comment lines, given the quoted
    /// names of the table and its `claimed_at` column.
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")] {
    /// # use diesel_lease::__private::backend::LeaseDdl;
    /// let advice = <diesel::sqlite::Sqlite as LeaseDdl>::advice("\"jobs\"", "\"claimed_at\"");
    /// assert!(advice.lines().all(|line| line.starts_with("-- ")));
    /// # }
    /// ```
    fn advice(table: &str, claimed_at: &str) -> String;

    /// The statement that creates the index a claim of the rows where `column = 'value'` in the
    /// order of `key` needs ([`ClaimIndex`](crate::ClaimIndex)), given the quoted names of the
    /// index, the table, the key and the column, and the value as it is: a partial index on the
    /// key over those rows; on MySQL/MariaDB, which has none, an index on the column and then
    /// the key.
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")] {
    /// # use diesel_lease::__private::backend::LeaseDdl;
    /// let create = <diesel::sqlite::Sqlite as LeaseDdl>::claim_index("\"i\"", "\"jobs\"", "\"id\"", "\"status\"", "queued");
    /// assert_eq!(create, "CREATE INDEX \"i\" ON \"jobs\" (\"id\") WHERE \"status\" = 'queued';\n");
    /// # }
    /// ```
    fn claim_index(index: &str, table: &str, key: &str, column: &str, value: &str) -> String {
        format!("CREATE INDEX {index} ON {table} ({key}) WHERE {column} = '{value}';\n")
    }

    /// The storage settings a lease table gets, as SQL statements for `up.sql`, given the
    /// table's quoted name: PostgreSQL's fillfactor, which leaves room on each page for the row
    /// versions renewals write; none elsewhere.
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")] {
    /// # use diesel_lease::__private::backend::LeaseDdl;
    /// assert_eq!(<diesel::sqlite::Sqlite as LeaseDdl>::storage("\"jobs\""), "");
    /// # }
    /// ```
    fn storage(table: &str) -> String {
        let _ = table;
        String::new()
    }

    /// The SQL statements for `down.sql` that set back what [`storage`](Self::storage) set, to
    /// the backend's defaults.
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")] {
    /// # use diesel_lease::__private::backend::LeaseDdl;
    /// assert_eq!(<diesel::sqlite::Sqlite as LeaseDdl>::storage_reset("\"jobs\""), "");
    /// # }
    /// ```
    fn storage_reset(table: &str) -> String {
        let _ = table;
        String::new()
    }
}
