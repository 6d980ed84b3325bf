//! The traits the library's statement types go through: named by the aliases of `dsl`, never by
//! users, so public only through `crate::__private`.
use diesel::expression::SelectableExpression;
use diesel::query_builder::{AsChangeset, UpdateStatement};
use diesel::query_source::QuerySource;
use diesel::Table;

use crate::query::{AllHeld, Holders, OwnerRelease, Releasing, StaleOnly};
use crate::query::{ClaimBatch as Batch, ClaimRow as Row, Guarded, Reap as Reaping};
use crate::sql::{NoChanges, NoOrder};
use crate::table::{Claimable, Outlived};
use crate::{Claim, ClaimLease, Holds, NoClaimant, OwnedRows};

/// What `.release()` builds on rows of a table, by what names the rows: a holder's release
/// guarded by its token, or the release of rows named by their owners.
///
/// ```
/// # include!("../doctest_setup.rs");
/// fn releases<S: diesel_lease::__private::Releases>() {}
/// # fn main() {
/// releases::<diesel_lease::HeldRows<jobs::table>>();
/// # }
/// ```
pub trait Releases {
    /// The table of the rows.
    type Table: ClaimLease;
    /// The release, with the caller's `Changes`.
    type Release<Changes>;
}

impl<H: Holds> Releases for H {
    type Table = H::Table;
    type Release<Changes> = Guarded<H::Table, Releasing, Changes, H::Answer>;
}

impl<T: ClaimLease, Owners> Releases for OwnedRows<T, Owners> {
    type Table = T;
    type Release<Changes> = OwnerRelease<T, Owners, Changes>;
}

/// The statements a table with lease columns starts, by the types of their arguments, as
/// `auto_type` names them.
///
/// ```
/// # include!("../doctest_setup.rs");
/// fn starts<T: diesel_lease::__private::Starts<i64, diesel_lease::Lease>>() {}
/// # fn main() {
/// starts::<jobs::table>();
/// # }
/// ```
pub trait Starts<A, B = ()> {
    /// `table.claim_row(key, lease)`.
    type ClaimRow;
    /// `table.claim_batch(size, lease)`.
    type ClaimBatch;
    /// `table.reap(size, lease)`.
    type Reap;
    /// `table.holders(lease)`.
    type Holders;
    /// `table.stale(lease)`.
    type Stale;
}

impl<T: ClaimLease, A, B> Starts<A, B> for T {
    type ClaimRow = Row<T, Claimable<T>, NoChanges<T>, <T as Table>::AllColumns, NoClaimant>;
    type ClaimBatch =
        Batch<T, Claimable<T>, NoOrder, NoChanges<T>, <T as Table>::AllColumns, NoClaimant>;
    type Reap = Reaping<T, Outlived<T>, NoOrder, NoChanges<T>>;
    type Holders = Holders<T, AllHeld>;
    type Stale = Holders<T, StaleOnly>;
}

/// A claim that says whose it is with `.by(&claim)`: a [`ClaimRow`](crate::ClaimRow) or a
/// [`ClaimBatch`](crate::ClaimBatch), whatever its other parts.
///
/// ```
/// # include!("../doctest_setup.rs");
/// fn whose<Q: diesel_lease::__private::ByClaim<&'static diesel_lease::Claim>>() {}
/// # fn main() {
/// whose::<diesel_lease::dsl::ClaimRow<jobs::table>>();
/// # }
/// ```
pub trait ByClaim<Who> {
    /// The claim, said whose.
    type Output;
}

impl<T: ClaimLease, F, Changes, Selection, By, Who> ByClaim<Who>
    for Row<T, F, Changes, Selection, By>
{
    type Output = Row<T, F, Changes, Selection, Claim>;
}

impl<T, F, O, Changes, Selection, By, Who> ByClaim<Who> for Batch<T, F, O, Changes, Selection, By> {
    type Output = Batch<T, F, O, Changes, Selection, Claim>;
}

/// A statement that takes the caller's changes with `.set(..)`: the library's, and Diesel's own
/// `UPDATE`, so that one `dsl_path` names both.
///
/// ```
/// # include!("../doctest_setup.rs");
/// fn sets<Q: diesel_lease::__private::SetChanges<diesel::dsl::Eq<jobs::status, &'static str>>>() {}
/// # fn main() {
/// sets::<diesel_lease::dsl::ClaimRow<jobs::table>>();
/// # }
/// ```
pub trait SetChanges<Changes> {
    /// The statement with the changes.
    type Output;
}

impl<T: ClaimLease, F, Old, Selection, By, Changes: AsChangeset<Target = T>> SetChanges<Changes>
    for Row<T, F, Old, Selection, By>
{
    type Output = Row<T, F, Changes, Selection, By>;
}

impl<T: ClaimLease, F, O, Old, Selection, By, Changes: AsChangeset<Target = T>> SetChanges<Changes>
    for Batch<T, F, O, Old, Selection, By>
{
    type Output = Batch<T, F, O, Changes, Selection, By>;
}

impl<T: ClaimLease, F, O, Old, Changes: AsChangeset<Target = T>> SetChanges<Changes>
    for Reaping<T, F, O, Old>
{
    type Output = Reaping<T, F, O, Changes>;
}

impl<T: QuerySource, W, Changes: AsChangeset> SetChanges<Changes> for UpdateStatement<T, W> {
    type Output = diesel::dsl::Set<Self, Changes>;
}

/// A claim that gives back a selection of its rows with `.returning(..)`.
///
/// ```
/// # include!("../doctest_setup.rs");
/// fn returns<Q: diesel_lease::__private::ReturnSelection<jobs::id>>() {}
/// # fn main() {
/// returns::<diesel_lease::dsl::ClaimBatch<jobs::table>>();
/// # }
/// ```
pub trait ReturnSelection<Selection> {
    /// The claim with the selection.
    type Output;
}

impl<T: ClaimLease, F, Changes, Old, By, Selection: SelectableExpression<T>>
    ReturnSelection<Selection> for Row<T, F, Changes, Old, By>
{
    type Output = Row<T, F, Changes, Selection, By>;
}

impl<T: ClaimLease, F, O, Changes, Old, By, Selection: SelectableExpression<T>>
    ReturnSelection<Selection> for Batch<T, F, O, Changes, Old, By>
{
    type Output = Batch<T, F, O, Changes, Selection, By>;
}
