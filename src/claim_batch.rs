//! Claiming the next rows that are due: up to N claimable rows, in the caller's order, in one
//! statement that concurrent claimers cannot both win.
use diesel::connection::Connection;
use diesel::expression::{AppearsOnTable, Expression, SelectableExpression};
use diesel::query_builder::AsChangeset;
use diesel::sql_types::BoolOrNullableBool;

use crate::batch_update::{batch_limit, BatchUpdateParts, NoOrder, OrderBy, RunsBatchUpdates};
use crate::strategy::{
    held_by_token, lost_conflict_claims_nothing, taken_by, Both, FenceRead, HeldByToken, NoChanges,
    TakenBy,
};
use crate::{Claim, ClaimLease, Claimable, Error, Fence, Lease};

/// A claim of the next rows of `T` that are due: built by [`ClaimLease::claim_batch`], run by
/// [`by`](Self::by).
///
/// Up to `size` rows that are [claimable](ClaimLease::claimable) under the lease and match every
/// [`filter`](Self::filter): the first ones in the [`order_by`](Self::order_by) order, with the
/// caller's [`set`](Self::set) in the same statement. The rows won come back in no particular
/// order (`RETURNING` keeps none). Concurrent batches never win the same row, and
/// never wait for each other's rows where the backend can skip them:
///
/// * PostgreSQL: the candidates are picked with `FOR UPDATE SKIP LOCKED` in a `MATERIALIZED`
///   CTE (so the plan cannot run the pick twice and claim more than `size` rows; `FOR UPDATE`
///   re-checks the filter on each row's newest version), and the `UPDATE` names them;
/// * MySQL/MariaDB: a short READ COMMITTED transaction: `SELECT key .. FOR UPDATE SKIP LOCKED`,
///   an `UPDATE` of those keys (InnoDB then locks rows by key equality alone, so queues do not
///   deadlock), and the rows read back by the batch's token;
/// * SQLite: `UPDATE .. WHERE key IN (SELECT key .. LIMIT n) .. RETURNING`; SQLite runs one
///   writer at a time.
///
/// ```
/// # include!("doctest_setup.rs");
/// use diesel::prelude::*;
/// use diesel_lease::prelude::*;
///
/// # fn main() -> Result<(), diesel_lease::Error> {
/// # let conn = &mut jobs_connection()?;
/// # diesel::sql_query("INSERT INTO jobs (id, status) VALUES (2, 'queued'), (3, 'queued')").execute(conn)?;
/// let batch: Batch<Job> = jobs::table
///     .claim_batch(2, Lease::from_secs(30)?)
///     .filter(jobs::status.eq("queued"))
///     .order_by(jobs::id)
///     .set(jobs::status.eq("running"))
///     .by("worker-1", conn)?;
/// let mut ids: Vec<i64> = batch.rows().iter().map(|job| job.id).collect();
/// ids.sort();
/// assert_eq!(ids, [1, 2]);
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, Copy)]
#[must_use = "a claim does nothing until it is run with `.by(owner, conn)`"]
pub struct ClaimBatch<T, F, O, Changes, Selection> {
    table: T,
    size: usize,
    lease: Lease,
    filter: F,
    order: O,
    changes: Changes,
    selection: Selection,
}

impl<T: ClaimLease> ClaimBatch<T, Claimable<T>, NoOrder, NoChanges<T>, T::AllColumns> {
    pub(crate) fn new(table: T, size: usize, lease: Lease) -> Self {
        Self {
            table,
            size,
            lease,
            filter: table.claimable(lease),
            order: NoOrder,
            changes: NoChanges::default(),
            selection: T::all_columns(),
        }
    }
}

impl<T, F, O, Changes, Selection> ClaimBatch<T, F, O, Changes, Selection> {
    /// The most rows one batch may claim.
    pub const MAX_BATCH: usize = crate::batch_update::MAX_BATCH;
}

impl<T: ClaimLease, F, O, Changes, Selection> ClaimBatch<T, F, O, Changes, Selection> {
    /// Claims only rows that also match `predicate`: the table's own rule of what is due.
    ///
    /// ```
    /// # include!("doctest_setup.rs");
    /// # use diesel::prelude::*;
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let batch: Batch<Job> = jobs::table
    ///     .claim_batch(10, Lease::from_secs(30)?)
    ///     .filter(jobs::status.eq("done"))
    ///     .by("worker-1", conn)?;
    /// assert!(batch.is_empty(), "no job is done");
    /// # Ok(())
    /// # }
    /// ```
    pub fn filter<P>(self, predicate: P) -> ClaimBatch<T, Both<F, P>, O, Changes, Selection>
    where
        P: Expression + AppearsOnTable<T>,
        P::SqlType: BoolOrNullableBool,
    {
        ClaimBatch {
            table: self.table,
            size: self.size,
            lease: self.lease,
            filter: Both::new(self.filter, predicate),
            order: self.order,
            changes: self.changes,
            selection: self.selection,
        }
    }

