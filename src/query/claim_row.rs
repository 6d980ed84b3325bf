//! Claiming one row by its primary key.
use diesel::connection::Connection;
use diesel::expression::{AppearsOnTable, Expression, SelectableExpression};
use diesel::expression_methods::EqAll;
use diesel::query_builder::AsChangeset;
use diesel::query_dsl::LoadQuery;
use diesel::sql_types::BoolOrNullableBool;
use diesel::Table;

use crate::backend::NativeLeaseQuery;
use crate::backend::{lost_conflict_changes_nothing, ClaimsRow, LeaseBackend, RowClaim};
use crate::conflicts::Operation;
use crate::events::table_name;
use crate::outcome::{read_why, Claimed, Refused, WhyRead, Won};
use crate::query::{Claimant, LeaseStatement, NoClaimant};
use crate::sql::{Both, CachedUpdate, NoChanges, NoLock, SelectWhere, Where};
use crate::table::{taken_by, token_is};
use crate::{
    Claim, ClaimLease, Claimable, Error, Fence, FenceRead, Lease, Refusal, TakenBy, TokenIs,
};

/// The condition that picks a row of `T` by its primary key.
type KeyIs<T> = <<T as Table>::PrimaryKey as EqAll<<T as ClaimLease>::Key>>::Output;

/// The plan of a claim of one row: its `UPDATE`, what it gives back, and its read-back by token.
type RowClaimPlan<T, F, Changes, Selection> = RowClaim<
    CachedUpdate<T, Where<Both<KeyIs<T>, F>>, (Changes, TakenBy<T>)>,
    (Selection, FenceRead<T>),
    SelectWhere<T, (Selection, FenceRead<T>), Both<KeyIs<T>, TokenIs<T>>, NoLock>,
>;

/// A claim of one row of `T`, by its primary key: built by
/// [`LeaseDsl::claim_row`](crate::LeaseDsl::claim_row), said whose by [`by`](Self::by), run by
/// `.run(conn)`.
///
/// The row is claimed only while it is [claimable](ClaimLease::claimable) under the lease and
/// matches every [`filter`](Self::filter) the caller adds; the caller's [`set`](Self::set) goes
/// into the same `UPDATE` as the claim, so the claim and its status change are one statement.
/// Whether it won is read from that statement: its `RETURNING` row on PostgreSQL and SQLite; on
/// MySQL/MariaDB its matched-row count, then the row read by key and token. A primary key names
/// at most one row, so a claim never wins rows it was not asked for; a claim that loses a write
/// conflict (a deadlock, a Galera certification failure) outside a transaction of the caller's is
/// refused like any lost race. Refused, the run reads why right after, on the same connection and
/// in the caller's transaction if any (one read, by the database's clock, with the claim's
/// filter evaluated in it): the [`Refused`] outcome carries it.
///
/// ```
/// # include!("../doctest_setup.rs");
/// use diesel::prelude::*;
/// use diesel_lease::prelude::*;
///
/// # fn main() -> Result<(), diesel_lease::Error> {
/// # let conn = &mut jobs_connection()?;
/// let worker = Claim::new("worker-1")?;
/// let outcome = jobs::table
///     .claim_row(1, Lease::from_secs(30)?)
///     .by(&worker)
///     .filter(jobs::status.eq("queued"))
///     .set(jobs::status.eq("running"))
///     .returning(Job::as_select())
///     .run(conn)?;
/// let Claimed::Won(won) = outcome else { panic!("a queued, unclaimed job is claimable") };
/// assert_eq!(won.row().status, "running");
/// assert_eq!(won.row().claim_token.as_deref(), Some(worker.token()));
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
#[must_use = "a claim does nothing until it is run"]
pub struct ClaimRow<T: ClaimLease, F, Changes, Selection, By> {
    table: T,
    key: T::Key,
    lease: Lease,
    filter: F,
    changes: Changes,
    selection: Selection,
    by: By,
}

impl<T: ClaimLease> ClaimRow<T, Claimable<T>, NoChanges<T>, T::AllColumns, NoClaimant> {
    pub(crate) fn new(table: T, key: T::Key, lease: Lease) -> Self {
        Self {
            table,
            key,
            lease,
            filter: table.claimable(lease),
            changes: NoChanges::default(),
            selection: T::all_columns(),
            by: NoClaimant,
        }
    }
}

impl<T: ClaimLease, F, Changes, Selection, By> ClaimRow<T, F, Changes, Selection, By> {
    /// Who claims the row: `claim`'s owner and token, which the claim writes and the outcome
    /// carries.
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let worker = Claim::new("worker-1")?;
    /// let outcome = jobs::table.claim_row(1, Lease::from_secs(30)?).by(&worker).run::<Job>(conn)?;
    /// assert_eq!(outcome.won().map(|won| won.claim().clone()), Some(worker));
    /// # Ok(())
    /// # }
    /// ```
    pub fn by(self, claim: &Claim) -> ClaimRow<T, F, Changes, Selection, Claim> {
        ClaimRow {
            table: self.table,
            key: self.key,
            lease: self.lease,
            filter: self.filter,
            changes: self.changes,
            selection: self.selection,
            by: claim.clone(),
        }
    }

