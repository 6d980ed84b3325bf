//! Claiming the next rows that are due: up to N claimable rows, in the caller's order, in one
//! statement (or one short transaction) that concurrent claimers cannot both win.
use diesel::connection::Connection;
use diesel::expression::{AppearsOnTable, Expression, SelectableExpression};
use diesel::query_builder::AsChangeset;
use diesel::sql_types::BoolOrNullableBool;
use diesel::Table;

use crate::backend::NativeLeaseQuery;
use crate::backend::{lost_conflict_changes_nothing, BatchPlan, ClaimsBatch, LeaseBackend};
use crate::conflicts::Operation;
use crate::events::table_name;
use crate::outcome::Batch;
use crate::query::{ClaimCursor, Claimant, FromCursor, LeaseStatement, NoClaimant, StartsBatch};
use crate::sql::{batch_limit, Both, CallerOrder, NoChanges, NoOrder, Ordered};
use crate::table::{taken_by, token_is};
use crate::{Claim, ClaimLease, Claimable, Error, Fence, FenceRead, Lease, TakenBy, TokenIs};

/// The plan of a batch claim: the caller's filter, order and changes, the claim's own, and the
/// selection, key and fence of each row won.
type BatchClaimPlan<T, F, O, Changes, Selection> = BatchPlan<
    T,
    F,
    O,
    (Changes, TakenBy<T>),
    (Selection, <T as Table>::PrimaryKey, FenceRead<T>),
    TokenIs<T>,
>;

/// A claim of the next rows of `T` that are due: built by
/// [`LeaseDsl::claim_batch`](crate::LeaseDsl::claim_batch), said whose by [`by`](Self::by), run
/// by `.run(conn)`.
///
/// Up to `size` rows that are [claimable](ClaimLease::claimable) under the lease and match every
/// [`filter`](Self::filter): the first ones in the [`order_by`](Self::order_by) order, with the
/// caller's [`set`](Self::set) in the same statement. The rows won come back in no particular
/// order. Concurrent batches never win the same row, and never wait for each other's rows where
/// the backend can skip them:
///
/// * PostgreSQL: the candidates are picked with `FOR UPDATE SKIP LOCKED` in a `MATERIALIZED`
///   CTE (so the plan cannot run the pick twice and claim more than `size` rows; `FOR UPDATE`
///   re-checks the filter on each row's newest version), and the `UPDATE` names them;
/// * MySQL/MariaDB: a short READ COMMITTED transaction that locks its candidates with
///   `SKIP LOCKED`, changes them by key and reads them back by the claim's token;
/// * SQLite: `UPDATE .. WHERE key IN (SELECT key .. LIMIT n) .. RETURNING`; SQLite runs one
///   writer at a time.
///
/// Claims in the order of the primary key from where the last one ended, rather than from the
/// head of an order of yours, are [`from_cursor`](Self::from_cursor)'s.
///
/// A size of zero or above [`MAX_BATCH_SIZE`](crate::MAX_BATCH_SIZE) is
/// [`Error::InvalidBatchSize`], before anything is sent. A batch that loses a write conflict
/// outside a transaction of the caller's (a deadlock, a Galera certification failure) claims
/// nothing and is empty.
///
/// ```
/// # include!("../doctest_setup.rs");
/// use diesel::prelude::*;
/// use diesel_lease::prelude::*;
///
/// # fn main() -> Result<(), diesel_lease::Error> {
/// # let conn = &mut jobs_connection()?;
/// # diesel::sql_query("INSERT INTO jobs (id, status) VALUES (2, 'queued'), (3, 'queued')").execute(conn)?;
/// let batch = jobs::table
///     .claim_batch(2, Lease::from_secs(30)?)
///     .by(&Claim::new("worker-1")?)
///     .filter(jobs::status.eq("queued"))
///     .order_by(jobs::id)
///     .set(jobs::status.eq("running"))
///     .returning(Job::as_select())
///     .run(conn)?;
/// let mut ids = batch.keys().to_vec();
/// ids.sort();
/// assert_eq!(ids, [1, 2]);
/// assert!(batch.rows().iter().all(|job| job.status == "running"));
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
#[must_use = "a claim does nothing until it is run"]
pub struct ClaimBatch<T, F, O, Changes, Selection, By> {
    table: T,
    size: usize,
    filter: F,
    order: O,
    changes: Changes,
    selection: Selection,
    by: By,
}

impl<T: ClaimLease> ClaimBatch<T, Claimable<T>, NoOrder, NoChanges<T>, T::AllColumns, NoClaimant> {
    pub(crate) fn new(table: T, size: usize, lease: Lease) -> Self {
        Self {
            table,
            size,
            filter: table.claimable(lease),
            order: NoOrder,
            changes: NoChanges::default(),
            selection: T::all_columns(),
            by: NoClaimant,
        }
    }
}

