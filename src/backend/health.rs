//! How a backend reads a table's health, and the plan it is handed: the table's SQL name and the
//! thresholds to judge by.
use diesel::backend::Backend;
use diesel::query_builder::{QueryBuilder, QueryFragment};
use diesel::QueryResult;

use crate::health::{HealthThresholds, TableHealth};

/// A table's name as the database knows it: its schema (if its `table!` names one) and its own
/// name, unquoted, and both as the backend quotes them in SQL.
///
/// ```
/// fn names(table: &diesel_lease::__private::backend::TableName) -> &diesel_lease::__private::backend::TableName {
///     table
/// }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableName {
    pub(crate) schema: Option<String>,
    pub(crate) name: String,
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))]
    pub(crate) quoted: String,
}

impl TableName {
    /// The name of the table whose `FROM` clause is `from`, as backend `DB`'s query builder
    /// writes it (Diesel's `table!` quotes the schema and the name, each); `None` if it is not
    /// one or two quoted names.
    pub(crate) fn of<DB>(from: &impl QueryFragment<DB>) -> QueryResult<Option<Self>>
    where
        DB: Backend + Default,
        DB::QueryBuilder: Default,
    {
        let mut builder = DB::QueryBuilder::default();
        from.to_sql(&mut builder, &DB::default())?;
        let quoted = builder.finish();
        Ok(match unquoted(&quoted).as_deref() {
            Some([name]) => Some(Self {
                schema: None,
                name: name.clone(),
                quoted,
            }),
            Some([schema, name]) => Some(Self {
                schema: Some(schema.clone()),
                name: name.clone(),
                quoted,
            }),
            _ => None,
        })
    }

    /// The name for people: `schema.table`, or `table`.
    pub(crate) fn plain(&self) -> String {
        match &self.schema {
            Some(schema) => format!("{schema}.{}", self.name),
            None => self.name.clone(),
        }
    }
}

/// The parts of `sql`, a dot-separated chain of identifiers each quoted as the query builders
/// quote them (in `"` on PostgreSQL, in backticks on MySQL and SQLite, a quote inside one
/// doubled), unquoted; `None` if `sql` is anything else.
fn unquoted(sql: &str) -> Option<Vec<String>> {
    let quote = sql
        .chars()
        .next()
        .filter(|first| matches!(first, '"' | '`'))?;
    let mut parts = Vec::new();
    let mut chars = sql.chars().peekable();
    loop {
        if chars.next()? != quote {
            return None;
        }
        let mut part = String::new();
        loop {
            let c = chars.next()?;
            if c != quote {
                part.push(c);
            } else if chars.peek() == Some(&quote) {
                part.push(quote);
                chars.next();
            } else {
                break;
            }
        }
        parts.push(part);
        match chars.next() {
            None => return Some(parts),
            Some('.') => continue,
            Some(_) => return None,
        }
    }
}

/// A reading of a table's health: the table, and the thresholds to judge the readings by.
///
/// ```
/// fn plan(plan: &diesel_lease::__private::backend::HealthPlan) -> &diesel_lease::__private::backend::HealthPlan {
///     plan
/// }
/// ```
#[derive(Debug, Clone)]
pub struct HealthPlan {
    pub(crate) table: TableName,
    pub(crate) thresholds: HealthThresholds,
}

/// How a backend reads a table's health: its statistics, by the database's clock, judged by
/// the plan's thresholds. `None` when the database has no such table.
///
/// ```
/// # include!("../doctest_setup.rs");
/// fn reads<C>()
/// where
///     DocBackend: diesel_lease::__private::backend::ReadsHealth<C>,
/// {
/// }
/// # fn main() {}
/// ```
#[diagnostic::on_unimplemented(
    message = "the health of a table cannot be read on `{Self}`",
    label = "cannot run on `{Self}`",
    note = "diesel-lease's Cargo feature for this backend (`postgres`, `mysql` or `sqlite`) must be on"
)]
pub trait ReadsHealth<C>: super::LeaseBackend {
    /// Reads the table's health.
    fn read_health(plan: &HealthPlan, conn: &mut C) -> QueryResult<Option<TableHealth>>;
}

#[cfg(test)]
mod tests {
    use super::unquoted;

    #[test]
    fn quoted_names_are_read_back_as_diesel_writes_them() {
        assert_eq!(unquoted(r#""jobs""#), Some(vec!["jobs".to_owned()]));
        assert_eq!(
            unquoted("`queue`.`jobs`"),
            Some(vec!["queue".to_owned(), "jobs".to_owned()])
        );
        assert_eq!(
            unquoted(r#""a""b"."c.d""#),
            Some(vec![r#"a"b"#.to_owned(), "c.d".to_owned()])
        );
        assert_eq!(unquoted("`a``b`"), Some(vec!["a`b".to_owned()]));
        for not_a_name in [
            "",
            "jobs",
            r#""jobs"#,
            r#""jobs" AS j"#,
            r#""a".b"#,
            r#""a"."#,
            "[jobs]",
        ] {
            assert_eq!(unquoted(not_a_name), None, "{not_a_name}");
        }
    }
}
