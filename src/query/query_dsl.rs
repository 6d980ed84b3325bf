//! The statements a table with lease columns starts: claims, reaps, holders' writes, reads.
use diesel::Table;

use crate::outcome::{holder, Holder};
use crate::query::{
    AllHeld, ClaimBatch, ClaimRow, Health, HeldPerOwner, HeldRows, Holders, NoClaimant, OwnedRows,
    Reap, StaleOnly,
};
use crate::sql::{NoChanges, NoOrder};
use crate::{Claim, ClaimLease, Claimable, Fenced, IntoKey, Lease, Node, Outlived};

/// The statements diesel-lease builds, started from a table: `jobs::table.claim_row(..)`. Every
/// `table!` has them; they need its lease columns ([`claim_lease!`](crate::claim_lease)), and
/// each finishes with `.run(conn)` ([`RunLeaseDsl`](crate::RunLeaseDsl)).
///
/// ```
/// # include!("../doctest_setup.rs");
/// use diesel::prelude::*;
/// use diesel_lease::prelude::*;
///
/// # fn main() -> Result<(), diesel_lease::Error> {
/// # let conn = &mut jobs_connection()?;
/// let lease = Lease::from_secs(30)?;
/// let worker = Claim::new("worker-1")?;
/// let batch = jobs::table.claim_batch(10, lease).by(&worker).set(jobs::status.eq("running")).run::<Job>(conn)?;
/// assert_eq!(jobs::table.holders(lease).run(conn)?.len(), batch.len());
/// assert_eq!(batch.release().set(jobs::status.eq("done")).run(conn)?, [1]);
/// # Ok(())
/// # }
/// ```
pub trait LeaseDsl: Table + Sized {
    /// A claim of the row whose primary key is `key` (any key the table has, composite too),
    /// while it is [claimable](ClaimLease::claimable) under `lease`: say whose with `.by(&claim)`,
    /// add the table's own conditions with `.filter(..)` and changes with `.set(..)`, then run it.
    /// See [`ClaimRow`].
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
    /// assert!(outcome.is_won());
    /// # Ok(())
    /// # }
    /// ```
    fn claim_row(
        self,
        key: impl IntoKey<<Self as ClaimLease>::KeySqlType>,
        lease: Lease,
    ) -> ClaimRow<Self, Claimable<Self>, NoChanges<Self>, Self::AllColumns, NoClaimant>
    where
        Self: ClaimLease,
    {
        ClaimRow::new(self, key.into_key(), lease)
    }

    /// A claim of up to `size` rows that are [claimable](ClaimLease::claimable) under `lease`:
    /// the next due work. Say whose with `.by(&claim)`, add `.filter(..)`, `.order_by(..)` and
    /// `.set(..)`, then run it. See [`ClaimBatch`].
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use diesel::prelude::*;
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let batch = jobs::table
    ///     .claim_batch(100, Lease::from_secs(30)?)
    ///     .by(&Claim::new("worker-1")?)
    ///     .filter(jobs::status.eq("queued"))
    ///     .order_by(jobs::id)
    ///     .set(jobs::status.eq("running"))
    ///     .run::<Job>(conn)?;
    /// assert_eq!(batch.len(), 1);
    /// # Ok(())
    /// # }
    /// ```
    fn claim_batch(
        self,
        size: usize,
        lease: Lease,
    ) -> ClaimBatch<Self, Claimable<Self>, NoOrder, NoChanges<Self>, Self::AllColumns, NoClaimant>
    where
        Self: ClaimLease,
    {
        ClaimBatch::new(self, size, lease)
    }

