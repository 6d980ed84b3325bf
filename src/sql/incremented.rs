//! `column + 1`: the next fence, computed by the database in the claiming statement.
use diesel::backend::Backend;
use diesel::expression::{is_aggregate, AppearsOnTable, Expression, ValidGrouping};
use diesel::query_builder::{AstPass, QueryFragment};
use diesel::sql_types::BigInt;
use diesel::{Column, QueryResult};

/// `column + 1`: the next fence, computed by the database in the claiming statement.
///
/// ```
/// # include!("../doctest_setup.rs");
/// # fn main() {
/// let _next: diesel_lease::__private::sql::Incremented<fenced_jobs::fence> = Default::default();
/// # }
/// ```
#[derive(Debug, Clone, Copy, Default, diesel::query_builder::QueryId)]
pub struct Incremented<C>(C);

impl<C> Incremented<C> {
    /// `column + 1`.
    pub(crate) fn new(column: C) -> Self {
        Self(column)
    }
}

impl<C: Expression<SqlType = BigInt>> Expression for Incremented<C> {
    type SqlType = BigInt;
}

impl<C: AppearsOnTable<QS> + Expression<SqlType = BigInt>, QS> AppearsOnTable<QS>
    for Incremented<C>
{
}

impl<C, GroupBy> ValidGrouping<GroupBy> for Incremented<C> {
    type IsAggregate = is_aggregate::Never;
}

impl<C: Column, DB: Backend> QueryFragment<DB> for Incremented<C> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        out.push_identifier(C::NAME)?;
        out.push_sql(" + 1");
        Ok(())
    }
}
