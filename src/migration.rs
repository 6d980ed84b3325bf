//! The lease columns' DDL: a diesel migration that adds them to an existing table, per backend.
use std::path::{Path, PathBuf};

use crate::backend::{LeaseBackend, LeaseDdl};
use crate::{ClaimIndex, Error};

/// The fence's type on every backend: a claim counter that starts at 0.
const FENCE_TYPE: &str = "BIGINT NOT NULL DEFAULT 0";

/// PostgreSQL's limit on an identifier's length, the shortest of the three backends'.
const MAX_IDENTIFIER_LEN: usize = 63;

/// A table and the names of its lease columns: the migration that adds them, for a backend, as
/// SQL ([`up_sql`](Self::up_sql), [`down_sql`](Self::down_sql)) or as Diesel's migration files
/// ([`write_migration`](Self::write_migration)).
///
/// The names default to those of [`claim_lease!(table)`](crate::claim_lease): `owner`,
/// `claim_token` and `claimed_at`, and no fence.
///
/// ```
/// # #[cfg(feature = "sqlite")] {
/// use diesel::sqlite::Sqlite;
/// use diesel_lease::LeaseColumns;
///
/// let columns = LeaseColumns::new("jobs")
///     .owner("worker")
///     .claim_token("lease_token")
///     .claimed_at("leased_at")
///     .fence("fence");
/// assert!(columns.up_sql::<Sqlite>()?.contains(r#"ALTER TABLE "jobs" ADD COLUMN "lease_token" TEXT;"#));
/// assert!(columns.down_sql::<Sqlite>()?.contains(r#"ALTER TABLE "jobs" DROP COLUMN "lease_token";"#));
/// # }
/// # Ok::<(), diesel_lease::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseColumns {
    table: String,
    owner: String,
    claim_token: String,
    claimed_at: String,
    fence: Option<String>,
    claim_index: Option<ClaimIndex>,
}

impl LeaseColumns {
    /// The lease columns of `table`, with the default names and no fence.
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")] {
    /// let columns = diesel_lease::LeaseColumns::new("jobs");
    /// assert!(columns.up_sql::<diesel::sqlite::Sqlite>()?.contains(r#"ADD COLUMN "claim_token" TEXT"#));
    /// # }
    /// # Ok::<(), diesel_lease::Error>(())
    /// ```
    pub fn new(table: impl Into<String>) -> Self {
        Self {
            table: table.into(),
            owner: "owner".to_owned(),
            claim_token: "claim_token".to_owned(),
            claimed_at: "claimed_at".to_owned(),
            fence: None,
            claim_index: None,
        }
    }

    /// Names the column of who holds the row.
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")] {
    /// let columns = diesel_lease::LeaseColumns::new("jobs").owner("worker");
    /// assert!(columns.up_sql::<diesel::sqlite::Sqlite>()?.contains(r#""worker" TEXT"#));
    /// # }
    /// # Ok::<(), diesel_lease::Error>(())
    /// ```
    pub fn owner(self, column: impl Into<String>) -> Self {
        Self {
            owner: column.into(),
            ..self
        }
    }

    /// Names the column of which claim holds the row; it gets the index.
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")] {
    /// let columns = diesel_lease::LeaseColumns::new("jobs").claim_token("lease_token");
    /// let up = columns.up_sql::<diesel::sqlite::Sqlite>()?;
    /// assert!(up.contains(r#"CREATE INDEX "jobs_lease_token_idx" ON "jobs" ("lease_token");"#));
    /// # }
    /// # Ok::<(), diesel_lease::Error>(())
    /// ```
    pub fn claim_token(self, column: impl Into<String>) -> Self {
        Self {
            claim_token: column.into(),
            ..self
        }
    }

    /// Names the column of since when, by the database's clock.
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")] {
    /// let columns = diesel_lease::LeaseColumns::new("jobs").claimed_at("leased_at");
    /// assert!(columns.up_sql::<diesel::sqlite::Sqlite>()?.contains(r#""leased_at" TEXT"#));
    /// # }
    /// # Ok::<(), diesel_lease::Error>(())
    /// ```
    pub fn claimed_at(self, column: impl Into<String>) -> Self {
        Self {
            claimed_at: column.into(),
            ..self
        }
    }

