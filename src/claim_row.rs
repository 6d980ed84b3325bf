//! Claiming one row, by its primary key, in one conditional `UPDATE` that sets the claim itself.
use diesel::connection::Connection;
use diesel::expression::{AppearsOnTable, Expression, SelectableExpression};
use diesel::expression_methods::EqAll;
use diesel::query_builder::AsChangeset;
use diesel::sql_types::BoolOrNullableBool;
use diesel::Table;

use crate::refusal::Refused;
use crate::strategy::FenceRead;
use crate::strategy::{
    held_by_token, lost_conflict_claims_nothing, taken_by, Both, HeldByToken, NoChanges,
    ReportsWinners, ReturnsSelection, SelectWhere, TakenBy,
};
use crate::{Claim, ClaimLease, Claimable, Error, Fence, Lease, Returning, Update, Where};

/// The condition that picks a row of `T` by its primary key `K`.
pub type KeyIs<T, K> = <<T as Table>::PrimaryKey as EqAll<K>>::Output;

/// The `UPDATE` a [`ClaimRow`] runs.
#[doc(hidden)]
pub type RowClaimStatement<T, K, F, Changes> =
    Update<T, Where<Both<KeyIs<T, K>, F>>, (Changes, TakenBy<T>)>;

/// How MySQL/MariaDB read back the row a [`ClaimRow`] won: by its key and the claim's token.
#[doc(hidden)]
pub type RowReadBack<T, K, Selection> =
    SelectWhere<T, Selection, Both<KeyIs<T, K>, HeldByToken<T>>>;

/// A claim of one row of `T`, by its primary key: built by [`ClaimLease::claim_row`], run by
/// [`by`](Self::by).
///
/// The row is claimed only while it is [claimable](ClaimLease::claimable) under the lease and
/// matches every [`filter`](Self::filter) the caller adds; the caller's [`set`](Self::set) goes
/// into the same `UPDATE` as the claim, so the claim and its status change are one statement.
/// A primary key names at most one row, so a claim can never win rows it was not asked for.
///
/// ```
/// # include!("doctest_setup.rs");
/// use diesel::prelude::*;
/// use diesel_lease::prelude::*;
///
/// # fn main() -> Result<(), diesel_lease::Error> {
/// # let conn = &mut jobs_connection()?;
/// let outcome: Claimed<Job, _, _> = jobs::table
///     .claim_row(1, Lease::from_secs(30)?)
///     .filter(jobs::status.eq("queued"))
///     .set(jobs::status.eq("running"))
///     .by(Claim::new("worker-1")?, conn)?;
/// let Claimed::Won(won) = outcome else { panic!("a queued, unclaimed job is claimable") };
/// assert_eq!(won.row().status, "running");
/// assert_eq!(won.row().claim_token.as_deref(), Some(won.claim().token()));
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, Copy)]
#[must_use = "a claim does nothing until it is run with `.by(claim, conn)`"]
pub struct ClaimRow<T, K, F, Changes, Selection> {
    table: T,
    key: K,
    lease: Lease,
    filter: F,
    changes: Changes,
    selection: Selection,
}

impl<T: ClaimLease, K> ClaimRow<T, K, Claimable<T>, NoChanges<T>, T::AllColumns> {
    pub(crate) fn new(table: T, key: K, lease: Lease) -> Self {
        Self {
            table,
            key,
            lease,
            filter: table.claimable(lease),
            changes: NoChanges::default(),
            selection: T::all_columns(),
        }
    }
}

impl<T: ClaimLease, K, F, Changes, Selection> ClaimRow<T, K, F, Changes, Selection> {
    /// Claims the row only if it also matches `predicate` (a status, a due time): the table's
    /// own rule of what may be taken, added to the lease's.
    ///
    /// ```
    /// # include!("doctest_setup.rs");
    /// # use diesel::prelude::*;
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let outcome: Claimed<Job, _, _> = jobs::table
    ///     .claim_row(1, Lease::from_secs(30)?)
    ///     .filter(jobs::status.eq("done"))
    ///     .by(Claim::new("worker-1")?, conn)?;
    /// assert!(!outcome.is_won(), "job 1 is queued, not done");
    /// # Ok(())
    /// # }
    /// ```
    pub fn filter<P>(self, predicate: P) -> ClaimRow<T, K, Both<F, P>, Changes, Selection>
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
    /// # include!("doctest_setup.rs");
    /// # use diesel::prelude::*;
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let outcome: Claimed<Job, _, _> = jobs::table
    ///     .claim_row(1, Lease::from_secs(30)?)
    ///     .set(jobs::status.eq("running"))
    ///     .by(Claim::new("worker-1")?, conn)?;
    /// assert_eq!(outcome.won().map(|won| won.into_row().status).as_deref(), Some("running"));
    /// # Ok(())
    /// # }
    /// ```
    pub fn set<C: AsChangeset<Target = T>>(self, changes: C) -> ClaimRow<T, K, F, C, Selection> {
        ClaimRow {
            table: self.table,
            key: self.key,
            lease: self.lease,
            filter: self.filter,
            changes,
            selection: self.selection,
        }
    }