    /// A reap of up to `size` rows whose lease ran out ([outlived](ClaimLease::outlived) under
    /// `lease`): each is released and gets the caller's `.set(..)`, in one statement per batch
    /// that concurrent reapers never both reap. See [`Reap`].
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use diesel::prelude::*;
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let requeued = jobs::table.reap(100, Lease::from_secs(30)?).set(jobs::status.eq("queued")).run(conn)?;
    /// assert!(requeued.is_empty());
    /// # Ok(())
    /// # }
    /// ```
    fn reap(self, size: usize, lease: Lease) -> Reap<Self, Outlived<Self>, NoOrder, NoChanges<Self>>
    where
        Self: ClaimLease,
    {
        Reap::new(self, size, lease)
    }

    /// The rows with `keys` as `claim` holds them, for a holder that knows its claim and keys
    /// but has no [`Won`](crate::Won) or [`Batch`](crate::Batch) at hand: renew, write to or
    /// release them. See [`HeldRows`].
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use diesel::prelude::*;
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let worker = Claim::new("worker-1")?;
    /// let _batch = jobs::table.claim_batch(10, Lease::from_secs(30)?).by(&worker).returning(jobs::id).run::<i64>(conn)?;
    /// let done = jobs::table.held_rows(&worker, vec![1]).release().set(jobs::status.eq("done")).run(conn)?;
    /// assert_eq!(done, [1]);
    /// # Ok(())
    /// # }
    /// ```
    fn held_rows(
        self,
        claim: &Claim,
        keys: impl IntoIterator<Item = impl IntoKey<<Self as ClaimLease>::KeySqlType>>,
    ) -> HeldRows<Self>
    where
        Self: ClaimLease,
    {
        let keys = keys.into_iter().map(IntoKey::into_key).collect();
        HeldRows::new(self, claim.clone(), keys)
    }

    /// Every row `owner` holds, whatever its claims: what a node releases at shutdown, or an
    /// operator when a worker is known gone. Its one write is `.release()`. See [`OwnedRows`].
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use diesel::prelude::*;
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// jobs::table.claim_row(1, Lease::from_secs(30)?).by(&Claim::new("worker-1")?).run::<Job>(conn)?;
    /// assert_eq!(jobs::table.held_by_owner("worker-1").release().run(conn)?, [1]);
    /// # Ok(())
    /// # }
    /// ```
    fn held_by_owner(self, owner: &str) -> OwnedRows<Self, String>
    where
        Self: ClaimLease,
    {
        OwnedRows::new(self, owner.to_owned())
    }

    /// Every row that an earlier life of `node` holds: after a crash and a restart under the same
    /// name, the rows the node held before, which its new life frees at start-up rather than
    /// leaving them held until their lease runs out. Its one write is `.release()`. See
    /// [`OwnedRows`] and [`Node`].
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use diesel::prelude::*;
    /// # use diesel_lease::prelude::*;
    /// use diesel_lease::Node;
    ///
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let lease = Lease::from_secs(30)?;
    /// let before_the_crash = Node::start("worker-3")?;
    /// jobs::table.claim_row(1, lease).by(&before_the_crash.claim()).set(jobs::status.eq("running")).run::<Job>(conn)?;
    ///
    /// // The process is killed and starts again, under the same name.
    /// let node = Node::start("worker-3")?;
    /// let freed = jobs::table.held_by_earlier_lives_of(&node).release().set(jobs::status.eq("queued")).run(conn)?;
    /// assert_eq!(freed, [1], "at once, not a lease later");
    /// assert!(jobs::table.claim_row(1, lease).by(&node.claim()).run::<Job>(conn)?.is_won());
    /// # Ok(())
    /// # }
    /// ```
    fn held_by_earlier_lives_of(self, node: &Node) -> OwnedRows<Self, Node>
    where
        Self: ClaimLease,
    {
        OwnedRows::new(self, node.clone())
    }

    /// Every held row, with its holder and how long its lease has left under `lease`, by the
    /// database's clock, oldest first. See [`Holders`].
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// assert!(jobs::table.holders(Lease::from_secs(30)?).run(conn)?.is_empty());
    /// # Ok(())
    /// # }
    /// ```
    fn holders(self, lease: Lease) -> Holders<Self, AllHeld>
    where
        Self: ClaimLease,
    {
        Holders::new(self, lease)
    }

