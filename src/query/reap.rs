//! Reaping: moving rows whose lease ran out, with their holders gone, to a state of the
//! caller's choosing, in batches that concurrent reapers never both reap.
use diesel::connection::Connection;
use diesel::expression::{AppearsOnTable, Expression};
use diesel::query_builder::AsChangeset;
use diesel::sql_types::BoolOrNullableBool;
use diesel::Table;

use crate::backend::NativeLeaseQuery;
use crate::backend::{lost_conflict_changes_nothing, BatchPlan, ClaimsBatch, LeaseBackend};
use crate::conflicts::Operation;
use crate::events::table_name;
use crate::query::LeaseStatement;
use crate::sql::{batch_limit, Both, NoChanges, NoOrder, Ordered};
use crate::{ClaimLease, Error, Lease, Outlived, Released, Unclaimed};

/// The plan of a reap: the rows outlived, released with the caller's changes, given back by key.
type ReapPlan<T, F, O, Changes> =
    BatchPlan<T, F, O, (Changes, Released<T>), <T as Table>::PrimaryKey, Unclaimed<T>>;

/// A reap of up to `size` rows of `T` whose lease ran out: built by
/// [`LeaseDsl::reap`](crate::LeaseDsl::reap), run by `.run(conn)` for the keys of the rows
/// reaped.
///
/// Each row reaped is released (owner, token and `claimed_at` set to `NULL`) and gets the
/// caller's [`set`](Self::set): back to `queued`, or to an `interrupted` state for work that
/// must never silently run again. One statement per batch, in the shapes of a batch claim
/// ([`ClaimBatch`](crate::ClaimBatch)), so that concurrent reapers never reap the same row, and
/// the outlived condition is checked against each row as it is changed: a row renewed or taken
/// over meanwhile is not reaped. A holder still at work is fenced off: its token no longer
/// matches, so none of its guarded writes lands. A size of zero or above
/// [`MAX_BATCH_SIZE`](crate::MAX_BATCH_SIZE) is [`Error::InvalidBatchSize`] before anything is
/// sent; a reap that loses a write conflict outside a transaction of the caller's reaps nothing.
///
/// ```
/// # include!("../doctest_setup.rs");
/// use diesel::prelude::*;
/// use diesel_lease::prelude::*;
///
/// # fn main() -> Result<(), diesel_lease::Error> {
/// # let conn = &mut jobs_connection()?;
/// let lease = Lease::from_secs(30)?;
/// let _held = jobs::table.claim_batch(1, lease).by(&Claim::new("worker-1")?).returning(jobs::id).run::<i64>(conn)?;
/// // worker-1 dies; later (here: its row aged by two minutes) a reaper runs.
/// # diesel::update(jobs::table).set(jobs::table.renewed_ago(Age::new(std::time::Duration::from_secs(120))?)).execute(conn)?;
/// let reaped = jobs::table
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
    /// # include!("../doctest_setup.rs");
    /// # use diesel::prelude::*;
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let reaped = jobs::table.reap(100, Lease::from_secs(30)?).filter(jobs::status.eq("running")).run(conn)?;
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
    /// # include!("../doctest_setup.rs");
    /// # use diesel::prelude::*;
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let reaped = jobs::table.reap(10, Lease::from_secs(30)?).order_by(jobs::claimed_at).run(conn)?;
    /// assert!(reaped.is_empty());
    /// # Ok(())
    /// # }
    /// ```
    pub fn order_by<Order>(self, order: Order) -> Reap<T, F, Ordered<Order>, Changes>
    where
        Order: AppearsOnTable<T>,
    {
        Reap {
            table: self.table,
            size: self.size,
            filter: self.filter,
            order: Ordered::new(order),
            changes: self.changes,
        }
    }

    /// What a reaped row becomes, beside being released. The changes read each row as it was
    /// before the reap, on every backend.
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use diesel::prelude::*;
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let reaped = jobs::table.reap(10, Lease::from_secs(30)?).set(jobs::status.eq("queued")).run(conn)?;
    /// assert!(reaped.is_empty());
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
}

impl<T: ClaimLease, F, O, Changes> LeaseStatement<T::Key> for Reap<T, F, O, Changes> {
    type Output = Vec<T::Key>;
}

impl<'q, T, F, O, Changes, C> NativeLeaseQuery<'q, C, T::Key> for Reap<T, F, O, Changes>
where
    T: ClaimLease,
    Changes: AsChangeset<Target = T>,
    C: Connection,
    C::Backend: LeaseBackend + ClaimsBatch<'q, C, ReapPlan<T, F, O, Changes>, T::Key>,
{
    fn run_native(self, conn: &mut C) -> Result<Vec<T::Key>, Error> {
        let table = self.table;
        let plan: ReapPlan<T, F, O, Changes> = BatchPlan {
            table,
            filter: self.filter,
            order: self.order,
            limit: batch_limit(self.size)?,
            // The caller's changes first, reading the row as it was (see `ClaimRow::set`).
            set: (self.changes, table.released()),
            selection: table.primary_key(),
            // Every candidate was held when it was locked; the reap alone clears the token.
            changed: table.unclaimed(),
        };
        let reaped = C::Backend::claim_batch(plan, conn);
        let reaped = lost_conflict_changes_nothing(
            reaped,
            conn,
            (Operation::Reap, table_name::<T>(), None),
        )?;
        if !reaped.is_empty() {
            crate::events::emit_reaped::<T>(reaped.len());
        }
        Ok(reaped)
    }
}

impl<T: ClaimLease, F, O, Changes, C> crate::RunLeaseDsl<C> for Reap<T, F, O, Changes> {}