    /// Adds a [fence](crate::Fence) named `column`: a `BIGINT NOT NULL DEFAULT 0` claim counter.
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")] {
    /// let columns = diesel_lease::LeaseColumns::new("jobs").fence("attempt");
    /// assert!(columns.up_sql::<diesel::sqlite::Sqlite>()?.contains(r#""attempt" BIGINT NOT NULL DEFAULT 0"#));
    /// # }
    /// # Ok::<(), diesel_lease::Error>(())
    /// ```
    pub fn fence(self, column: impl Into<String>) -> Self {
        Self {
            fence: Some(column.into()),
            ..self
        }
    }

    /// Adds the index a claim needs ([`ClaimIndex`]), named `<table>_claimable_idx`, to the
    /// migration: claims that filter on a status and order by a key then read only the rows they
    /// can claim, whatever number of finished rows the table keeps.
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")] {
    /// use diesel_lease::{ClaimIndex, LeaseColumns};
    ///
    /// let columns = LeaseColumns::new("jobs").claim_index(ClaimIndex::rows_where("status", "queued"));
    /// let up = columns.up_sql::<diesel::sqlite::Sqlite>()?;
    /// assert!(up.contains(r#"ON "jobs" ("id") WHERE "status" = 'queued';"#));
    /// assert!(LeaseColumns::new("jobs")
    ///     .claim_index(ClaimIndex::rows_where("status", "it's queued"))
    ///     .up_sql::<diesel::sqlite::Sqlite>()
    ///     .is_err());
    /// # }
    /// # Ok::<(), diesel_lease::Error>(())
    /// ```
    pub fn claim_index(self, index: ClaimIndex) -> Self {
        Self {
            claim_index: Some(index),
            ..self
        }
    }

