//! A claim a keeper keeps: the handle the work asks whether its lease still holds, and releases
//! or finishes its rows through.
use std::fmt;
use std::sync::Arc;

use diesel::connection::Connection;
use diesel::query_builder::AsChangeset;

use super::bounded::finished_within;
use super::claims::{release_claim, ReleasesUnattended};
use super::state::ClaimState;
use super::LeaseLost;
use crate::backend::LeaseBackend;
use crate::backend::NativeLeaseQuery;
use crate::monotonic;
use crate::query::{DatedRenewal, LeaseStatement};
use crate::sql::NoChanges;
use crate::Holds;
use crate::{
    Claim, ClaimLease, DatabaseTime, Error, Guarded, HeldRows, LeaseQuery, Release, RunLeaseDsl,
};

/// A claim a [`Keeper`](crate::Keeper) keeps: ask it whether the lease is still held before each
/// step of the work, and release or finish its rows when done. Dropping it releases too, on a
/// thread of its own, waiting no longer than [`KeeperSettings::drop_within`](crate::KeeperSettings::drop_within)
/// (1 s by default); a release that takes longer goes on alone, and the rows it never frees free by
/// their lease. A release that must be waited for is [`release`](Self::release), on the caller's
/// connection.
///
/// ```
/// # include!("../doctest_setup.rs");
/// # use diesel::prelude::*;
/// # use diesel_lease::prelude::*;
/// # use diesel_lease::{Keeper, KeeperSettings};
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let pool = jobs_pool()?;
/// let lease = Lease::from_secs(30)?;
/// let keeper = Keeper::start(pool.clone(), KeeperSettings::new(lease))?;
/// let batch = jobs::table.claim_batch(10, lease).by(&Claim::new("w")?).run::<Job>(&mut pool.get()?)?;
/// let kept = keeper.keep(batch.held())?;
/// while kept.is_held() {
///     // one step of the work
///     break;
/// }
/// let done = kept.release().set(jobs::status.eq("done")).run(&mut pool.get()?)?;
/// assert_eq!(done, [1]);
/// # Ok(())
/// # }
/// ```
pub struct Kept<T: ClaimLease> {
    table: T,
    state: Arc<ClaimState<T::Key>>,
    /// What releases the claim when the handle is dropped; none once it was handed back.
    unattended: Option<Arc<dyn ReleasesUnattended<T::Key>>>,
}

impl<T: ClaimLease> fmt::Debug for Kept<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Kept")
            .field("claim", self.state.claim())
            .finish_non_exhaustive()
    }
}

impl<T: ClaimLease> Kept<T> {
    pub(super) fn new(
        table: T,
        state: Arc<ClaimState<T::Key>>,
        unattended: Arc<dyn ReleasesUnattended<T::Key>>,
    ) -> Self {
        Self {
            table,
            state,
            unattended: Some(unattended),
        }
    }

    /// Whether every row is still held: no renewal found one taken over, the last confirmed
    /// renewal is recent enough to trust, the longest hold has not passed, and the keeper has
    /// not stopped. A cheap check, made without a statement.
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use diesel_lease::prelude::*;
    /// # use diesel_lease::{Keeper, KeeperSettings};
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let pool = jobs_pool()?;
    /// # let lease = Lease::from_secs(30)?;
    /// # let keeper = Keeper::start(pool.clone(), KeeperSettings::new(lease))?;
    /// # let batch = jobs::table.claim_batch(10, lease).by(&Claim::new("w")?).run::<Job>(&mut pool.get()?)?;
    /// let kept = keeper.keep(batch.held())?;
    /// assert!(kept.is_held());
    /// # Ok(())
    /// # }
    /// ```
    pub fn is_held(&self) -> bool {
        self.state.loss(monotonic::instant()).is_none()
    }

    /// `Ok` while [`is_held`](Self::is_held); otherwise which rows were lost, why, and the last
    /// renewal error if there was one.
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use diesel_lease::prelude::*;
    /// # use diesel_lease::{Keeper, KeeperSettings};
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let pool = jobs_pool()?;
    /// # let lease = Lease::from_secs(30)?;
    /// # let keeper = Keeper::start(pool.clone(), KeeperSettings::new(lease))?;
    /// # let batch = jobs::table.claim_batch(10, lease).by(&Claim::new("w")?).run::<Job>(&mut pool.get()?)?;
    /// let kept = keeper.keep(batch.held())?;
    /// kept.check()?; // before an effect outside the database
    /// # Ok(())
    /// # }
    /// ```
    pub fn check(&self) -> Result<(), LeaseLost<T::Key>> {
        self.state.loss(monotonic::instant()).map_or(Ok(()), Err)
    }

