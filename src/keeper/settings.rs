//! How a keeper keeps its leases: how often it renews, when it stops trusting a lease it could
//! not renew, the longest and shortest holds.
use std::time::Duration;

use crate::{Error, Lease};

/// How a [`Keeper`](crate::Keeper) keeps its leases.
///
/// * `every`: how often it renews, by default a third of the lease;
/// * `margin`: how long before the lease would run out it stops trusting a lease whose renewal
///   it could not confirm, by default a fifth of the lease;
/// * `at_most`: the longest it keeps any claim (ShedLock's `lockAtMostFor`), after which it stops
///   renewing and reports the lease lost; none by default;
/// * `at_least`: the shortest it holds any claim (ShedLock's `lockAtLeastFor`), by the database's
///   clock: a release before it leaves the rows dated so that no one takes them sooner; none by
///   default;
/// * `drop_within`: the longest a drop of a [`Kept`](crate::Kept) or of the keeper waits for its
///   release, 1 s by default.
///
/// ```
/// use std::time::Duration;
/// use diesel_lease::{KeeperSettings, Lease};
///
/// let settings = KeeperSettings::new(Lease::from_secs(30)?)
///     .every(Duration::from_secs(5))
///     .margin(Duration::from_secs(5))
///     .at_most(Duration::from_secs(600));
/// assert_eq!(settings.renews_every(), Duration::from_secs(5));
/// # Ok::<(), diesel_lease::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeeperSettings {
    lease: Lease,
    every: Duration,
    margin: Duration,
    at_most: Option<Duration>,
    at_least: Option<Duration>,
    drop_within: Duration,
}

/// How long a drop waits for its release by default: long enough for a release on a server that
/// answers, short enough for a thread that must not block.
const DROP_WITHIN: Duration = Duration::from_secs(1);

impl KeeperSettings {
    /// Renew every third of `lease`, and stop trusting an unconfirmed lease a fifth of it early.
    ///
    /// ```
    /// use std::time::Duration;
    /// let settings = diesel_lease::KeeperSettings::new(diesel_lease::Lease::from_secs(30)?);
    /// assert_eq!(settings.renews_every(), Duration::from_secs(10));
    /// # Ok::<(), diesel_lease::Error>(())
    /// ```
    pub fn new(lease: Lease) -> Self {
        Self {
            lease,
            every: lease.as_duration() / 3,
            margin: lease.as_duration() / 5,
            at_most: None,
            at_least: None,
            drop_within: DROP_WITHIN,
        }
    }

    /// Renew every `every`, counted from the start of each round of renewals.
    ///
    /// ```
    /// # use std::time::Duration;
    /// let settings = diesel_lease::KeeperSettings::new(diesel_lease::Lease::from_secs(30)?).every(Duration::from_secs(3));
    /// assert_eq!(settings.renews_every(), Duration::from_secs(3));
    /// # Ok::<(), diesel_lease::Error>(())
    /// ```
    pub fn every(self, every: Duration) -> Self {
        Self { every, ..self }
    }

    /// Stop trusting a lease `margin` before it would run out since its last confirmed renewal.
    ///
    /// ```
    /// # use std::time::Duration;
    /// let settings = diesel_lease::KeeperSettings::new(diesel_lease::Lease::from_secs(30)?).margin(Duration::from_secs(2));
    /// # let _ = settings;
    /// # Ok::<(), diesel_lease::Error>(())
    /// ```
    pub fn margin(self, margin: Duration) -> Self {
        Self { margin, ..self }
    }

    /// Keep no claim longer than `at_most`: then stop renewing it and report it lost.
    ///
    /// ```
    /// # use std::time::Duration;
    /// let settings = diesel_lease::KeeperSettings::new(diesel_lease::Lease::from_secs(30)?).at_most(Duration::from_secs(300));
    /// # let _ = settings;
    /// # Ok::<(), diesel_lease::Error>(())
    /// ```
    pub fn at_most(self, at_most: Duration) -> Self {
        Self {
            at_most: Some(at_most),
            ..self
        }
    }

    /// Hold every claim at least `at_least`, counted by the database's clock from [`Keeper::keep`](crate::Keeper::keep):
    /// a release before then keeps the rows' owner and token and dates their `claimed_at` so that
    /// they outlive the lease only once `at_least` has passed; a release after it frees them as
    /// usual. For a job that must not run again too soon after it ran on one node (a scheduled
    /// task on many nodes), whatever the nodes' clocks say.
    ///
    /// Until then the rows look held, and once it has passed they look outlived, not free: a
    /// reaper of that table treats them as stale.
    ///
    /// ```
    /// # use std::time::Duration;
    /// let settings = diesel_lease::KeeperSettings::new(diesel_lease::Lease::from_secs(30)?)
    ///     .at_least(Duration::from_secs(300));
    /// # let _ = settings;
    /// # Ok::<(), diesel_lease::Error>(())
    /// ```
    pub fn at_least(self, at_least: Duration) -> Self {
        Self {
            at_least: Some(at_least),
            ..self
        }
    }