    /// Which rows come first: a column, `column.desc()`, or a tuple of them.
    ///
    /// ```
    /// # include!("doctest_setup.rs");
    /// # use diesel::prelude::*;
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// # diesel::sql_query("INSERT INTO jobs (id, status) VALUES (2, 'queued')").execute(conn)?;
    /// let batch: Batch<Job> = jobs::table
    ///     .claim_batch(1, Lease::from_secs(30)?)
    ///     .order_by(jobs::id.desc())
    ///     .by("worker-1", conn)?;
    /// assert_eq!(batch.rows()[0].id, 2);
    /// # Ok(())
    /// # }
    /// ```
    pub fn order_by<Order>(
        self,
        order: Order,
    ) -> ClaimBatch<T, F, OrderBy<Order>, Changes, Selection>
    where
        Order: AppearsOnTable<T>,
    {
        ClaimBatch {
            table: self.table,
            size: self.size,
            lease: self.lease,
            filter: self.filter,
            order: OrderBy(order),
            changes: self.changes,
            selection: self.selection,
        }
    }

    /// The caller's own changes, set on every claimed row by the same statement.
    /// They read each row as it was before, on every backend ([`ClaimRow::set`](crate::ClaimRow::set)).
    ///
    /// ```
    /// # include!("doctest_setup.rs");
    /// # use diesel::prelude::*;
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let batch: Batch<Job> = jobs::table
    ///     .claim_batch(10, Lease::from_secs(30)?)
    ///     .set(jobs::status.eq("running"))
    ///     .by("worker-1", conn)?;
    /// assert!(batch.rows().iter().all(|job| job.status == "running"));
    /// # Ok(())
    /// # }
    /// ```
    pub fn set<C: AsChangeset<Target = T>>(self, changes: C) -> ClaimBatch<T, F, O, C, Selection> {
        ClaimBatch {
            table: self.table,
            size: self.size,
            lease: self.lease,
            filter: self.filter,
            order: self.order,
            changes,
            selection: self.selection,
        }
    }

    /// Gives back `selection` of each row won rather than all its columns.
    ///
    /// ```
    /// # include!("doctest_setup.rs");
    /// # use diesel::prelude::*;
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let batch: Batch<i64> = jobs::table
    ///     .claim_batch(10, Lease::from_secs(30)?)
    ///     .returning(jobs::id)
    ///     .by("worker-1", conn)?;
    /// assert_eq!(batch.rows(), [1]);
    /// # Ok(())
    /// # }
    /// ```
    pub fn returning<S: SelectableExpression<T>>(
        self,
        selection: S,
    ) -> ClaimBatch<T, F, O, Changes, S> {
        ClaimBatch {
            table: self.table,
            size: self.size,
            lease: self.lease,
            filter: self.filter,
            order: self.order,
            changes: self.changes,
            selection,
        }
    }

    /// Runs the claim for `owner`, under a token of its own: the rows won, possibly none.
    ///
    /// A size of zero or above [`MAX_BATCH`](Self::MAX_BATCH) is
    /// [`Error::InvalidBatchSize`], and an unusable owner [`Error::InvalidOwner`], before anything
    /// is sent. A batch that loses a write conflict outside a transaction of the caller's (a
    /// deadlock, a Galera certification failure) claims nothing and is empty.
    ///
    /// ```
    /// # include!("doctest_setup.rs");
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let lease = Lease::from_secs(30)?;
    /// let first: Batch<Job> = jobs::table.claim_batch(10, lease).by("worker-1", conn)?;
    /// let second: Batch<Job> = jobs::table.claim_batch(10, lease).by("worker-2", conn)?;
    /// assert_eq!((first.len(), second.len()), (1, 0));
    /// assert!(matches!(
    ///     jobs::table.claim_batch(0, lease).by::<_, Job>("worker-3", conn),
    ///     Err(diesel_lease::Error::InvalidBatchSize(_))
    /// ));
    /// # Ok(())
    /// # }
    /// ```
    pub fn by<'q, C, R>(self, owner: &str, conn: &mut C) -> Result<Batch<R>, Error>
    where
        C: Connection,
        C::Backend: RunsBatchUpdates<
            'q,
            BatchUpdateParts<
                T,
                F,
                O,
                (Changes, TakenBy<T>),
                (Selection, FenceRead<T>),
                HeldByToken<T>,
            >,
            C,
            (R, Option<i64>),
        >,
    {
        let limit = batch_limit(self.size)?;
        let claim = Claim::new(owner)?;
        let parts = BatchUpdateParts {
            table: self.table,
            filter: self.filter,
            order: self.order,
            limit,
            // The caller's changes first, reading the row as it was (see `ClaimRow::by`).
            set: (self.changes, taken_by::<T>(&claim)),
            selection: (self.selection, <T::Fence as Fence<T>>::read()),
            changed: held_by_token::<T>(&claim),
        };
        let winners = C::Backend::run_batch(parts, conn);
        let (rows, fences): (Vec<R>, Vec<Option<i64>>) =
            lost_conflict_claims_nothing(winners, conn)?
                .into_iter()
                .unzip();
        if !rows.is_empty() {
            crate::events::acquired::<T>(&claim, rows.len());
        }
        Ok(Batch {
            rows,
            fences,
            claim,
        })
    }
}

