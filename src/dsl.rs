//! The types of the statements diesel-lease builds, for code that names them: a helper's return
//! type, the bound of a function generic over the connection. Diesel's own `dsl` is re-exported
//! here (hidden), so that `#[diesel::dsl::auto_type(dsl_path = "diesel_lease::dsl")]` infers the
//! type of a function that builds a statement, Diesel's parts and the library's alike, and names
//! it: [chapter 8 of the guide](crate::guide::ch08_generic_code) shows both ways.
use diesel::expression::{AppearsOnTable, Expression, SelectableExpression};
use diesel::query_builder::AsChangeset;
use diesel::query_dsl::methods::{FilterDsl, OrderDsl};
use diesel::sql_types::BoolOrNullableBool;
use diesel::Table;

// Diesel's own, so that `auto_type(dsl_path = "diesel_lease::dsl")` finds Diesel's parts too;
// hidden, since they are Diesel's to document.
#[doc(hidden)]
pub use diesel::dsl::*;

use crate::query::{ClaimBatch as Batch, ClaimRow as Row, Guarded, Reap as Reaping};
use crate::query::{OwnerRelease, Releasing, Renewing, Writing};
use crate::sql::{And as Both, NoChanges, NoOrder, OrderBy as Ordered};
use crate::{Claim, ClaimLease, Holds, Lease, NoClaimant, OwnedRows};

// The changesets and predicates of a table's lease columns, for statements composed by hand,
// and the exact text comparison they use.
pub use crate::sql::{Now, Null, TextIs};
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

/// The type of `holder.renew()`, named by the holder `H`: a row won ([`Won`](crate::Won), whose
/// statements answer `bool`, whether it still held its row), a batch, rows named by key, kept
/// rows (which answer with the keys of the rows still held).
///
/// ```
/// # include!("doctest_setup.rs");
/// use diesel::prelude::*;
/// use diesel_lease::prelude::*;
/// use diesel_lease::dsl;
///
/// type Held = Won<Job, jobs::table>;
///
/// /// A holder's round on any connection: renew its row, then finish it. One bound a statement.
/// fn renew_then_finish<C>(won: &Held, conn: &mut C) -> Result<bool, diesel_lease::Error>
/// where
///     for<'q> dsl::Renew<Held>: LeaseQuery<'q, C, i64>,
///     for<'q> dsl::Release<Held, diesel::dsl::Eq<jobs::status, &'static str>>: LeaseQuery<'q, C, i64>,
/// {
///     Ok(won.renew().run(conn)? && won.release().set(jobs::status.eq("done")).run(conn)?)
/// }
///
/// # fn main() -> Result<(), diesel_lease::Error> {
/// # let conn = &mut jobs_connection()?;
/// let won = jobs::table.claim_row(1, Lease::from_secs(30)?).by(&Claim::new("w")?).run::<Job>(conn)?.won().expect("free");
/// assert!(renew_then_finish(&won, conn)?);
/// # Ok(())
/// # }
/// ```
pub type Renew<H> = Guarded<Of<H>, Renewing, NoChanges<Of<H>>, <H as Holds>::Answer>;

/// The type of `holder.update().set(changes)`, named by the holder `H` (see [`Renew`]).
///
/// ```
/// # include!("doctest_setup.rs");
/// use diesel::prelude::*;
/// use diesel_lease::prelude::*;
/// use diesel_lease::dsl;
///
/// type Start = diesel::dsl::Eq<jobs::status, &'static str>;
///
/// fn start(held: &HeldRows<jobs::table>) -> dsl::Write<HeldRows<jobs::table>, Start> {
///     held.update().set(jobs::status.eq("running"))
/// }
/// # fn main() -> Result<(), diesel_lease::Error> {
/// # let conn = &mut jobs_connection()?;
/// let claim = Claim::new("w")?;
/// jobs::table.claim_row(1, Lease::from_secs(30)?).by(&claim).run::<Job>(conn)?;
/// assert_eq!(start(&jobs::table.held_rows(&claim, [1])).run(conn)?, [1]);
/// # Ok(())
/// # }
/// ```
pub type Write<H, Changes> = Guarded<Of<H>, Writing, Changes, <H as Holds>::Answer>;

