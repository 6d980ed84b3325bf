//! The fence: an optional claim counter that every take of a row increments, in the claiming
//! statement itself, for effects outside the database.
use diesel::dsl;
use diesel::expression::AppearsOnTable;
use diesel::query_builder::AsChangeset;
use diesel::sql_types::{BigInt, Nullable};
use diesel::{Column, ExpressionMethods, NullableExpressionMethods, Table};

use crate::sql::{Incremented, Now, Null};

/// A table's fence: [`NoFence`], or a `BIGINT NOT NULL DEFAULT 0` column named by
/// [`claim_lease!`](crate::claim_lease) as `fence: column`.
///
/// A random token proves who holds a row, not the order of holders; the fence does. Every take
/// sets `fence = fence + 1` in the claiming statement, so each holder of a row gets a number
/// higher than every earlier holder's; renewals and releases leave it alone. Hand it to any
/// resource outside the database with each write (a file store, an API, another database), and
/// have the resource refuse a fence lower than the highest it has seen: a holder that lost its
/// lease while paused (a GC pause, a partition) can then change nothing there either.
///
/// ```
/// # include!("../doctest_setup.rs");
/// fn fenced<T: diesel::Table, F: diesel_lease::__private::Fence<T>>() {}
/// # fn main() {
/// fenced::<fenced_jobs::table, fenced_jobs::fence>();
/// fenced::<jobs::table, diesel_lease::NoFence>();
/// # }
/// ```
pub trait Fence<T: Table> {
    /// What a take sets: `fence = fence + 1`, or nothing.
    type Bump: AsChangeset<Target = T>;
    /// What a claim reads back: the fence, or `NULL`.
    type Read;

    /// `fence = fence + 1`, or nothing.
    fn bump() -> Self::Bump;

    /// The fence, or `NULL`.
    fn read() -> Self::Read;
}

/// A table whose [`claim_lease!`](crate::claim_lease) names a fence column: its claims give the
/// fence they took the row with ([`Won::fence`](crate::Won::fence),
/// [`Batch::fences`](crate::Batch::fences)).
///
/// ```
/// # include!("../doctest_setup.rs");
/// fn fenced<T: diesel_lease::Fenced>() {}
/// # fn main() {
/// fenced::<fenced_jobs::table>();
/// # }
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no fence column",
    label = "a table without a fence",
    note = "name a `BIGINT NOT NULL DEFAULT 0` column as its fence: `claim_lease!(table {{ fence: column }})`"
)]
pub trait Fenced: crate::ClaimLease {}

/// A table without a fence: its claims report none.
///
/// ```
/// # include!("../doctest_setup.rs");
/// fn fenced<F: diesel_lease::__private::Fence<jobs::table>>() {}
/// # fn main() {
/// fenced::<diesel_lease::NoFence>();
/// # }
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct NoFence;

// No bump is Diesel's own `Option` of an assignment, always `None`, not a changeset of the
// library's: Diesel 2.4 lets only its own assignments into an `UPDATE` with a `WHERE` clause.
impl<T: crate::ClaimLease> Fence<T> for NoFence {
    type Bump = Option<crate::dsl::Renewed<T>>;
    type Read = Null<Nullable<BigInt>>;

    fn bump() -> Self::Bump {
        // Never `Some`: what it would assign, `claimed_at = now`, is the take's own write.
        None::<dsl::Eq<T::ClaimedAt, Now<T::Clock>>>
    }

    fn read() -> Self::Read {
        Null::default()
    }
}

impl<T, C> Fence<T> for C
where
    T: Table,
    C: Column<Table = T, SqlType = BigInt> + Default + AppearsOnTable<T>,
    dsl::Eq<C, Incremented<C>>: AsChangeset<Target = T>,
{
    type Bump = dsl::Eq<C, Incremented<C>>;
    type Read = dsl::Nullable<C>;

    fn bump() -> Self::Bump {
        C::default().eq(Incremented::new(C::default()))
    }

    fn read() -> Self::Read {
        C::default().nullable()
    }
}