    /// Gives back `selection` of the row won (`Job::as_returning()`, a column, a tuple) rather
    /// than all its columns.
    ///
    /// ```
    /// # include!("doctest_setup.rs");
    /// # use diesel::prelude::*;
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let outcome: Claimed<String, _, _> = jobs::table
    ///     .claim_row(1, Lease::from_secs(30)?)
    ///     .returning(jobs::status)
    ///     .by(Claim::new("worker-1")?, conn)?;
    /// assert_eq!(outcome.won().map(|won| won.into_row()).as_deref(), Some("queued"));
    /// # Ok(())
    /// # }
    /// ```
    pub fn returning<S: SelectableExpression<T>>(
        self,
        selection: S,
    ) -> ClaimRow<T, K, F, Changes, S> {
        ClaimRow {
            table: self.table,
            key: self.key,
            lease: self.lease,
            filter: self.filter,
            changes: self.changes,
            selection,
        }
    }

    /// Runs the claim for `claim` (who, and under which token): [`Claimed::Won`] with the row
    /// and the claim, or [`Claimed::Refused`], whose [`why`](Refused::why) says why on demand.
    ///
    /// Whether the claim won is read from the claiming statement itself: its `RETURNING` row on
    /// PostgreSQL and SQLite; on MySQL/MariaDB its matched-row count, then the row read by key and
    /// token. A claim that loses a write conflict (a deadlock, a Galera certification failure)
    /// outside a transaction of the caller's is refused like any lost race.
    ///
    /// ```
    /// # include!("doctest_setup.rs");
    /// # use diesel::prelude::*;
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let lease = Lease::from_secs(30)?;
    /// let first: Claimed<Job, _, _> = jobs::table.claim_row(1, lease).by(Claim::new("worker-1")?, conn)?;
    /// assert!(first.is_won());
    /// let second: Claimed<Job, _, _> = jobs::table.claim_row(1, lease).by(Claim::new("worker-2")?, conn)?;
    /// assert!(!second.is_won(), "the lease is fresh");
    /// # Ok(())
    /// # }
    /// ```
    pub fn by<'q, C, R>(self, claim: Claim, conn: &mut C) -> Result<Claimed<R, T, K>, Error>
    where
        C: Connection,
        Changes: AsChangeset<Target = T>,
        K: Clone,
        T::PrimaryKey: EqAll<K>,
        C::Backend: ReportsWinners<
            'q,
            RowClaimStatement<T, K, F, Changes>,
            (Selection, FenceRead<T>),
            RowReadBack<T, K, (Selection, FenceRead<T>)>,
            C,
            (R, Option<i64>),
        >,
        Selection: Clone,
    {
        let key_is = || self.table.primary_key().eq_all(self.key.clone());
        let statement = Update::new(
            self.table,
            Where::new(Both::new(key_is(), self.filter)),
            // The caller's changes first: MySQL evaluates `SET` left to right, so they read the
            // row as it was before the claim there too, as on PostgreSQL and SQLite.
            (self.changes, taken_by::<T>(&claim)),
        );
        let selection = || (self.selection.clone(), <T::Fence as Fence<T>>::read());
        let read_back = SelectWhere::new(
            self.table,
            selection(),
            Both::new(key_is(), held_by_token::<T>(&claim)),
        );
        let winner = C::Backend::winner(statement, selection(), read_back, conn);
        Ok(match lost_conflict_claims_nothing(winner, conn)? {
            Some((row, fence)) => {
                crate::events::acquired::<T>(&claim, 1);
                Claimed::Won(Won { row, claim, fence })
            }
            None => Claimed::Refused(Refused::new(self.table, self.key, self.lease)),
        })
    }
}

impl<T: Table, W, Changes: AsChangeset, Selection> ReturnsSelection<Selection>
    for Update<T, W, Changes>
{
    type Returning = Update<T, W, Changes, Returning<Selection>>;

    fn returning(self, selection: Selection) -> Self::Returning {
        Update::returning(self, selection)
    }
}

/// What a single-row claim came to: won, with the row and the claim, or refused.
///
/// ```
/// # include!("doctest_setup.rs");
/// # use diesel::prelude::*;
/// # use diesel_lease::prelude::*;
/// # fn main() -> Result<(), diesel_lease::Error> {
/// # let conn = &mut jobs_connection()?;
/// match jobs::table.claim_row(1, Lease::from_secs(30)?).by(Claim::new("worker-1")?, conn)? {
///     Claimed::Won(won) => {
///         let job: Job = won.into_row();
///         assert_eq!(job.owner.as_deref(), Some("worker-1"));
///     }
///     Claimed::Refused(refused) => panic!("{:?}", refused.why(conn)?),
/// }
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
#[must_use = "a claim that won holds a row until its lease runs out or it is released"]
pub enum Claimed<R, T, K> {
    /// The claim won the row.
    Won(Won<R>),
    /// The claim took nothing: the row is missing, held, or not claimable by the caller's filter.
    Refused(Refused<T, K>),
}

