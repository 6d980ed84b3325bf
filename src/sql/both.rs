//! `(a AND b)`: how the library adds a caller's conditions to its own.
use diesel::backend::Backend;
use diesel::expression::{is_aggregate, AppearsOnTable, Expression, ValidGrouping};
use diesel::query_builder::{AstPass, QueryFragment, QueryId};
use diesel::sql_types::{Bool, Nullable};
use diesel::QueryResult;

/// SQL `(a AND b)`, for any two conditions, whatever their tables: Diesel's own `.and` wants
/// bounds that a condition over a generic table does not meet.
///
/// ```
/// # include!("../doctest_setup.rs");
/// # use diesel::prelude::*;
/// # fn main() {
/// let _both = diesel_lease::__private::sql::Both::new(jobs::id.eq(1), jobs::status.eq("queued"));
/// # }
/// ```
#[derive(Debug, Clone, Copy, QueryId)]
pub struct Both<A, B>(A, B);

impl<A, B> Both<A, B> {
    /// `(a AND b)`.
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use diesel::prelude::*;
    /// # fn main() {
    /// let _both = diesel_lease::__private::sql::Both::new(jobs::id.eq(1), jobs::id.eq(2));
    /// # }
    /// ```
    pub fn new(a: A, b: B) -> Self {
        Self(a, b)
    }
}

impl<A: Expression, B: Expression> Expression for Both<A, B> {
    type SqlType = Nullable<Bool>;
}

impl<A: AppearsOnTable<QS>, B: AppearsOnTable<QS>, QS> AppearsOnTable<QS> for Both<A, B> where
    Self: Expression
{
}

impl<A, B, GroupBy> ValidGrouping<GroupBy> for Both<A, B> {
    type IsAggregate = is_aggregate::Never;
}

impl<A: QueryFragment<DB>, B: QueryFragment<DB>, DB: Backend> QueryFragment<DB> for Both<A, B> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        out.push_sql("(");
        self.0.walk_ast(out.reborrow())?;
        out.push_sql(" AND ");
        self.1.walk_ast(out.reborrow())?;
        out.push_sql(")");
        Ok(())
    }
}