    /// The keys of the rows still held, as of the last renewal.
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use diesel_lease::prelude::*;
    /// # use diesel_lease::{Keeper, KeeperSettings};
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let pool = jobs_pool()?;
    /// # let lease = Lease::from_secs(30)?;
    /// # let keeper = Keeper::start(pool.clone(), KeeperSettings::new(lease))?;
    /// # let batch = jobs::table.claim_batch(10, lease).by(&Claim::new("w")?).run::<Job>(&mut pool.get()?)?;
    /// let kept = keeper.keep(batch.held())?;
    /// assert_eq!(kept.held(), [1]);
    /// # Ok(())
    /// # }
    /// ```
    pub fn held(&self) -> Vec<T::Key> {
        self.state.held()
    }

    /// The claim kept.
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use diesel_lease::prelude::*;
    /// # use diesel_lease::{Keeper, KeeperSettings};
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let pool = jobs_pool()?;
    /// # let lease = Lease::from_secs(30)?;
    /// # let keeper = Keeper::start(pool.clone(), KeeperSettings::new(lease))?;
    /// # let batch = jobs::table.claim_batch(10, lease).by(&Claim::new("w")?).run::<Job>(&mut pool.get()?)?;
    /// let kept = keeper.keep(batch.held())?;
    /// assert_eq!(kept.claim().owner(), "w");
    /// # Ok(())
    /// # }
    /// ```
    pub fn claim(&self) -> &Claim {
        self.state.claim()
    }

    /// Stops keeping the claim and releases the rows it still holds, guarded by its token, with
    /// the caller's `.set(..)` (a final status) in the same statement: run it for the keys of
    /// the rows released. With a shortest hold that has not passed, the rows are dated instead of
    /// freed (after a reading of the database's clock), and the caller's changes still land. A
    /// release that ran before (this one's, or the keeper's when it stopped) releases nothing
    /// again. After an error the claim is renewed no more (the release may have committed
    /// without its answer arriving, and a renewal must not undo it), so that its lease runs out
    /// unless another release gets through: run it again, or drop the handle, which tries once
    /// more.
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use diesel::prelude::*;
    /// # use diesel_lease::prelude::*;
    /// # use diesel_lease::{Keeper, KeeperSettings};
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let pool = jobs_pool()?;
    /// # let lease = Lease::from_secs(30)?;
    /// # let keeper = Keeper::start(pool.clone(), KeeperSettings::new(lease))?;
    /// # let batch = jobs::table.claim_batch(10, lease).by(&Claim::new("w")?).run::<Job>(&mut pool.get()?)?;
    /// let kept = keeper.keep(batch.held())?;
    /// let conn = &mut pool.get()?;
    /// assert_eq!(kept.release().set(jobs::status.eq("done")).run(conn)?, [1]);
    /// assert!(kept.release().run(conn)?.is_empty(), "released once");
    /// # Ok(())
    /// # }
    /// ```
    pub fn release(&self) -> KeptRelease<T, NoChanges<T>> {
        KeptRelease {
            table: self.table,
            state: Arc::clone(&self.state),
            changes: NoChanges::default(),
        }
    }

    /// Stops keeping the claim without releasing it: the rows it still holds, as of the last
    /// renewal, for the caller to finish, release or hand to another keeper. Their lease runs
    /// out from the last renewal unless it is renewed again; the keeper releases them no more,
    /// neither in a drain nor when it stops.
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use diesel::prelude::*;
    /// # use diesel_lease::prelude::*;
    /// # use diesel_lease::{Keeper, KeeperSettings};
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let pool = jobs_pool()?;
    /// # let lease = Lease::from_secs(30)?;
    /// # let keeper = Keeper::start(pool.clone(), KeeperSettings::new(lease))?;
    /// # let batch = jobs::table.claim_batch(10, lease).by(&Claim::new("w")?).run::<Job>(&mut pool.get()?)?;
    /// let kept = keeper.keep(batch.held())?;
    /// let held = kept.stop_keeping();
    /// assert_eq!(held.keys(), [1], "still held, renewed no more");
    /// assert_eq!(held.release().set(jobs::status.eq("done")).run(&mut pool.get()?)?, [1]);
    /// # Ok(())
    /// # }
    /// ```
    pub fn stop_keeping(mut self) -> HeldRows<T> {
        self.unattended = None;
        let held = self.state.hand_back();
        HeldRows::new(self.table, self.state.claim().clone(), held)
    }
}

