//! No changes of the caller's own.
use std::marker::PhantomData;

use diesel::backend::Backend;
use diesel::query_builder::{AsChangeset, AstPass, QueryFragment};
use diesel::{QueryResult, Table};

/// No changes of the caller's own: a claim or release sets only the lease columns. It renders
/// nothing, so a changeset tuple that holds it writes the other changes alone.
///
/// ```
/// # include!("../doctest_setup.rs");
/// # fn main() {
/// let _nothing_else = diesel_lease::__private::sql::NoChanges::<jobs::table>::default();
/// # }
/// ```
#[derive(Debug, Clone, Copy)]
pub struct NoChanges<T>(PhantomData<T>);

impl<T> Default for NoChanges<T> {
    fn default() -> Self {
        Self(PhantomData)
    }
}

impl<T: Table> AsChangeset for NoChanges<T> {
    type Target = T;
    type Changeset = Self;

    fn as_changeset(self) -> Self {
        self
    }
}

impl<T, DB: Backend> QueryFragment<DB> for NoChanges<T> {
    fn walk_ast<'b>(&'b self, _: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        Ok(())
    }
}
