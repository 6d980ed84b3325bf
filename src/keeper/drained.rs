//! What a keeper's drain released, table by table.
use std::fmt;

/// What [`Keeper::drain`](crate::Keeper::drain) released on each table it kept claims on: the
/// claims and rows, and the statements it took. Each kept claim's own handle knows its rows too:
/// [`Kept::check`](crate::Kept::check) says it was released.
///
/// ```
/// use diesel_lease::{Drained, DrainedTable};
///
/// let drained = Drained {
///     tables: vec![DrainedTable { table: "jobs", claims: 3, rows: 120, statements: 1 }],
/// };
/// assert_eq!(drained.rows(), 120);
/// assert_eq!(drained.to_string(), "jobs: 3 claims, 120 rows released in 1 statement");
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Drained {
    /// A table's release, for each table the keeper kept claims on.
    pub tables: Vec<DrainedTable>,
}

impl Drained {
    /// The rows released, on every table.
    ///
    /// ```
    /// assert_eq!(diesel_lease::Drained::default().rows(), 0);
    /// ```
    pub fn rows(&self) -> usize {
        self.tables.iter().map(|table| table.rows).sum()
    }
}

impl fmt::Display for Drained {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.tables.is_empty() {
            return f.write_str("nothing kept, nothing released");
        }
        for (n, table) in self.tables.iter().enumerate() {
            if n > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{table}")?;
        }
        Ok(())
    }
}

/// What a drain released on one table: see [`Drained`].
///
/// ```
/// let table = diesel_lease::DrainedTable { table: "jobs", claims: 1, rows: 2, statements: 2 };
/// assert_eq!(table.to_string(), "jobs: 1 claim, 2 rows released in 2 statements");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DrainedTable {
    /// The table's SQL name, as its `table!` gives it: `jobs`, or `queue.jobs` when it names a
    /// schema (not its Rust path); events name it so too.
    pub table: &'static str,
    /// The claims released (or, within their shortest hold, dated to outlive it).
    pub claims: usize,
    /// The rows they still held, and released.
    pub rows: usize,
    /// The release statements sent: one for all the claims it could release together (and
    /// 4,096 rows), one for each claim with rows released alone (within its shortest hold, which
    /// a reading of the database's clock comes before, or naming a row another claim names).
    pub statements: usize,
}

impl fmt::Display for DrainedTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let plural = |n: usize| if n == 1 { "" } else { "s" };
        write!(
            f,
            "{}: {} claim{}, {} row{} released in {} statement{}",
            self.table,
            self.claims,
            plural(self.claims),
            self.rows,
            plural(self.rows),
            self.statements,
            plural(self.statements)
        )
    }
}