    /// The SQL that adds the lease columns and the token's index (and the claim index, if named)
    /// on backend `DB`, with the indexing advice as comments.
    ///
    /// Every name must be a plain identifier (ASCII letters, digits and `_`, not starting with a
    /// digit, at most 63 characters, the index's `<table>_<claim_token>_idx` too), and the
    /// columns' names distinct, ignoring case: otherwise [`Error::InvalidIdentifier`]. Names
    /// are quoted in the SQL, so their case is kept as Diesel's `table!` spells them.
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")] {
    /// use diesel::connection::SimpleConnection;
    /// use diesel::prelude::*;
    /// use diesel::sqlite::Sqlite;
    /// use diesel_lease::{Error, LeaseColumns};
    ///
    /// let conn = &mut SqliteConnection::establish(":memory:")?;
    /// diesel::sql_query("CREATE TABLE jobs (id BIGINT PRIMARY KEY)").execute(conn)?;
    /// let columns = LeaseColumns::new("jobs");
    /// conn.batch_execute(&columns.up_sql::<Sqlite>()?)?;
    /// assert!(columns.up_sql::<Sqlite>()?.contains(r#"ALTER TABLE "jobs" ADD COLUMN "claimed_at" TEXT;"#));
    /// conn.batch_execute(&columns.down_sql::<Sqlite>()?)?;
    ///
    /// let clash = LeaseColumns::new("jobs").owner("Claimed_At").up_sql::<Sqlite>();
    /// assert!(matches!(clash, Err(Error::InvalidIdentifier(_))));
    /// # }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn up_sql<DB: LeaseBackend>(&self) -> Result<String, Error> {
        Ok(self.migration::<DB>()?.up)
    }

    /// The SQL that drops the indexes and the columns on backend `DB`, refused as
    /// [`up_sql`](Self::up_sql) is.
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")] {
    /// let down = diesel_lease::LeaseColumns::new("jobs").down_sql::<diesel::sqlite::Sqlite>()?;
    /// assert!(down.starts_with(r#"DROP INDEX "jobs_claim_token_idx";"#));
    /// assert!(down.ends_with("ALTER TABLE \"jobs\" DROP COLUMN \"owner\";\n"));
    /// # }
    /// # Ok::<(), diesel_lease::Error>(())
    /// ```
    pub fn down_sql<DB: LeaseBackend>(&self) -> Result<String, Error> {
        Ok(self.migration::<DB>()?.down)
    }

    /// Writes the migration on backend `DB` as Diesel's migration files, `<dir>/<name>/up.sql`
    /// and `down.sql`, making `dir` if need be, and returns the migration's directory.
    ///
    /// Diesel orders migrations by the version that starts `name` (`diesel migration generate`
    /// uses `YYYY-MM-DD-HHMMSS_what`). Names refused by [`up_sql`](Self::up_sql) are refused
    /// here too; a `name` other than ASCII letters, digits, `-` and `_` is
    /// [`Error::InvalidMigrationName`]; an existing migration of that name is never overwritten:
    /// [`Error::MigrationFiles`]. Refused, nothing is written.
    ///
    /// ```
    /// # #[cfg(feature = "sqlite")] {
    /// use diesel::sqlite::Sqlite;
    ///
    /// let dir = std::env::temp_dir().join(format!("lease-migrations-{}", uuid::Uuid::new_v4()));
    /// let columns = diesel_lease::LeaseColumns::new("jobs");
    /// let written = columns.write_migration::<Sqlite>(&dir, "2026-11-30-120000_lease_columns")?;
    /// assert_eq!(std::fs::read_to_string(written.join("up.sql"))?, columns.up_sql::<Sqlite>()?);
    /// assert!(
    ///     columns.write_migration::<Sqlite>(&dir, "2026-11-30-120000_lease_columns").is_err(),
    ///     "never overwritten"
    /// );
    /// # std::fs::remove_dir_all(&dir)?;
    /// # }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn write_migration<DB: LeaseBackend>(
        &self,
        dir: impl AsRef<Path>,
        name: &str,
    ) -> Result<PathBuf, Error> {
        self.migration::<DB>()?.write_to(dir.as_ref(), name)
    }

    /// The migration on backend `DB`, or why its names are refused.
    fn migration<DB: LeaseBackend>(&self) -> Result<Migration, Error> {
        let index = format!("{}_{}_idx", self.table, self.claim_token);
        let claim_index = format!("{}_claimable_idx", self.table);
        self.check(&index, &claim_index)?;
        let quoted = |name: &str| format!("{quote}{name}{quote}", quote = DB::QUOTE);
        let table = quoted(&self.table);
        let mut columns = vec![
            (&self.owner, DB::OWNER_TYPE),
            (&self.claim_token, DB::CLAIM_TOKEN_TYPE),
            (&self.claimed_at, DB::CLAIMED_AT_TYPE),
        ];
        columns.extend(self.fence.iter().map(|fence| (fence, FENCE_TYPE)));
        let adds: Vec<String> = columns
            .iter()
            .map(|(name, sql_type)| format!("ADD COLUMN {} {sql_type}", quoted(name)))
            .collect();
        let drops: Vec<String> = columns
            .iter()
            .rev()
            .map(|(name, _)| format!("DROP COLUMN {}", quoted(name)))
            .collect();
        let (create_claim_index, drop_claim_index) = match &self.claim_index {
            Some(claim) => (
                claim.create::<DB>(&quoted(&claim_index), &table),
                Some(quoted(&claim_index)),
            ),
            None => (String::new(), None),
        };
        let up = format!(
            "{}{}{}{}CREATE INDEX {} ON {table} ({});\n{create_claim_index}",
            self.header(&table),
            DB::advice(&table, &quoted(&self.claimed_at)),
            alter::<DB>(&table, &adds),
            DB::storage(&table),
            quoted(&index),
            quoted(&self.claim_token),
        );
        // SQLite refuses to drop an indexed column: the index goes first.
        let on_table = if DB::DROP_INDEX_NAMES_TABLE {
            format!(" ON {table}")
        } else {
            String::new()
        };
        let drop_indexes: String = drop_claim_index
            .iter()
            .chain([&quoted(&index)])
            .map(|index| format!("DROP INDEX {index}{on_table};\n"))
            .collect();
        let down = format!(
            "{drop_indexes}{}{}",
            alter::<DB>(&table, &drops),
            DB::storage_reset(&table),
        );
        Ok(Migration { up, down })
    }

    /// Every name is a plain identifier, and the columns' are distinct.
    fn check(&self, index: &str, claim_index: &str) -> Result<(), Error> {
        let mut columns = vec![
            ("owner", &self.owner),
            ("claim_token", &self.claim_token),
            ("claimed_at", &self.claimed_at),
        ];
        columns.extend(self.fence.iter().map(|fence| ("fence", fence)));
        check_identifier("table", &self.table)?;
        for (role, name) in &columns {
            check_identifier(role, name)?;
        }
        for (at, (role, name)) in columns.iter().enumerate() {
            if let Some((other, _)) = columns[at + 1..]
                .iter()
                .find(|(_, other)| other.eq_ignore_ascii_case(name))
            {
                return Err(Error::InvalidIdentifier(format!(
                    "{role} and {other} are both named {name:?}: each lease column needs its own"
                )));
            }
        }
        if let Some(claim) = &self.claim_index {
            for (role, name) in claim.names() {
                check_identifier(role, name)?;
            }
            claim.check_value()?;
            check_identifier("claim index", claim_index)?;
        }
        check_identifier("token index", index)
    }

    /// What the columns are, and the `claim_lease!` that names them.
    fn header(&self, table: &str) -> String {
        let defaults = Self::new(&self.table);
        let renamed: Vec<String> = [
            ("owner", &self.owner, &defaults.owner),
            ("claim_token", &self.claim_token, &defaults.claim_token),
            ("claimed_at", &self.claimed_at, &defaults.claimed_at),
        ]
        .into_iter()
        .filter(|(_, name, default)| name != default)
        .map(|(role, name, _)| format!("{role}: {name}"))
        .chain(self.fence.iter().map(|fence| format!("fence: {fence}")))
        .collect();
        let roles = if renamed.is_empty() {
            String::new()
        } else {
            format!(" {{ {} }}", renamed.join(", "))
        };
        format!(
            "-- The lease columns of {table}, for diesel-lease: a row whose claim token is NULL is free.\n\
             -- Name them in Rust with: diesel_lease::claim_lease!({}{roles});\n\
             -- Index the token: every renewal and release finds its rows by it.\n{}",
            self.table,
            self.claim_index.as_ref().map_or(String::new(), |_| {
                "-- The claim index: a claim that filters on its column and value and orders by its key reads\n\
                 -- only those rows, however many finished rows the table keeps (put the rows of claims that\n\
                 -- ran out back to that value with a reap). A claim or finish that changes the column writes\n\
                 -- the index; a renewal, which writes the claimed_at column only, does not.\n"
                    .to_owned()
            })
        )
    }
}

