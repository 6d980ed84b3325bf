//! The index a claim of queued rows in key order needs, which [`LeaseColumns`] adds to its
//! migration when asked.
//!
//! [`LeaseColumns`]: crate::LeaseColumns
use crate::backend::LeaseDdl;
use crate::Error;

/// The index a claim needs: a queue claims its rows where a status column says "queued", in the
/// order of a key, and keeps its finished rows in the table. Without an index on just the
/// claimable rows, each claim reads past every finished row before the first queued one; with
/// it, a claim's cost does not grow with the finished rows (docs/benchmarks.md, measurement 11).
///
/// PostgreSQL and SQLite get a partial index on the key over the queued rows
/// (`CREATE INDEX .. (id) WHERE status = 'queued'`); MySQL/MariaDB, which has no partial indexes,
/// an index on the status and then the key, in which the queued rows are one range in key order.
/// Claims use it when they filter on that status with that value and order by that key:
/// `.filter(jobs::status.eq("queued")).order_by(jobs::id)`. Rows whose claim ran out while they
/// were being worked on are then not queued: put them back with a reap
/// (`jobs::table.reap(n, lease).set(jobs::status.eq("queued"))`).
///
/// ```
/// # #[cfg(feature = "sqlite")] {
/// use diesel::sqlite::Sqlite;
/// use diesel_lease::{ClaimIndex, LeaseColumns};
///
/// let columns = LeaseColumns::new("jobs")
///     .claim_index(ClaimIndex::rows_where("status", "queued").in_order_of("id"));
/// assert!(columns.up_sql::<Sqlite>()?.contains(
///     r#"CREATE INDEX "jobs_claimable_idx" ON "jobs" ("id") WHERE "status" = 'queued';"#
/// ));
/// assert!(columns.down_sql::<Sqlite>()?.contains(r#"DROP INDEX "jobs_claimable_idx";"#));
/// # }
/// # Ok::<(), diesel_lease::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimIndex {
    column: String,
    value: String,
    key: String,
}

impl ClaimIndex {
    /// The claimable rows: those whose `column` holds `value` (a status, say `'queued'`), in the
    /// order of the key `id` unless [`in_order_of`](Self::in_order_of) names another.
    ///
    /// ```
    /// let _queued = diesel_lease::ClaimIndex::rows_where("status", "queued");
    /// ```
    pub fn rows_where(column: impl Into<String>, value: impl Into<String>) -> Self {
        Self {
            column: column.into(),
            value: value.into(),
            key: "id".to_owned(),
        }
    }

    /// Claims take the rows in the order of `key` (the column of their `.order_by(..)`).
    ///
    /// ```
    /// let _oldest_first = diesel_lease::ClaimIndex::rows_where("status", "queued").in_order_of("created_at");
    /// ```
    pub fn in_order_of(self, key: impl Into<String>) -> Self {
        Self {
            key: key.into(),
            ..self
        }
    }

    pub(crate) fn names(&self) -> [(&'static str, &str); 2] {
        [
            ("claim index's column", &self.column),
            ("claim index's key", &self.key),
        ]
    }

    /// Whether the value is one a migration can spell on every backend as it is: written into
    /// the DDL between single quotes, so it may hold no quote, backslash or control character.
    pub(crate) fn check_value(&self) -> Result<(), Error> {
        let plain = self
            .value
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | ' ' | '.' | ':'));
        if self.value.is_empty() || !plain {
            return Err(Error::InvalidIdentifier(format!(
                "the claim index's value {:?} is not plain (letters, digits, spaces and `_-.:`)",
                self.value
            )));
        }
        Ok(())
    }

    /// `CREATE INDEX` of the index named `index` on `table` (both quoted), for `up.sql`: of a
    /// claim index whose names and value were checked.
    pub(crate) fn create<DB: LeaseDdl>(&self, index: &str, table: &str) -> String {
        let quoted = |name: &str| format!("{quote}{name}{quote}", quote = DB::QUOTE);
        DB::claim_index(
            index,
            table,
            &quoted(&self.key),
            &quoted(&self.column),
            &self.value,
        )
    }
}
