//! A batch's filter from a cursor: the caller's filter and the lease's, and the rows past a key.
use diesel::expression::{is_aggregate, AppearsOnTable, Expression, ValidGrouping};
use diesel::query_builder::{AstPass, QueryFragment, QueryId};
use diesel::sql_types::{Bool, Nullable};
use diesel::QueryResult;

use crate::backend::LeaseBackend;
use crate::{BindKey, KeyType};

/// `filter`, and when a key is given `((filter) AND (key columns) > (key))`: a row-value
/// comparison, which every backend reads as a range of the key's index. Without a key, the SQL is
/// the filter's alone, the same text as a claim from the head.
///
/// ```
/// # include!("../doctest_setup.rs");
/// # use diesel::prelude::*;
/// # fn main() {
/// use diesel_lease::__private::sql::After;
///
/// let _past_7: After<_, _, diesel::sql_types::BigInt> =
///     After::new(jobs::status.eq("queued"), jobs::id, Some(7));
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct After<F, Key, ST: KeyType> {
    filter: F,
    columns: Key,
    after: Option<ST::Value>,
}

impl<F, Key, ST: KeyType> After<F, Key, ST> {
    /// The rows that match `filter` and, given `after`, whose `columns` sort past it.
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use diesel::prelude::*;
    /// # fn main() {
    /// let _all: diesel_lease::__private::sql::After<_, _, diesel::sql_types::BigInt> =
    ///     diesel_lease::__private::sql::After::new(jobs::status.eq("queued"), jobs::id, None);
    /// # }
    /// ```
    pub fn new(filter: F, columns: Key, after: Option<ST::Value>) -> Self {
        Self {
            filter,
            columns,
            after,
        }
    }
}

impl<F: Expression, Key, ST: KeyType> Expression for After<F, Key, ST> {
    type SqlType = Nullable<Bool>;
}

impl<F, Key, ST, QS> AppearsOnTable<QS> for After<F, Key, ST>
where
    F: AppearsOnTable<QS>,
    Key: AppearsOnTable<QS>,
    ST: KeyType,
{
}

impl<F, Key, ST: KeyType, GroupBy> ValidGrouping<GroupBy> for After<F, Key, ST> {
    type IsAggregate = is_aggregate::Never;
}

/// Cached by its SQL text, which the key's presence fixes.
impl<F, Key, ST: KeyType> QueryId for After<F, Key, ST> {
    type QueryId = ();
    const HAS_STATIC_QUERY_ID: bool = false;
}

impl<F, Key, ST, DB> QueryFragment<DB> for After<F, Key, ST>
where
    DB: LeaseBackend,
    F: QueryFragment<DB>,
    Key: QueryFragment<DB>,
    ST: BindKey<DB>,
{
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        let Some(after) = &self.after else {
            return self.filter.walk_ast(out);
        };
        out.push_sql("(");
        self.filter.walk_ast(out.reborrow())?;
        out.push_sql(" AND (");
        self.columns.walk_ast(out.reborrow())?;
        out.push_sql(") > (");
        ST::walk_values(after, out.reborrow())?;
        out.push_sql("))");
        Ok(())
    }
}