/// The type of `rows.release()`, with the caller's `.set(changes)` (none by default), named by
/// what the rows are: a holder `H` (see [`Renew`]), or rows named by who holds them
/// ([`OwnedRows`], released whatever their claims).
///
/// ```
/// # include!("doctest_setup.rs");
/// use diesel_lease::prelude::*;
/// use diesel_lease::dsl;
///
/// fn give_back(held: &HeldRows<jobs::table>) -> dsl::Release<HeldRows<jobs::table>> {
///     held.release()
/// }
/// # fn main() -> Result<(), diesel_lease::Error> {
/// # let conn = &mut jobs_connection()?;
/// let claim = Claim::new("w")?;
/// jobs::table.claim_row(1, Lease::from_secs(30)?).by(&claim).run::<Job>(conn)?;
/// assert_eq!(give_back(&jobs::table.held_rows(&claim, [1])).run(conn)?, [1]);
/// # Ok(())
/// # }
/// ```
pub type Release<S, Changes = NoChanges<<S as Releases>::Table>> =
    <S as Releases>::Release<Changes>;

/// The type of `table.holders(lease)`: who holds which rows of `T`, by the database's clock.
pub type Holders<T> = crate::query::Holders<T, crate::query::AllHeld>;

/// The type of `table.held_per_owner()`: how many rows of `T` each owner holds.
pub type HeldPerOwner<T> = crate::query::HeldPerOwner<T>;

/// The table whose rows a holder holds.
type Of<H> = <H as Holds>::Table;

// The traits the aliases above go through: named by them, never by users, so public only
// through `crate::__private`.
pub(crate) mod parts {
    use super::*;

    /// What `.release()` builds on rows of a table, by what names the rows: a holder's release
    /// guarded by its token, or the release of rows named by their owners.
    ///
    /// ```
    /// # include!("doctest_setup.rs");
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
    /// # include!("doctest_setup.rs");
    /// fn starts<T: diesel_lease::__private::Starts<i64, diesel_lease::Lease>>() {}
    /// # fn main() {
    /// starts::<jobs::table>();
    /// # }
    /// ```
    pub trait Starts<A, B> {
        /// `table.claim_row(key, lease)`.
        type ClaimRow;
        /// `table.claim_batch(size, lease)`.
        type ClaimBatch;
        /// `table.reap(size, lease)`.
        type Reap;
    }

    impl<T: ClaimLease, A, B> Starts<A, B> for T {
        type ClaimRow = Row<T, Claimable<T>, NoChanges<T>, <T as Table>::AllColumns, NoClaimant>;
        type ClaimBatch =
            Batch<T, Claimable<T>, NoOrder, NoChanges<T>, <T as Table>::AllColumns, NoClaimant>;
        type Reap = Reaping<T, Outlived<T>, NoOrder, NoChanges<T>>;
    }

    /// A claim that says whose it is with `.by(&claim)`: a [`ClaimRow`](crate::ClaimRow) or a
    /// [`ClaimBatch`](crate::ClaimBatch), whatever its other parts.
    ///
    /// ```
    /// # include!("doctest_setup.rs");
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

    /// A statement of the library's that takes the caller's changes with `.set(..)`.
    ///
    /// ```
    /// # include!("doctest_setup.rs");
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

    impl<T: ClaimLease, F, O, Old, Selection, By, Changes: AsChangeset<Target = T>>
        SetChanges<Changes> for Batch<T, F, O, Old, Selection, By>
    {
        type Output = Batch<T, F, O, Changes, Selection, By>;
    }

    impl<T: ClaimLease, F, O, Old, Changes: AsChangeset<Target = T>> SetChanges<Changes>
        for Reaping<T, F, O, Old>
    {
        type Output = Reaping<T, F, O, Changes>;
    }

    /// A claim that gives back a selection of its rows with `.returning(..)`.
    ///
    /// ```
    /// # include!("doctest_setup.rs");
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
}

pub(crate) use parts::{ByClaim, Releases, ReturnSelection, SetChanges, Starts};

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