impl<T: ClaimLease, F, O, Changes, Selection, By> ClaimBatch<T, F, O, Changes, Selection, By> {
    /// Who claims the rows: `claim`'s owner and token. The token is what guards a holder's
    /// writes, so give each unit of work a claim of its own (`Claim::new` per batch): batches
    /// under one claim are one holder, and a row one of them lost and another won back under
    /// the same token is still that holder's, to each of them.
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let worker = Claim::new("worker-1")?;
    /// let batch = jobs::table.claim_batch(10, Lease::from_secs(30)?).by(&worker).run::<Job>(conn)?;
    /// assert_eq!(batch.claim(), &worker);
    /// # Ok(())
    /// # }
    /// ```
    pub fn by(self, claim: &Claim) -> ClaimBatch<T, F, O, Changes, Selection, Claim> {
        ClaimBatch {
            table: self.table,
            size: self.size,
            filter: self.filter,
            order: self.order,
            changes: self.changes,
            selection: self.selection,
            by: claim.clone(),
        }
    }

    /// Claims only rows that also match `predicate`: the table's own rule of what is due.
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use diesel::prelude::*;
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let batch = jobs::table
    ///     .claim_batch(10, Lease::from_secs(30)?)
    ///     .by(&Claim::new("worker-1")?)
    ///     .filter(jobs::status.eq("done"))
    ///     .run::<Job>(conn)?;
    /// assert!(batch.is_empty(), "no job is done");
    /// # Ok(())
    /// # }
    /// ```
    pub fn filter<P>(self, predicate: P) -> ClaimBatch<T, Both<F, P>, O, Changes, Selection, By>
    where
        P: Expression + AppearsOnTable<T>,
        P::SqlType: BoolOrNullableBool,
    {
        ClaimBatch {
            table: self.table,
            size: self.size,
            filter: Both::new(self.filter, predicate),
            order: self.order,
            changes: self.changes,
            selection: self.selection,
            by: self.by,
        }
    }

    /// Which rows come first: a column, `column.desc()`, or a tuple of them.
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use diesel::prelude::*;
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// # diesel::sql_query("INSERT INTO jobs (id, status) VALUES (2, 'queued')").execute(conn)?;
    /// let batch = jobs::table
    ///     .claim_batch(1, Lease::from_secs(30)?)
    ///     .by(&Claim::new("worker-1")?)
    ///     .order_by(jobs::id.desc())
    ///     .run::<Job>(conn)?;
    /// assert_eq!(batch.keys(), [2]);
    /// # Ok(())
    /// # }
    /// ```
    pub fn order_by<Order>(
        self,
        order: Order,
    ) -> ClaimBatch<T, F, Ordered<Order>, Changes, Selection, By>
    where
        Order: AppearsOnTable<T>,
        O: CallerOrder,
    {
        ClaimBatch {
            table: self.table,
            size: self.size,
            filter: self.filter,
            order: Ordered::new(order),
            changes: self.changes,
            selection: self.selection,
            by: self.by,
        }
    }

    /// The caller's own changes, set on every claimed row by the same statement. They read each
    /// row as it was before the claim, on every backend.
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use diesel::prelude::*;
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let batch = jobs::table
    ///     .claim_batch(10, Lease::from_secs(30)?)
    ///     .by(&Claim::new("worker-1")?)
    ///     .set(jobs::status.eq("running"))
    ///     .run::<Job>(conn)?;
    /// assert!(batch.rows().iter().all(|job| job.status == "running"));
    /// # Ok(())
    /// # }
    /// ```
    pub fn set<C: AsChangeset<Target = T>>(
        self,
        changes: C,
    ) -> ClaimBatch<T, F, O, C, Selection, By> {
        ClaimBatch {
            table: self.table,
            size: self.size,
            filter: self.filter,
            order: self.order,
            changes,
            selection: self.selection,
            by: self.by,
        }
    }

    /// Gives back `selection` of each row won rather than all its columns.
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use diesel::prelude::*;
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let batch = jobs::table
    ///     .claim_batch(10, Lease::from_secs(30)?)
    ///     .by(&Claim::new("worker-1")?)
    ///     .returning(jobs::status)
    ///     .run::<String>(conn)?;
    /// assert_eq!(batch.rows(), ["queued"]);
    /// # Ok(())
    /// # }
    /// ```
    pub fn returning<S: SelectableExpression<T>>(
        self,
        selection: S,
    ) -> ClaimBatch<T, F, O, Changes, S, By> {
        ClaimBatch {
            table: self.table,
            size: self.size,
            filter: self.filter,
            order: self.order,
            changes: self.changes,
            selection,
            by: self.by,
        }
    }
}