/// The rows a batch claim won, and the claim that holds them all.
///
/// Finish or release them together with [`ClaimLease::release_rows`]: one guarded statement.
///
/// ```
/// # include!("doctest_setup.rs");
/// # use diesel_lease::prelude::*;
/// # fn main() -> Result<(), diesel_lease::Error> {
/// # let conn = &mut jobs_connection()?;
/// let batch: Batch<Job> = jobs::table.claim_batch(10, Lease::from_secs(30)?).by("worker-1", conn)?;
/// assert_eq!(batch.claim().owner(), "worker-1");
/// assert!(batch.rows().iter().all(|job| job.claim_token.as_deref() == Some(batch.claim().token())));
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, PartialEq)]
#[must_use = "the rows of a batch are held until their lease runs out or they are released"]
pub struct Batch<R> {
    rows: Vec<R>,
    fences: Vec<Option<i64>>,
    claim: Claim,
}

impl<R> Batch<R> {
    /// The rows won, as the claim left them.
    ///
    /// ```
    /// # include!("doctest_setup.rs");
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let batch: Batch<Job> = jobs::table.claim_batch(10, Lease::from_secs(30)?).by("w", conn)?;
    /// assert_eq!(batch.rows().len(), 1);
    /// # Ok(())
    /// # }
    /// ```
    pub fn rows(&self) -> &[R] {
        &self.rows
    }

    /// Each row's fence after this take, in the order of [`rows`](Self::rows), if the table has
    /// a [`Fence`].
    ///
    /// ```
    /// # include!("doctest_setup.rs");
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let batch: Batch<Job> = jobs::table.claim_batch(10, Lease::from_secs(30)?).by("w", conn)?;
    /// assert_eq!(batch.fences(), [None], "the doctests' jobs table has no fence");
    /// # Ok(())
    /// # }
    /// ```
    pub fn fences(&self) -> &[Option<i64>] {
        &self.fences
    }

    /// The claim that holds every row of the batch.
    ///
    /// ```
    /// # include!("doctest_setup.rs");
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let batch: Batch<Job> = jobs::table.claim_batch(10, Lease::from_secs(30)?).by("w", conn)?;
    /// assert_eq!(batch.claim().token().len(), 36);
    /// # Ok(())
    /// # }
    /// ```
    pub fn claim(&self) -> &Claim {
        &self.claim
    }

    /// How many rows were won.
    ///
    /// ```
    /// # include!("doctest_setup.rs");
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let batch: Batch<Job> = jobs::table.claim_batch(10, Lease::from_secs(30)?).by("w", conn)?;
    /// assert_eq!(batch.len(), 1);
    /// # Ok(())
    /// # }
    /// ```
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Whether no row was won.
    ///
    /// ```
    /// # include!("doctest_setup.rs");
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let batch: Batch<Job> = jobs::table.claim_batch(10, Lease::from_secs(30)?).by("w", conn)?;
    /// assert!(!batch.is_empty());
    /// # Ok(())
    /// # }
    /// ```
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The rows and the claim.
    ///
    /// ```
    /// # include!("doctest_setup.rs");
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let (jobs, claim) = jobs::table.claim_batch(10, Lease::from_secs(30)?).by::<_, Job>("w", conn)?.into_parts();
    /// assert_eq!(jobs[0].claim_token.as_deref(), Some(claim.token()));
    /// # Ok(())
    /// # }
    /// ```
    pub fn into_parts(self) -> (Vec<R>, Claim) {
        (self.rows, self.claim)
    }
}
