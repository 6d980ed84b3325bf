//! Reaping: moving rows whose lease ran out, with their holders gone, to a state of the
//! caller's choosing, in batches that concurrent reapers never both reap.
use diesel::connection::Connection;
use diesel::expression::{AppearsOnTable, Expression};
use diesel::query_builder::AsChangeset;
use diesel::sql_types::BoolOrNullableBool;

use crate::batch_update::{batch_limit, BatchUpdateParts, NoOrder, OrderBy, RunsBatchUpdates};
use crate::strategy::{lost_conflict_claims_nothing, Both, NoChanges};
use crate::{ClaimLease, Error, Lease, Outlived, Released, Unclaimed};

/// A reap of up to `size` rows of `T` whose lease ran out: built by [`ClaimLease::reap`], run by
/// [`run`](Self::run).
///
/// Each row reaped is released (owner, token and `claimed_at` set to `NULL`) and gets the
/// caller's [`set`](Self::set): back to `queued`, or to an `interrupted` state for work that
/// must never silently run again. One statement per batch, with the same shapes as a batch claim
/// ([`ClaimBatch`](crate::ClaimBatch)), so that concurrent reapers never reap the same row, and
/// the outlived condition is checked against each row as it is changed: a row renewed or taken
/// over meanwhile is not reaped. A holder still at work is fenced off: its token no longer
/// matches, so none of its guarded writes lands.
///
/// ```
/// # include!("doctest_setup.rs");
/// use diesel::prelude::*;
/// use diesel_lease::prelude::*;
///
/// # fn main() -> Result<(), diesel_lease::Error> {
/// # let conn = &mut jobs_connection()?;
/// let lease = Lease::from_secs(30)?;
/// let _held: Batch<i64> = jobs::table.claim_batch(1, lease).returning(jobs::id).by("worker-1", conn)?;
/// // worker-1 dies; later (here: its row aged by two minutes) a reaper runs.
/// # diesel::update(jobs::table).set(jobs::table.renewed_ago(Age::new(std::time::Duration::from_secs(120))?)).execute(conn)?;
/// let reaped: Vec<i64> = jobs::table
///     .reap(100, lease)
///     .set(jobs::status.eq("interrupted"))
///     .run(conn)?;
/// assert_eq!(reaped, [1]);
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, Copy)]
#[must_use = "a reap does nothing until it is run"]
pub struct Reap<T, F, O, Changes> {
    table: T,
    size: usize,
    filter: F,
    order: O,
    changes: Changes,
}

impl<T: ClaimLease> Reap<T, Outlived<T>, NoOrder, NoChanges<T>> {
    pub(crate) fn new(table: T, size: usize, lease: Lease) -> Self {
        Self {
            table,
            size,
            filter: table.outlived(lease),
            order: NoOrder,
            changes: NoChanges::default(),
        }
    }
}

impl<T: ClaimLease, F, O, Changes> Reap<T, F, O, Changes> {
    /// Reaps only outlived rows that also match `predicate` (a status, say).
    ///
    /// ```
    /// # include!("doctest_setup.rs");
    /// # use diesel::prelude::*;
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let reaped: Vec<i64> = jobs::table.reap(100, Lease::from_secs(30)?).filter(jobs::status.eq("running")).run(conn)?;
    /// assert!(reaped.is_empty(), "nothing is running");
    /// # Ok(())
    /// # }
    /// ```
    pub fn filter<P>(self, predicate: P) -> Reap<T, Both<F, P>, O, Changes>
    where
        P: Expression + AppearsOnTable<T>,
        P::SqlType: BoolOrNullableBool,
    {
        Reap {
            table: self.table,
            size: self.size,
            filter: Both::new(self.filter, predicate),
            order: self.order,
            changes: self.changes,
        }
    }

    /// Which outlived rows are reaped first.
    ///
    /// ```
    /// # include!("doctest_setup.rs");
    /// # use diesel::prelude::*;
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let reaped: Vec<i64> = jobs::table.reap(10, Lease::from_secs(30)?).order_by(jobs::claimed_at).run(conn)?;
    /// # let _ = reaped;
    /// # Ok(())
    /// # }
    /// ```
    pub fn order_by<Order>(self, order: Order) -> Reap<T, F, OrderBy<Order>, Changes>
    where
        Order: AppearsOnTable<T>,
    {
        Reap {
            table: self.table,
            size: self.size,
            filter: self.filter,
            order: OrderBy(order),
            changes: self.changes,
        }
    }

    /// What a reaped row becomes, beside being released.
    /// They read each row as it was before the reap, on every backend.
    ///
    /// ```
    /// # include!("doctest_setup.rs");
    /// # use diesel::prelude::*;
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let reaped: Vec<i64> = jobs::table.reap(10, Lease::from_secs(30)?).set(jobs::status.eq("queued")).run(conn)?;
    /// # let _ = reaped;
    /// # Ok(())
    /// # }
    /// ```
    pub fn set<C: AsChangeset<Target = T>>(self, changes: C) -> Reap<T, F, O, C> {
        Reap {
            table: self.table,
            size: self.size,
            filter: self.filter,
            order: self.order,
            changes,
        }
    }

    /// Runs the reap: the keys of the rows it reaped, possibly none.
    ///
    /// A size of zero or above [`ClaimBatch::MAX_BATCH`](crate::ClaimBatch::MAX_BATCH) is
    /// [`Error::InvalidBatchSize`] before anything is sent. A reap that loses a write conflict
    /// outside a transaction of the caller's reaps nothing.
    ///
    /// ```
    /// # include!("doctest_setup.rs");
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let reaped: Vec<i64> = jobs::table.reap(10, Lease::from_secs(30)?).run(conn)?;
    /// assert!(reaped.is_empty(), "job 1 is not even claimed");
    /// # Ok(())
    /// # }
    /// ```
    pub fn run<'q, C, K>(self, conn: &mut C) -> Result<Vec<K>, Error>
    where
        C: Connection,
        C::Backend: RunsBatchUpdates<
            'q,
            BatchUpdateParts<T, F, O, (Changes, Released<T>), T::PrimaryKey, Unclaimed<T>>,
            C,
            K,
        >,
    {
        let parts = BatchUpdateParts {
            table: self.table,
            filter: self.filter,
            order: self.order,
            limit: batch_limit(self.size)?,
            // The caller's changes first, reading the row as it was (see `ClaimRow::by`).
            set: (self.changes, self.table.released()),
            selection: self.table.primary_key(),
            // Every candidate was held when it was locked; the reap alone clears the token.
            changed: self.table.unclaimed(),
        };
        let reaped = C::Backend::run_batch(parts, conn);
        let reaped = lost_conflict_claims_nothing(reaped, conn)?;
        if !reaped.is_empty() {
            crate::events::reaped::<T>(reaped.len());
        }
        Ok(reaped)
    }
}