impl<T: ClaimLease, F, Changes, Selection, By> ClaimBatch<T, F, NoOrder, Changes, Selection, By> {
    /// Claims in the order of the primary key, starting after the last key claimed through
    /// `cursor` rather than at the queue's head; when the rows past it are fewer than the size,
    /// the same call claims the rest from the head, and the cursor wraps around. A claim from a
    /// cursor is still one conditional statement (two when it wraps), with the caller's filter
    /// and the lease's; the cursor says only where its search starts.
    ///
    /// Why: while a long transaction (a report, `pg_dump`) holds PostgreSQL's cleanup horizon
    /// back, the entries of every row version a claim or a finish leaves stay in the claim
    /// index, and a claim from the head visits all of them; from a cursor, a claim visits only
    /// those past where the last one ended. What it costs: the order is the key's, not a due
    /// time's, and a row that becomes claimable behind the cursor (released, or its lease run
    /// out) waits for the cursor to come round. The bound: every row that stays claimable and
    /// unlocked is claimed within one pass of the cursor over the queue, at most
    /// `ceil(n / size) + 1` claims through it for `n` claimable rows, with one claimer (the
    /// guide's [chapter 2](crate::guide::ch02_a_queue) says more).
    ///
    /// The cursor moves to the greatest key claimed by the key's Rust order; where that differs
    /// from the database's (text under a collation), it stands at or before the end of the last
    /// claim, never past a row it did not claim.
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use diesel::prelude::*;
    /// use diesel_lease::{prelude::*, ClaimCursor};
    ///
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// # diesel::sql_query("INSERT INTO jobs (id, status) VALUES (2, 'queued'), (3, 'queued')").execute(conn)?;
    /// let cursor = ClaimCursor::new();
    /// let claim = |conn: &mut _| {
    ///     jobs::table
    ///         .claim_batch(2, Lease::from_secs(30)?)
    ///         .by(&Claim::new("worker-1")?)
    ///         .filter(jobs::status.eq("queued"))
    ///         .from_cursor(&cursor)
    ///         .set(jobs::status.eq("running"))
    ///         .run::<Job>(conn)
    /// };
    /// let mut first = claim(conn)?.keys().to_vec();
    /// first.sort();
    /// assert_eq!(first, [1, 2]);
    /// assert_eq!(cursor.last(), Some(2));
    /// assert_eq!(claim(conn)?.keys(), [3], "the rest, and the cursor is back at the head");
    /// assert_eq!(cursor.last(), None);
    /// # Ok(())
    /// # }
    /// ```
    pub fn from_cursor(
        self,
        cursor: &ClaimCursor<T::Key>,
    ) -> ClaimBatch<T, F, FromCursor<T::Key>, Changes, Selection, By>
    where
        T::Key: Ord,
    {
        ClaimBatch {
            table: self.table,
            size: self.size,
            filter: self.filter,
            order: FromCursor::new(cursor.clone()),
            changes: self.changes,
            selection: self.selection,
            by: self.by,
        }
    }
}

impl<T: ClaimLease, F, O, Changes, Selection, By, U> LeaseStatement<U>
    for ClaimBatch<T, F, O, Changes, Selection, By>
{
    type Output = Batch<U, T>;
}

impl<'q, T, F, O, Changes, Selection, By, U, C> NativeLeaseQuery<'q, C, U>
    for ClaimBatch<T, F, O, Changes, Selection, By>
where
    T: ClaimLease,
    By: Claimant,
    Changes: AsChangeset<Target = T>,
    O: StartsBatch<T, F, (Changes, Selection)>,
    C: Connection,
    C::Backend: LeaseBackend,
    C::Backend: ClaimsBatch<
        'q,
        C,
        BatchClaimPlan<T, O::Filter, O::Order, Changes, Selection>,
        (U, T::Key, Option<i64>),
    >,
{
    fn run_native(self, conn: &mut C) -> Result<Batch<U, T>, Error> {
        let limit = batch_limit(self.size)?;
        let claim = self.by.into_claim();
        let table = self.table;
        let statement = |filter, order, (changes, selection), limit| {
            let plan: BatchClaimPlan<T, O::Filter, O::Order, Changes, Selection> = BatchPlan {
                table,
                filter,
                order,
                limit,
                // The caller's changes first, reading the row as it was (see `ClaimRow::set`).
                set: (changes, taken_by::<T>(&claim)),
                selection: (
                    selection,
                    table.primary_key(),
                    <T::Fence as Fence<T>>::read(),
                ),
                changed: token_is::<T>(&claim),
            };
            let won = C::Backend::claim_batch(plan, conn);
            lost_conflict_changes_nothing(
                won,
                conn,
                (Operation::BatchClaim, table_name::<T>(), Some(&claim)),
            )
            .map_err(Error::from)
        };
        let won = self.order.claim(
            table,
            self.filter,
            (self.changes, self.selection),
            limit,
            statement,
        )?;
        if !won.is_empty() {
            crate::events::emit_acquired::<T>(&claim, won.len());
        }
        Ok(Batch::new(table, claim, won))
    }
}

impl<T: ClaimLease, F, O, Changes, Selection, By, C> crate::RunLeaseDsl<C>
    for ClaimBatch<T, F, O, Changes, Selection, By>
{
}
