//! A text column equal to a value exactly, byte for byte, whatever the column's collation: how
//! every statement names rows by owner or by token.
use diesel::expression::{
    is_aggregate, AppearsOnTable, Expression, SelectableExpression, ValidGrouping,
};
use diesel::query_builder::{AstPass, QueryFragment, QueryId};
use diesel::serialize::ToSql;
use diesel::sql_types::{Bool, Nullable, Text};
use diesel::QueryResult;

use crate::backend::LeaseBackend;

/// SQL `(column = value AND <column, compared exactly> = value)`: the text `column` equals
/// `value` byte for byte, whatever the column's collation. A collation that ignores case (the
/// default on MySQL/MariaDB, `NOCASE` on SQLite, a nondeterministic one on PostgreSQL) or pads
/// with spaces (MySQL's `PAD SPACE`) would take `Worker-1` for `worker-1`, or `t1 ` for `t1`;
/// the second condition, which each backend writes its own way
/// ([`LeaseBackend::walk_exact_text`]), refuses them, and the first lets an index of the column
/// find the rows, as a plain `=` does. `value` is bound twice; the SQL is fixed by the type.
///
/// ```
/// # include!("../doctest_setup.rs");
/// # use diesel::prelude::*;
/// use diesel_lease::dsl::TextIs;
///
/// # fn main() -> Result<(), diesel_lease::Error> {
/// # let conn = &mut jobs_connection()?;
/// let mine = TextIs::new(jobs::owner, "worker-1");
/// let held: i64 = jobs::table.filter(mine).count().get_result(conn)?;
/// assert_eq!(held, 0);
/// let is_mine: Option<bool> = jobs::table.find(1).select(mine).first(conn)?;
/// assert_eq!(is_mine, None, "a free row's owner is NULL");
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, Copy)]
pub struct TextIs<Column, Value> {
    column: Column,
    value: Value,
}

impl<Column, Value> TextIs<Column, Value> {
    /// `column` equals `value` exactly.
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # fn main() {
    /// let _held_by_t1 = diesel_lease::dsl::TextIs::new(jobs::claim_token, "t1");
    /// # }
    /// ```
    pub fn new(column: Column, value: Value) -> Self {
        Self { column, value }
    }
}

impl<Column, Value> Expression for TextIs<Column, Value> {
    type SqlType = Nullable<Bool>;
}

impl<Column: AppearsOnTable<QS>, Value, QS> AppearsOnTable<QS> for TextIs<Column, Value> {}

/// Selectable as Diesel's `=` is: whether the row's column is the value.
impl<Column: SelectableExpression<QS>, Value, QS> SelectableExpression<QS>
    for TextIs<Column, Value>
{
}

impl<Column, Value, GroupBy> ValidGrouping<GroupBy> for TextIs<Column, Value> {
    type IsAggregate = is_aggregate::Never;
}

/// Cached by its column: the value is bound, whatever its Rust type.
impl<Column: QueryId, Value> QueryId for TextIs<Column, Value> {
    type QueryId = TextIs<Column::QueryId, ()>;
    const HAS_STATIC_QUERY_ID: bool = Column::HAS_STATIC_QUERY_ID;
}

impl<Column, Value, DB> QueryFragment<DB> for TextIs<Column, Value>
where
    DB: LeaseBackend,
    Column: QueryFragment<DB>,
    Value: ToSql<Text, DB>,
{
    fn walk_ast<'b>(&'b self, out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        walk_text_is(&self.column, &self.value, out)
    }
}

/// `(column = value AND <column, compared exactly> = value)`, as [`TextIs`] writes it.
pub(crate) fn walk_text_is<'b, DB, Column, Value>(
    column: &'b Column,
    value: &'b Value,
    mut out: AstPass<'_, 'b, DB>,
) -> QueryResult<()>
where
    DB: LeaseBackend,
    Column: QueryFragment<DB>,
    Value: ToSql<Text, DB>,
{
    out.push_sql("(");
    column.walk_ast(out.reborrow())?;
    out.push_sql(" = ");
    out.push_bind_param::<Text, Value>(value)?;
    out.push_sql(" AND ");
    DB::walk_exact_text(column, out.reborrow())?;
    out.push_sql(" = ");
    out.push_bind_param::<Text, Value>(value)?;
    out.push_sql(")");
    Ok(())
}

/// The text `column` equals one of `values` exactly: [`TextIs`] for each, joined by `OR`; none
/// is `1 = 0`. A statement of one value is prepared once; one of several is not kept prepared
/// (its SQL grows with the list, as Diesel's own `IN` lists do).
///
/// ```
/// # include!("../doctest_setup.rs");
/// # use diesel::prelude::*;
/// use diesel_lease::__private::sql::TextIn;
///
/// # fn main() -> Result<(), diesel_lease::Error> {
/// # let conn = &mut jobs_connection()?;
/// let theirs = TextIn::new(jobs::owner, vec!["worker-1".to_owned(), "worker-2".to_owned()]);
/// let held: i64 = jobs::table.filter(theirs).count().get_result(conn)?;
/// assert_eq!(held, 0);
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct TextIn<Column> {
    column: Column,
    values: Vec<String>,
}

impl<Column> TextIn<Column> {
    /// `column` equals one of `values` exactly.
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # fn main() {
    /// let _none = diesel_lease::__private::sql::TextIn::new(jobs::owner, Vec::new());
    /// # }
    /// ```
    pub fn new(column: Column, values: Vec<String>) -> Self {
        Self { column, values }
    }
}

impl<Column> Expression for TextIn<Column> {
    type SqlType = Nullable<Bool>;
}

impl<Column: AppearsOnTable<QS>, QS> AppearsOnTable<QS> for TextIn<Column> {}

impl<Column: SelectableExpression<QS>, QS> SelectableExpression<QS> for TextIn<Column> {}

impl<Column, GroupBy> ValidGrouping<GroupBy> for TextIn<Column> {
    type IsAggregate = is_aggregate::Never;
}

/// Cached by its SQL text, which the length of the list fixes.
impl<Column> QueryId for TextIn<Column> {
    type QueryId = ();
    const HAS_STATIC_QUERY_ID: bool = false;
}

impl<Column, DB> QueryFragment<DB> for TextIn<Column>
where
    DB: LeaseBackend,
    Column: QueryFragment<DB>,
    String: ToSql<Text, DB>,
{
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        if self.values.len() > 1 {
            out.unsafe_to_cache_prepared();
        }
        out.push_sql("(");
        if self.values.is_empty() {
            out.push_sql("1 = 0");
        }
        for (index, value) in self.values.iter().enumerate() {
            if index > 0 {
                out.push_sql(" OR ");
            }
            walk_text_is(&self.column, value, out.reborrow())?;
        }
        out.push_sql(")");
        Ok(())
    }
}
