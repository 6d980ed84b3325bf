//! The type of each statement the library builds, named after the method that builds it, as
//! Diesel's `dsl` names its own: what `#[diesel::dsl::auto_type(dsl_path = "diesel_lease::dsl")]`
//! writes for a function that builds a statement. `dsl` re-exports them unlisted: `auto_type`
//! writes them, so users read the methods' documentation, not theirs.
use diesel::expression::{AppearsOnTable, Expression};
use diesel::query_dsl::methods::{FilterDsl, OrderDsl};
use diesel::sql_types::BoolOrNullableBool;

use super::parts::{ByClaim, ReturnSelection, SetChanges, Starts};
use crate::query::{ClaimBatch as Batch, ClaimRow as Row, Reap as Reaping};
use crate::sql::{Both, Ordered};
use crate::{Claim, ClaimLease, Lease};

// The changesets and predicates of a table's lease columns, by the methods that make them.
#[doc(hidden)]
pub use crate::table::{Claimable, HeldBy, Outlived, Released, Renewed, Taken};

/// The type of `table.claim_row(key, lease)`.
pub type ClaimRow<T, Key = <T as ClaimLease>::Key, L = Lease> = <T as Starts<Key, L>>::ClaimRow;

/// The type of `table.claim_batch(size, lease)`.
pub type ClaimBatch<T, Size = usize, L = Lease> = <T as Starts<Size, L>>::ClaimBatch;

/// The type of `table.reap(size, lease)`.
pub type Reap<T, Size = usize, L = Lease> = <T as Starts<Size, L>>::Reap;

/// The type of `claim.by(&who)`: the same claim, said whose.
pub type By<Q, Who = &'static Claim> = <Q as ByClaim<Who>>::Output;

/// The type of `statement.set(changes)`, for the library's statements.
pub type Set<Q, Changes> = <Q as SetChanges<Changes>>::Output;

/// The type of `statement.returning(selection)`, for the library's claims.
pub type Returning<Q, Selection> = <Q as ReturnSelection<Selection>>::Output;

/// The type of `table.holders(lease)`: who holds which rows of `T`, by the database's clock.
pub type Holders<T, L = Lease> = <T as Starts<L>>::Holders;

/// The type of `table.stale(lease)`: who holds rows of `T` past `lease`.
pub type Stale<T, L = Lease> = <T as Starts<L>>::Stale;

/// The type of `table.held_per_owner()`: how many rows of `T` each owner holds.
pub type HeldPerOwner<T> = crate::query::HeldPerOwner<T>;

/// The type of `table.health()`: a reading of `T`'s health.
pub type Health<T> = crate::query::Health<T>;

/// Diesel's `dsl::Filter` names the library's claims and reaps too.
impl<T, F, Changes, Selection, By, P> FilterDsl<P> for Row<T, F, Changes, Selection, By>
where
    T: ClaimLease,
    P: Expression + AppearsOnTable<T>,
    P::SqlType: BoolOrNullableBool,
{
    type Output = Row<T, Both<F, P>, Changes, Selection, By>;

    fn filter(self, predicate: P) -> Self::Output {
        Row::filter(self, predicate)
    }
}

impl<T, F, O, Changes, Selection, By, P> FilterDsl<P> for Batch<T, F, O, Changes, Selection, By>
where
    T: ClaimLease,
    P: Expression + AppearsOnTable<T>,
    P::SqlType: BoolOrNullableBool,
{
    type Output = Batch<T, Both<F, P>, O, Changes, Selection, By>;

    fn filter(self, predicate: P) -> Self::Output {
        Batch::filter(self, predicate)
    }
}

impl<T, F, O, Changes, P> FilterDsl<P> for Reaping<T, F, O, Changes>
where
    T: ClaimLease,
    P: Expression + AppearsOnTable<T>,
    P::SqlType: BoolOrNullableBool,
{
    type Output = Reaping<T, Both<F, P>, O, Changes>;

    fn filter(self, predicate: P) -> Self::Output {
        Reaping::filter(self, predicate)
    }
}

/// Diesel's `dsl::OrderBy` names the library's batch claims and reaps too.
impl<T, F, O, Changes, Selection, By, Order> OrderDsl<Order>
    for Batch<T, F, O, Changes, Selection, By>
where
    T: ClaimLease,
    Order: Expression + AppearsOnTable<T>,
    O: crate::sql::CallerOrder,
{
    type Output = Batch<T, F, Ordered<Order>, Changes, Selection, By>;

    fn order(self, order: Order) -> Self::Output {
        Batch::order_by(self, order)
    }
}

impl<T, F, O, Changes, Order> OrderDsl<Order> for Reaping<T, F, O, Changes>
where
    T: ClaimLease,
    Order: Expression + AppearsOnTable<T>,
{
    type Output = Reaping<T, F, Ordered<Order>, Changes>;

    fn order(self, order: Order) -> Self::Output {
        Reaping::order_by(self, order)
    }
}
