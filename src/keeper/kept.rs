//! A claim a keeper keeps: the handle the work asks whether its lease still holds, and releases
//! or finishes its rows through.
use std::fmt;
use std::sync::Arc;

use super::bounded::finished_within;
use super::claims::ReleasesUnattended;
use super::state::ClaimState;
use super::LeaseLost;
use crate::monotonic;
use crate::query::{Keeping, KeptBy};
use crate::{Claim, ClaimLease, HeldRows, Holds};

/// A claim a [`Keeper`](crate::Keeper) keeps: ask it whether the lease is still held before each
/// step of the work, and release or finish its rows when done. Dropping it releases too, on a
/// thread of its own, waiting no longer than [`KeeperSettings::drop_within`](crate::KeeperSettings::drop_within)
/// (1 s by default); a release that takes longer goes on alone, and the rows it never frees free by
/// their lease. A release that must be waited for is [`release`](Holds::release), on the caller's
/// connection: a kept claim is a holder, [`Holds`], as a row won or a batch is.
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
    /// The rows kept, linked to the keeper, so that their release stops their renewals.
    held: HeldRows<T>,
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
        held: HeldRows<T>,
        state: Arc<ClaimState<T::Key>>,
        unattended: Arc<dyn ReleasesUnattended<T::Key>>,
    ) -> Self {
        let keeper: Arc<dyn Keeping<T::Key>> = Arc::clone(&state) as _;
        Self {
            held: held.kept_by(KeptBy(keeper)),
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
        HeldRows::new(self.held.table(), self.state.claim().clone(), held)
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

/// The rows kept, through the same verbs as any holder's: [`held`](Holds::held) names the rows
/// the claim was kept with ([`check`](Kept::check) says which of them were lost since), and
/// [`renew`](Holds::renew) and [`update`](Holds::update) are the holder's own, guarded by the
/// claim's token.
///
/// [`release`](Holds::release) stops keeping the claim and releases the rows it still holds (as
/// of the last renewal), guarded by its token, with the caller's `.set(..)` (a final status) in
/// the same statement: run it for the keys of the rows released. The keeper renews them no more,
/// and neither a drain nor its stop, nor the handle's drop, releases them again. With a shortest
/// hold that has not passed, the rows are dated instead of freed (after a reading of the
/// database's clock), and the caller's changes still land. A release that ran before (this one's,
/// or the keeper's when it stopped) releases nothing again. After an error the claim is renewed
/// no more (the release may have committed without its answer arriving, and a renewal must not
/// undo it), so that its lease runs out unless another release gets through: run it again, or
/// drop the handle, which tries once more.
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
/// assert_eq!(kept.held().keys(), [1]);
/// let conn = &mut pool.get()?;
/// assert_eq!(kept.renew().run(conn)?, [1]);
/// assert_eq!(kept.release().set(jobs::status.eq("done")).run(conn)?, [1]);
/// assert!(kept.release().run(conn)?.is_empty(), "released once");
/// assert!(!kept.is_held());
/// # Ok(())
/// # }
/// ```
impl<T: ClaimLease> Holds for Kept<T> {
    type Table = T;
    type Answer = Vec<T::Key>;

    fn held(&self) -> &HeldRows<T> {
        &self.held
    }
}