    /// The held rows whose lease ran out under `lease`: their holders are gone or late.
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// assert!(jobs::table.stale(Lease::from_secs(30)?).run(conn)?.is_empty());
    /// # Ok(())
    /// # }
    /// ```
    fn stale(self, lease: Lease) -> Holders<Self, StaleOnly>
    where
        Self: ClaimLease,
    {
        Holders::new(self, lease)
    }

    /// How many rows each owner holds.
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// assert!(jobs::table.held_per_owner().run(conn)?.is_empty());
    /// # Ok(())
    /// # }
    /// ```
    fn held_per_owner(self) -> HeldPerOwner<Self>
    where
        Self: ClaimLease,
    {
        HeldPerOwner::new(self)
    }

    /// The table's health: the readings its backend has of what bloats a lease table (HOT
    /// updates, dead row versions, vacuums and the transaction holding cleanup back on
    /// PostgreSQL; the history list and the oldest transaction on MySQL/MariaDB; the write-ahead
    /// log and free pages on SQLite), by the database's clock, each judged by its threshold.
    /// Set the thresholds with `.thresholds(..)`. See [`Health`].
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let health = jobs::table.health().run(conn)?;
    /// for warning in health.warnings() {
    ///     eprintln!("{} needs care: {warning}", health.table());
    /// }
    /// # Ok(())
    /// # }
    /// ```
    fn health(self) -> Health<Self> {
        Health::new(self)
    }

    /// Who holds a row and whether its lease is fresh under `lease`, by the database's clock, as
    /// a selection for Diesel's own queries: it loads as a [`Refusal`](crate::Refusal) (`Held`
    /// with the holder, `Free`, or `Outlived` with the last holder and since when).
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// use diesel::prelude::*;
    /// use diesel_lease::prelude::*;
    ///
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let lease = Lease::from_secs(30)?;
    /// let _won = jobs::table.claim_row(1, lease).by(&Claim::new("worker-1")?).run::<Job>(conn)?;
    /// let (status, holder): (String, Refusal) =
    ///     jobs::table.find(1).select((jobs::status, jobs::table.holder(lease))).first(conn)?;
    /// assert!(matches!(holder, Refusal::Held(holder) if holder.owner == "worker-1"));
    /// # let _ = status;
    /// # Ok(())
    /// # }
    /// ```
    fn holder(self, lease: Lease) -> Holder<Self>
    where
        Self: ClaimLease,
    {
        holder(self, lease)
    }

    /// The row's fence is `fence`: with [`held_by`](ClaimLease::held_by), the guard of a holder
    /// that wants the row unchanged since its own take, not only still its own.
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// use diesel::prelude::*;
    /// use diesel_lease::prelude::*;
    ///
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let worker = Claim::new("w")?;
    /// let won = fenced_jobs::table.claim_row(1, Lease::from_secs(30)?).by(&worker).returning(fenced_jobs::id).run::<i64>(conn)?.won().expect("free");
    /// let unchanged = fenced_jobs::table.find(1).filter(fenced_jobs::table.held_by(worker.token()).and(fenced_jobs::table.fence_is(won.fence())));
    /// assert_eq!(diesel::update(unchanged).set(fenced_jobs::table.renewed()).execute(conn)?, 1);
    /// # Ok(())
    /// # }
    /// ```
    fn fence_is(self, fence: i64) -> diesel::dsl::Eq<<Self as ClaimLease>::Fence, i64>
    where
        Self: Fenced,
        <Self as ClaimLease>::Fence: diesel::ExpressionMethods
            + diesel::Expression<SqlType = diesel::sql_types::BigInt>
            + Default,
    {
        use diesel::ExpressionMethods;
        <Self as ClaimLease>::Fence::default().eq(fence)
    }
}

impl<T: Table> LeaseDsl for T {}