/// `changes` to `table`, in one `ALTER TABLE` where the backend allows it.
fn alter<DB: LeaseDdl>(table: &str, changes: &[String]) -> String {
    if DB::ONE_COLUMN_PER_ALTER {
        changes
            .iter()
            .map(|change| format!("ALTER TABLE {table} {change};\n"))
            .collect()
    } else {
        format!("ALTER TABLE {table}\n    {};\n", changes.join(",\n    "))
    }
}

/// `name` needs no quoting on any backend, and fits PostgreSQL's limit.
fn check_identifier(what: &str, name: &str) -> Result<(), Error> {
    let plain = name
        .chars()
        .next()
        .is_some_and(|first| first.is_ascii_alphabetic() || first == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    let problem = if name.is_empty() {
        "is empty"
    } else if !plain {
        "is not a plain identifier (ASCII letters, digits and `_`, not starting with a digit)"
    } else if name.len() > MAX_IDENTIFIER_LEN {
        "is longer than 63 characters, PostgreSQL's limit"
    } else {
        return Ok(());
    };
    Err(Error::InvalidIdentifier(format!(
        "the {what} name {name:?} {problem}"
    )))
}

/// A migration's SQL for one backend: the up and the down.
struct Migration {
    up: String,
    down: String,
}

impl Migration {
    /// Writes `<dir>/<name>/up.sql` and `down.sql`; see [`LeaseColumns::write_migration`].
    fn write_to(&self, dir: &Path, name: &str) -> Result<PathBuf, Error> {
        let plain = name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if name.is_empty() || !plain {
            return Err(Error::InvalidMigrationName(format!(
                "{name:?}: use ASCII letters, digits, `-` and `_`"
            )));
        }
        let path = dir.join(name);
        std::fs::create_dir_all(dir).map_err(Error::MigrationFiles)?;
        // Fails if the migration exists: nothing of it is overwritten.
        std::fs::create_dir(&path).map_err(Error::MigrationFiles)?;
        let written = std::fs::write(path.join("up.sql"), &self.up)
            .and_then(|()| std::fs::write(path.join("down.sql"), &self.down));
        if let Err(error) = written {
            // A half-written migration would run its up.sql without a way down.
            let _ = std::fs::remove_dir_all(&path);
            return Err(Error::MigrationFiles(error));
        }
        Ok(path)
    }
}