/// Releases what the claim still holds, waiting for it no longer than the keeper's
/// [`drops_within`](crate::KeeperSettings::drops_within): renewals stop at once, so that rows
/// whose release never lands free by their lease.
impl<T: ClaimLease> Drop for Kept<T> {
    fn drop(&mut self) {
        let Some(unattended) = self.unattended.take() else {
            return;
        };
        if self.state.is_off_the_keepers_hands() {
            // Released already: no thread to start.
            return;
        }
        self.state.stop_renewing();
        let state = Arc::clone(&self.state);
        finished_within(
            "diesel-lease release",
            state.settings().drops_within(),
            move || unattended.release_unattended(&state),
        );
    }
}

/// The release of a kept claim: made by [`Kept::release`], given the caller's changes by
/// [`set`](Self::set), run by `.run(conn)`.
///
/// ```
/// # include!("../doctest_setup.rs");
/// # use diesel::prelude::*;
/// # use diesel_lease::prelude::*;
/// # use diesel_lease::{Keeper, KeeperSettings};
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let pool = jobs_pool()?;
/// # let lease = Lease::from_secs(30)?;
/// # let keeper = Keeper::start(pool.clone(), KeeperSettings::new(lease))?;
/// # let batch = jobs::table.claim_batch(10, lease).by(&Claim::new("w")?).run::<Job>(&mut pool.get()?)?;
/// let kept = keeper.keep(batch.held())?;
/// let release: diesel_lease::KeptRelease<jobs::table, _> = kept.release().set(jobs::status.eq("done"));
/// assert_eq!(release.run(&mut pool.get()?)?, [1]);
/// # Ok(())
/// # }
/// ```
#[must_use = "a release does nothing until it is run"]
pub struct KeptRelease<T: ClaimLease, Changes> {
    table: T,
    state: Arc<ClaimState<T::Key>>,
    changes: Changes,
}

impl<T: ClaimLease, Changes> fmt::Debug for KeptRelease<T, Changes> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeptRelease")
            .field("claim", self.state.claim())
            .finish_non_exhaustive()
    }
}

impl<T: ClaimLease> KeptRelease<T, NoChanges<T>> {
    /// The caller's own changes, set on the released rows by the same statement.
    ///
    /// See [`Kept::release`] for an example.
    pub fn set<Changes: AsChangeset<Target = T>>(
        self,
        changes: Changes,
    ) -> KeptRelease<T, Changes> {
        KeptRelease {
            table: self.table,
            state: self.state,
            changes,
        }
    }
}

impl<T: ClaimLease, Changes> LeaseStatement<T::Key> for KeptRelease<T, Changes> {
    type Output = Vec<T::Key>;
}

impl<'q, T, Changes, C> NativeLeaseQuery<'q, C, T::Key> for KeptRelease<T, Changes>
where
    T: ClaimLease,
    Changes: AsChangeset<Target = T>,
    C: Connection,
    C::Backend: LeaseBackend,
    Guarded<T, Release, Changes, Vec<T::Key>>:
        LeaseQuery<'q, C, T::Key> + LeaseStatement<T::Key, Output = Vec<T::Key>>,
    Guarded<T, DatedRenewal, Changes, Vec<T::Key>>:
        LeaseQuery<'q, C, T::Key> + LeaseStatement<T::Key, Output = Vec<T::Key>>,
    DatabaseTime: LeaseQuery<'q, C, i64> + LeaseStatement<i64, Output = i64>,
{
    fn run_native(self, conn: &mut C) -> Result<Vec<T::Key>, Error> {
        let changes = self.changes;
        let released = release_claim(
            self.table,
            &self.state,
            conn,
            |conn| DatabaseTime.run::<i64>(conn),
            |held, dated, conn| match dated {
                Some(micros) => held
                    .guarded(DatedRenewal::new(micros))
                    .set(changes)
                    .run(conn),
                None => held.release().set(changes).run(conn),
            },
        );
        match released {
            Ok(released) => Ok(released.unwrap_or_default()),
            Err(error) => {
                self.state.stop_renewing();
                Err(error)
            }
        }
    }
}

impl<T: ClaimLease, Changes, C> crate::RunLeaseDsl<C> for KeptRelease<T, Changes> {}