    /// Claims the row only if it also matches `predicate` (a status, a due time): the table's
    /// own rule of what may be taken, added to the lease's.
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use diesel::prelude::*;
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let outcome = jobs::table
    ///     .claim_row(1, Lease::from_secs(30)?)
    ///     .by(&Claim::new("worker-1")?)
    ///     .filter(jobs::status.eq("done"))
    ///     .run::<Job>(conn)?;
    /// assert!(!outcome.is_won(), "job 1 is queued, not done");
    /// # Ok(())
    /// # }
    /// ```
    pub fn filter<P>(self, predicate: P) -> ClaimRow<T, Both<F, P>, Changes, Selection, By>
    where
        P: Expression + AppearsOnTable<T>,
        P::SqlType: BoolOrNullableBool,
    {
        ClaimRow {
            table: self.table,
            key: self.key,
            lease: self.lease,
            filter: Both::new(self.filter, predicate),
            changes: self.changes,
            selection: self.selection,
            by: self.by,
        }
    }

    /// The caller's own changes, set by the same `UPDATE` as the claim: anything
    /// `diesel::update(..).set(..)` takes, on the table's other columns.
    ///
    /// They read the row as it was before the claim on every backend (MySQL evaluates `SET`
    /// from left to right, so the library writes them first): `prev_owner.eq(owner)` keeps the
    /// holder the claim takes the row from.
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use diesel::prelude::*;
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let outcome = jobs::table
    ///     .claim_row(1, Lease::from_secs(30)?)
    ///     .by(&Claim::new("worker-1")?)
    ///     .set(jobs::status.eq("running"))
    ///     .run::<Job>(conn)?;
    /// assert_eq!(outcome.won().map(|won| won.into_row().status).as_deref(), Some("running"));
    /// # Ok(())
    /// # }
    /// ```
    pub fn set<C: AsChangeset<Target = T>>(self, changes: C) -> ClaimRow<T, F, C, Selection, By> {
        ClaimRow {
            table: self.table,
            key: self.key,
            lease: self.lease,
            filter: self.filter,
            changes,
            selection: self.selection,
            by: self.by,
        }
    }

    /// Gives back `selection` of the row won (`Job::as_select()`, a column, a tuple) rather
    /// than all its columns.
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use diesel::prelude::*;
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let outcome = jobs::table
    ///     .claim_row(1, Lease::from_secs(30)?)
    ///     .by(&Claim::new("worker-1")?)
    ///     .returning(jobs::status)
    ///     .run::<String>(conn)?;
    /// assert_eq!(outcome.won().map(|won| won.into_row()).as_deref(), Some("queued"));
    /// # Ok(())
    /// # }
    /// ```
    pub fn returning<S: SelectableExpression<T>>(
        self,
        selection: S,
    ) -> ClaimRow<T, F, Changes, S, By> {
        ClaimRow {
            table: self.table,
            key: self.key,
            lease: self.lease,
            filter: self.filter,
            changes: self.changes,
            selection,
            by: self.by,
        }
    }

    /// The lease the claim is made under.
    pub(crate) fn lease(&self) -> Lease {
        self.lease
    }
}

impl<T: ClaimLease, F, Changes, Selection, By, U> LeaseStatement<U>
    for ClaimRow<T, F, Changes, Selection, By>
{
    type Output = Claimed<U, T>;
}

impl<'q, T, F, Changes, Selection, By, U, C> NativeLeaseQuery<'q, C, U>
    for ClaimRow<T, F, Changes, Selection, By>
where
    T: ClaimLease,
    By: Claimant,
    T::PrimaryKey: EqAll<T::Key>,
    F: Clone,
    Changes: AsChangeset<Target = T>,
    Selection: Clone,
    C: Connection,
    C::Backend: LeaseBackend,
    C::Backend: ClaimsRow<'q, C, RowClaimPlan<T, F, Changes, Selection>, (U, Option<i64>)>,
    WhyRead<T, F>: LoadQuery<'q, C, (Refusal, Option<bool>)>,
{
    fn run_native(self, conn: &mut C) -> Result<Claimed<U, T>, Error> {
        let claim = self.by.into_claim();
        let table = self.table;
        let key_is = || table.primary_key().eq_all(self.key.clone());
        let selection = || (self.selection.clone(), <T::Fence as Fence<T>>::read());
        // The claim's condition, for the read of why should it be refused.
        let condition = self.filter.clone();
        let plan: RowClaimPlan<T, F, Changes, Selection> = RowClaim {
            // The caller's changes first: MySQL evaluates `SET` left to right, so they read the
            // row as it was before the claim there too, as on PostgreSQL and SQLite.
            statement: CachedUpdate::new(
                table,
                Where::new(Both::new(key_is(), self.filter)),
                (self.changes, taken_by::<T>(&claim)),
            ),
            selection: selection(),
            read_back: SelectWhere::new(
                table,
                selection(),
                Both::new(key_is(), token_is::<T>(&claim)),
            ),
        };
        let won = C::Backend::claim_row(plan, conn);
        let lost = (Operation::RowClaim, table_name::<T>(), Some(&claim));
        Ok(match lost_conflict_changes_nothing(won, conn, lost)? {
            Some((row, fence)) => {
                crate::events::emit_acquired::<T>(&claim, 1);
                Claimed::Won(Won::new(row, table, self.key, claim, fence))
            }
            None => {
                // Only to explain the refusal: whether the claim won was the statement's answer.
                let why = read_why(table, self.key.clone(), self.lease, condition, conn)?;
                Claimed::Refused(Refused::new(self.key, why))
            }
        })
    }
}

impl<T: ClaimLease, F, Changes, Selection, By, C> crate::RunLeaseDsl<C>
    for ClaimRow<T, F, Changes, Selection, By>
{
}