impl<R, T, K> Claimed<R, T, K> {
    /// Whether the claim won.
    ///
    /// ```
    /// # include!("doctest_setup.rs");
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let outcome: Claimed<Job, _, _> = jobs::table.claim_row(9, Lease::from_secs(30)?).by(Claim::new("w")?, conn)?;
    /// assert!(!outcome.is_won(), "there is no job 9");
    /// # Ok(())
    /// # }
    /// ```
    pub fn is_won(&self) -> bool {
        matches!(self, Claimed::Won(_))
    }

    /// The win, if the claim won.
    ///
    /// ```
    /// # include!("doctest_setup.rs");
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let outcome: Claimed<Job, _, _> = jobs::table.claim_row(1, Lease::from_secs(30)?).by(Claim::new("w")?, conn)?;
    /// assert_eq!(outcome.won().map(|won| won.into_row().id), Some(1));
    /// # Ok(())
    /// # }
    /// ```
    pub fn won(self) -> Option<Won<R>> {
        match self {
            Claimed::Won(won) => Some(won),
            Claimed::Refused(_) => None,
        }
    }
}

/// A row won by a claim, with the claim that holds it: its token guards every later write.
///
/// ```
/// # include!("doctest_setup.rs");
/// # use diesel::prelude::*;
/// # use diesel_lease::prelude::*;
/// # fn main() -> Result<(), diesel_lease::Error> {
/// # let conn = &mut jobs_connection()?;
/// let outcome: Claimed<Job, _, _> = jobs::table.claim_row(1, Lease::from_secs(30)?).by(Claim::new("w")?, conn)?;
/// let won = outcome.won().expect("claimable");
/// let done = diesel::update(jobs::table.find(1).filter(jobs::table.held_by(won.claim().token())))
///     .set((jobs::table.released(), jobs::status.eq("done")))
///     .execute(conn)?;
/// assert_eq!(done, 1);
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Won<R> {
    row: R,
    claim: Claim,
    fence: Option<i64>,
}

impl<R> Won<R> {
    /// The row as the claim left it (or the selection asked for).
    ///
    /// ```
    /// # include!("doctest_setup.rs");
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let outcome: Claimed<Job, _, _> = jobs::table.claim_row(1, Lease::from_secs(30)?).by(Claim::new("w")?, conn)?;
    /// assert_eq!(outcome.won().expect("won").row().owner.as_deref(), Some("w"));
    /// # Ok(())
    /// # }
    /// ```
    pub fn row(&self) -> &R {
        &self.row
    }

    /// The claim that holds the row.
    ///
    /// ```
    /// # include!("doctest_setup.rs");
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let outcome: Claimed<Job, _, _> = jobs::table.claim_row(1, Lease::from_secs(30)?).by(Claim::new("w")?, conn)?;
    /// assert_eq!(outcome.won().expect("won").claim().owner(), "w");
    /// # Ok(())
    /// # }
    /// ```
    pub fn claim(&self) -> &Claim {
        &self.claim
    }

    /// The row's fence after this take, if its table has one: higher than every earlier
    /// holder's. Hand it to outside resources with each write; see [`Fence`].
    ///
    /// ```
    /// # include!("doctest_setup.rs");
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let outcome: Claimed<Job, _, _> = jobs::table.claim_row(1, Lease::from_secs(30)?).by(Claim::new("w")?, conn)?;
    /// assert_eq!(outcome.won().expect("won").fence(), None, "the doctests' jobs table has no fence");
    /// # Ok(())
    /// # }
    /// ```
    pub fn fence(&self) -> Option<i64> {
        self.fence
    }

    /// The row, leaving the claim.
    ///
    /// ```
    /// # include!("doctest_setup.rs");
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let outcome: Claimed<Job, _, _> = jobs::table.claim_row(1, Lease::from_secs(30)?).by(Claim::new("w")?, conn)?;
    /// let job: Job = outcome.won().expect("won").into_row();
    /// # let _ = job;
    /// # Ok(())
    /// # }
    /// ```
    pub fn into_row(self) -> R {
        self.row
    }

    /// The row and the claim.
    ///
    /// ```
    /// # include!("doctest_setup.rs");
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let outcome: Claimed<Job, _, _> = jobs::table.claim_row(1, Lease::from_secs(30)?).by(Claim::new("w")?, conn)?;
    /// let (job, claim) = outcome.won().expect("won").into_parts();
    /// assert_eq!(job.claim_token.as_deref(), Some(claim.token()));
    /// # Ok(())
    /// # }
    /// ```
    pub fn into_parts(self) -> (R, Claim) {
        (self.row, self.claim)
    }
}