    /// Let a drop of a [`Kept`](crate::Kept), or of the keeper, wait at most `within` for its
    /// release, whatever the number of claims and whatever the server does (stopped while its
    /// host still answers, say). The release runs on a thread of its own: past the bound it goes
    /// on alone, and the drop returns; the claims are renewed no more from the drop on, so rows
    /// whose release never lands free by their lease. `Duration::ZERO` never waits.
    ///
    /// ```
    /// # use std::time::Duration;
    /// let settings = diesel_lease::KeeperSettings::new(diesel_lease::Lease::from_secs(30)?)
    ///     .drop_within(Duration::from_millis(200));
    /// assert_eq!(settings.drops_within(), Duration::from_millis(200));
    /// # Ok::<(), diesel_lease::Error>(())
    /// ```
    pub fn drop_within(self, within: Duration) -> Self {
        Self {
            drop_within: within,
            ..self
        }
    }

    /// The longest a drop waits for its release: 1 s unless set by
    /// [`drop_within`](Self::drop_within).
    ///
    /// ```
    /// # use std::time::Duration;
    /// let settings = diesel_lease::KeeperSettings::new(diesel_lease::Lease::from_secs(30)?);
    /// assert_eq!(settings.drops_within(), Duration::from_secs(1));
    /// # Ok::<(), diesel_lease::Error>(())
    /// ```
    pub fn drops_within(&self) -> Duration {
        self.drop_within
    }

    /// How often the keeper renews.
    ///
    /// ```
    /// # use std::time::Duration;
    /// let settings = diesel_lease::KeeperSettings::new(diesel_lease::Lease::from_secs(9)?);
    /// assert_eq!(settings.renews_every(), Duration::from_secs(3));
    /// # Ok::<(), diesel_lease::Error>(())
    /// ```
    pub fn renews_every(&self) -> Duration {
        self.every
    }

    /// The lease the keeper keeps claims under.
    pub(super) fn lease(&self) -> Lease {
        self.lease
    }

    /// The longest hold, if any.
    pub(super) fn longest_hold(&self) -> Option<Duration> {
        self.at_most
    }

    /// The shortest hold, if any.
    pub(super) fn shortest_hold(&self) -> Option<Duration> {
        self.at_least
    }

    /// How long before a lease would run out the keeper stops trusting it.
    pub(super) fn trust_margin(&self) -> Duration {
        self.margin
    }

    /// The part of a lease a keeper trusts after a renewal it confirmed.
    pub(super) fn trusted_part(&self) -> Duration {
        self.lease.as_duration().saturating_sub(self.margin)
    }

    /// The settings, or why they cannot keep a lease ([`Error::InvalidSettings`]): a renewal
    /// must come well within the trusted part of the lease, a longest hold must not be zero, and
    /// a shortest hold must be a lease's length and no longer than the longest. A keeper checks
    /// them as it starts, or keeps a claim under them; check them sooner to refuse them before
    /// anything is sent.
    ///
    /// ```
    /// # use std::time::Duration;
    /// use diesel_lease::{KeeperSettings, Lease};
    ///
    /// let lease = Lease::from_secs(30)?;
    /// assert!(KeeperSettings::new(lease).checked().is_ok());
    /// assert!(KeeperSettings::new(lease).at_most(Duration::ZERO).checked().is_err());
    /// # Ok::<(), diesel_lease::Error>(())
    /// ```
    pub fn checked(self) -> Result<Self, Error> {
        if self.at_most.is_some_and(|at_most| at_most.is_zero()) {
            return Err(Error::InvalidSettings(
                "a longest hold of zero keeps nothing".into(),
            ));
        }
        if let Some(at_least) = self.at_least {
            Lease::new(at_least).map_err(|out_of_range| {
                Error::InvalidSettings(format!("a shortest hold: {out_of_range}"))
            })?;
            if self.at_most.is_some_and(|at_most| at_most < at_least) {
                return Err(Error::InvalidSettings(format!(
                    "a shortest hold of {at_least:?} is longer than the longest, {:?}",
                    self.at_most
                )));
            }
        }
        if self.every.is_zero() || self.margin.is_zero() || self.every >= self.trusted_part() {
            return Err(Error::InvalidSettings(format!(
                "renewing every {:?} with a margin of {:?} cannot keep a lease of {:?}: \
                 renew more often than the lease less the margin",
                self.every,
                self.margin,
                self.lease.as_duration()
            )));
        }
        Ok(self)
    }
}
