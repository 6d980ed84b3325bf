//! Keeping leases: a thread that renews the rows it keeps, tells the work the moment a lease is
//! lost, and releases them when done.
mod monotonic;

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use diesel::r2d2::{ConnectionManager, Pool, R2D2Connection};
use diesel::Column;

use crate::release_rows::{guarded_update, GuardedUpdate, LockHeldRows};
use crate::{Claim, ClaimLease, Error, Lease, Released, ReleasesRows, Renewed};

/// How a [`Keeper`] keeps its leases.
///
/// * `every`: how often it renews, by default a third of the lease;
/// * `margin`: how long before the lease would run out it stops trusting a lease whose renewal
///   it could not confirm, by default a fifth of the lease;
/// * `at_most`: the longest it keeps any claim (ShedLock's `lockAtMostFor`), after which it stops
///   renewing and reports the lease lost; none by default.
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
}

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

    /// The settings, or why they cannot keep a lease: a renewal must come well within the
    /// trusted part of the lease.
    fn checked(self) -> Result<Self, Error> {
        let trusted = self.lease.as_duration().saturating_sub(self.margin);
        if self.every.is_zero() || self.margin.is_zero() || self.every >= trusted {
            return Err(Error::InvalidLease(format!(
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

/// A thread that keeps leases: it renews every claim handed to it in one guarded statement per
/// claim and round, notices when a renewal changes fewer rows than are held, and stops trusting
/// a lease it could not renew in time. What it keeps is a [`Kept`] handle, which the work asks
/// [`is_held`](Kept::is_held) or [`check`](Kept::check) as often as it likes.
///
/// The keeper owns a clone of an r2d2 pool and takes a connection for each renewal only; a
/// broken connection is replaced by the pool at the next one. Size the pool for it (or give it a
/// small pool of its own): a renewal that waits for a connection is a renewal that may come too
/// late, and a release on drop waits for one too. Dropping the keeper stops it and releases every
/// claim it still keeps.
///
/// ```
/// # include!("../doctest_setup.rs");
/// use diesel::prelude::*;
/// use diesel_lease::prelude::*;
/// use diesel_lease::{Keeper, KeeperSettings};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let pool = jobs_pool()?;
/// let lease = Lease::from_secs(30)?;
/// let keeper = Keeper::start(pool.clone(), KeeperSettings::new(lease))?;
/// let batch: Batch<i64> = jobs::table.claim_batch(10, lease).returning(jobs::id).by("worker-1", &mut pool.get()?)?;
/// let (ids, claim) = batch.into_parts();
/// let kept = keeper.keep(jobs::table, claim, ids)?;
/// // ... the work, checking before each outside effect:
/// kept.check()?;
/// assert_eq!(kept.release()?, [1]);
/// # Ok(())
/// # }
/// ```
pub struct Keeper<C: R2D2Connection + 'static> {
    shared: Arc<Shared<C>>,
    thread: Option<JoinHandle<()>>,
}

struct Shared<C: R2D2Connection + 'static> {
    pool: Pool<ConnectionManager<C>>,
    settings: KeeperSettings,
    kept: Mutex<Vec<Arc<dyn Renewing>>>,
    stopped: Mutex<bool>,
    wake: Condvar,
    rounds: AtomicU64,
    statements: AtomicU64,
}

impl<C: R2D2Connection + 'static> fmt::Debug for Keeper<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Keeper")
            .field("settings", &self.shared.settings)
            .field("rounds", &self.rounds())
            .finish_non_exhaustive()
    }
}

impl<C: R2D2Connection + 'static> Keeper<C> {
    /// Starts a keeper on its own thread, renewing through `pool`.
    ///
    /// Settings that cannot keep a lease (a renewal no sooner than the lease less the margin)
    /// are [`Error::InvalidLease`], before any thread starts.
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// use std::time::Duration;
    /// use diesel_lease::{Keeper, KeeperSettings, Lease};
    ///
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let pool = jobs_pool()?;
    /// let never_in_time = KeeperSettings::new(Lease::from_secs(3)?).every(Duration::from_secs(3));
    /// assert!(Keeper::start(pool.clone(), never_in_time).is_err());
    /// let keeper = Keeper::start(pool, KeeperSettings::new(Lease::from_secs(3)?))?;
    /// # let _ = keeper;
    /// # Ok(())
    /// # }
    /// ```
    pub fn start(
        pool: Pool<ConnectionManager<C>>,
        settings: KeeperSettings,
    ) -> Result<Self, Error> {
        let shared = Arc::new(Shared {
            pool,
            settings: settings.checked()?,
            kept: Mutex::new(Vec::new()),
            stopped: Mutex::new(false),
            wake: Condvar::new(),
            rounds: AtomicU64::new(0),
            statements: AtomicU64::new(0),
        });
        let renewing = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name("diesel-lease keeper".into())
            .spawn(move || renewing.run())
            .map_err(Error::KeeperThread)?;
        Ok(Self {
            shared,
            thread: Some(thread),
        })
    }

    /// Keeps the rows of `table` with `keys` that `claim` holds (a batch, or one row), from now
    /// until they are released, their lease is lost, or the keeper stops.
    ///
    /// It renews them once before it returns, so that the lease is trusted from a renewal the
    /// database confirmed, never from the claim's age as the keeper guesses it; a renewal that
    /// fails is the error returned. Keep a table's claims with a keeper of the lease its
    /// claimers use: whoever judges a lease outlived must use the same lease as its holder.
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use diesel_lease::prelude::*;
    /// # use diesel_lease::{Keeper, KeeperSettings};
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let pool = jobs_pool()?;
    /// let lease = Lease::from_secs(30)?;
    /// let keeper = Keeper::start(pool.clone(), KeeperSettings::new(lease))?;
    /// let outcome: Claimed<Job, _, _> = jobs::table.claim_row(1, lease).by(Claim::new("w")?, &mut pool.get()?)?;
    /// let (job, claim) = outcome.won().expect("claimable").into_parts();
    /// let kept = keeper.keep(jobs::table, claim, vec![job.id])?;
    /// assert!(kept.is_held());
    /// # Ok(())
    /// # }
    /// ```
    pub fn keep<T, K>(&self, table: T, claim: Claim, keys: Vec<K>) -> Result<Kept<K>, Error>
    where
        T: ClaimLease + Send + Sync + 'static,
        T::PrimaryKey: Column,
        K: Clone + PartialEq + Send + Sync + 'static,
        C::Backend: KeepsRows<C, T, K>,
    {
        let now = monotonic::instant();
        let state = Arc::new(KeptState {
            claim,
            settings: self.shared.settings,
            kept_since: now,
            statement: Mutex::new(()),
            inner: Mutex::new(Inner {
                held: keys,
                lost: Vec::new(),
                reason: None,
                renewing: true,
                released: None,
                // Nothing is trusted until a renewal is confirmed: the claim may be old already.
                trusted_until: now,
                last_error: None,
                unconfirmed_told: false,
            }),
        });
        let rows = Arc::new(KeptRows {
            pool: self.shared.pool.clone(),
            table,
            state: Arc::clone(&state),
        });
        // The first renewal, here and now: the lease is trusted from its start, and a claim
        // that cannot be renewed at all is the caller's error at once.
        rows.renew_once()?;
        let rows: Arc<dyn Renewing> = rows;
        lock(&self.shared.kept).push(Arc::clone(&rows));
        Ok(Kept { state, rows })
    }

    /// The lease the keeper keeps claims under.
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use diesel_lease::{Keeper, KeeperSettings, Lease};
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let pool = jobs_pool()?;
    /// let keeper = Keeper::start(pool, KeeperSettings::new(Lease::from_secs(30)?))?;
    /// assert_eq!(keeper.lease(), Lease::from_secs(30)?);
    /// # Ok(())
    /// # }
    /// ```
    pub fn lease(&self) -> Lease {
        self.shared.settings.lease
    }

    /// How many rounds of renewals the keeper has made.
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use diesel_lease::{Keeper, KeeperSettings, Lease};
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let pool = jobs_pool()?;
    /// let keeper = Keeper::start(pool, KeeperSettings::new(Lease::from_secs(30)?))?;
    /// assert!(keeper.rounds() <= 1);
    /// # Ok(())
    /// # }
    /// ```
    pub fn rounds(&self) -> u64 {
        self.shared.rounds.load(Ordering::SeqCst)
    }

    /// How many renewal statements the keeper has sent: one per kept claim and round, however
    /// many rows the claim holds.
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use diesel_lease::{Keeper, KeeperSettings, Lease};
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let pool = jobs_pool()?;
    /// let keeper = Keeper::start(pool, KeeperSettings::new(Lease::from_secs(30)?))?;
    /// assert_eq!(keeper.renewal_statements(), 0, "nothing kept, nothing renewed");
    /// # Ok(())
    /// # }
    /// ```
    pub fn renewal_statements(&self) -> u64 {
        self.shared.statements.load(Ordering::SeqCst)
    }
}

impl<C: R2D2Connection + 'static> Drop for Keeper<C> {
    fn drop(&mut self) {
        *lock(&self.shared.stopped) = true;
        self.shared.wake.notify_all();
        if let Some(thread) = self.thread.take() {
            // A renewal thread that panicked has nothing left to stop.
            let _ = thread.join();
        }
        for rows in lock(&self.shared.kept).drain(..) {
            // A stopping keeper has no one to tell of an error; the lease runs out on its own.
            let _ = rows.release();
        }
    }
}

impl<C: R2D2Connection + 'static> Shared<C> {
    /// Renews every kept claim once per round, each round `every` after the start of the last,
    /// until the keeper stops.
    fn run(&self) {
        loop {
            let round_start = monotonic::instant();
            let kept: Vec<Arc<dyn Renewing>> = {
                let mut kept = lock(&self.kept);
                kept.retain(|rows| !rows.is_done());
                kept.clone()
            };
            for rows in kept {
                if self.is_stopped() {
                    return;
                }
                if rows.renew() {
                    self.statements.fetch_add(1, Ordering::SeqCst);
                }
            }
            self.rounds.fetch_add(1, Ordering::SeqCst);
            let next = round_start + self.settings.every;
            let mut stopped = lock(&self.stopped);
            while !*stopped {
                let left = next.saturating_duration_since(monotonic::instant());
                if left.is_zero() {
                    break;
                }
                stopped = match self.wake.wait_timeout(stopped, left) {
                    Ok((guard, _)) => guard,
                    Err(poisoned) => poisoned.into_inner().0,
                };
            }
            if *stopped {
                return;
            }
        }
    }

    fn is_stopped(&self) -> bool {
        *lock(&self.stopped)
    }
}

/// The part of a lease a keeper trusts after a renewal it confirmed.
fn trusted_part(settings: KeeperSettings) -> Duration {
    settings.lease.as_duration().saturating_sub(settings.margin)
}

/// A mutex's guard; a poisoned mutex holds plain data that is still sound.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A backend on which a keeper can renew and release rows of `T` with keys `K`, through
/// connections `C`: every backend the library supports.
///
/// ```
/// # include!("../doctest_setup.rs");
/// fn keeps<DB: diesel_lease::KeepsRows<diesel::SqliteConnection, jobs::table, i64>>() {}
/// # fn main() {
/// keeps::<diesel::sqlite::Sqlite>();
/// # }
/// ```
pub trait KeepsRows<C, T: ClaimLease, K>: ReleasesRows<'static, GuardedUpdate<T, K, Renewed<T>>, T::PrimaryKey, LockHeldRows<T, K>, C, K>
    + ReleasesRows<'static, GuardedUpdate<T, K, Released<T>>, T::PrimaryKey, LockHeldRows<T, K>, C, K>
{
}

impl<C, T, K, DB> KeepsRows<C, T, K> for DB
where
    T: ClaimLease,
    DB: ReleasesRows<
            'static,
            GuardedUpdate<T, K, Renewed<T>>,
            T::PrimaryKey,
            LockHeldRows<T, K>,
            C,
            K,
        > + ReleasesRows<
            'static,
            GuardedUpdate<T, K, Released<T>>,
            T::PrimaryKey,
            LockHeldRows<T, K>,
            C,
            K,
        >,
{
}

/// A claim's rows a keeper renews and releases, whatever their table and key type.
trait Renewing: Send + Sync {
    /// One renewal of the rows still held, now; the error when it could not be made.
    fn renew_once(&self) -> Result<(), Error>;
    /// Renews what is still held, unless released or past its longest hold; whether a
    /// statement was sent.
    fn renew(&self) -> bool;
    /// Releases what is still held, once; whether this call released. On an error nothing
    /// changed, and the release may be tried again.
    fn release(&self) -> Result<bool, Error>;
    /// Released, or past its longest hold: nothing left to renew.
    fn is_done(&self) -> bool;
}

struct KeptRows<C: R2D2Connection + 'static, T, K> {
    pool: Pool<ConnectionManager<C>>,
    table: T,
    state: Arc<KeptState<K>>,
}

/// What the keeper and the work share of one kept claim.
struct KeptState<K> {
    claim: Claim,
    settings: KeeperSettings,
    kept_since: Instant,
    /// Held while a statement of this claim runs, so that a renewal and a release never cross
    /// (a renewal landing after the release would report the release as a loss).
    statement: Mutex<()>,
    /// Locked only briefly, never across a statement: `is_held` must stay cheap.
    inner: Mutex<Inner<K>>,
}

struct Inner<K> {
    held: Vec<K>,
    lost: Vec<K>,
    reason: Option<LossReason>,
    renewing: bool,
    /// The keys the release changed, once it ran.
    released: Option<Vec<K>>,
    trusted_until: Instant,
    last_error: Option<String>,
    unconfirmed_told: bool,
}

impl<K: Clone + PartialEq> KeptState<K> {
    fn past_longest_hold(&self) -> bool {
        self.settings.at_most.is_some_and(|at_most| {
            // A longest hold past what the clock can count never comes.
            self.kept_since
                .checked_add(at_most)
                .is_some_and(|end| monotonic::instant() >= end)
        })
    }

    fn loss(&self) -> Option<LeaseLost<K>> {
        let inner = lock(&self.inner);
        let reason = if let Some(reason) = inner.reason {
            reason
        } else if inner.released.is_some() {
            LossReason::Released
        } else if self.past_longest_hold() {
            LossReason::LongestHold
        } else if monotonic::instant() >= inner.trusted_until {
            LossReason::Unconfirmed
        } else {
            return None;
        };
        let mut rows = inner.lost.clone();
        if reason != LossReason::TakenOver {
            rows.extend(inner.held.iter().cloned());
        }
        Some(LeaseLost {
            rows,
            reason,
            cause: inner.last_error.clone(),
        })
    }
}

impl<C, T, K> Renewing for KeptRows<C, T, K>
where
    C: R2D2Connection + 'static,
    T: ClaimLease + Send + Sync + 'static,
    T::PrimaryKey: Column,
    K: Clone + PartialEq + Send + Sync + 'static,
    C::Backend: KeepsRows<C, T, K>,
{
    /// One renewal of the rows still held, now; the error when it could not be made.
    fn renew_once(&self) -> Result<(), Error> {
        let state = &self.state;
        let _statement = lock(&state.statement);
        let keys = {
            let mut inner = lock(&state.inner);
            if !inner.renewing || inner.released.is_some() {
                return Ok(());
            }
            if state.past_longest_hold() {
                inner.renewing = false;
                inner.reason.get_or_insert(LossReason::LongestHold);
                let rows = inner.held.len();
                drop(inner);
                crate::events::lost::<T>(&state.claim, rows, &LossReason::LongestHold);
                return Ok(());
            }
            inner.held.clone()
        };
        // The lease runs from the database's clock at the statement; the request's start on
        // ours is no later, so trusting from it can only end the trust sooner.
        let request_start = monotonic::instant();
        let renewed = self.pool.get().map_err(Error::from).and_then(|mut conn| {
            guarded_update(
                self.table,
                &state.claim,
                keys.clone(),
                self.table.renewed(),
                &mut *conn,
            )
        });
        let mut inner = lock(&state.inner);
        match renewed {
            Ok(still_held) => {
                let lost: Vec<K> = keys
                    .into_iter()
                    .filter(|key| !still_held.contains(key))
                    .collect();
                if !lost.is_empty() {
                    crate::events::lost::<T>(&state.claim, lost.len(), &LossReason::TakenOver);
                    inner.lost.extend(lost);
                    inner.reason.get_or_insert(LossReason::TakenOver);
                }
                crate::events::renewed::<T>(&state.claim, still_held.len());
                inner.held = still_held;
                inner.trusted_until = request_start + trusted_part(state.settings);
                inner.last_error = None;
                Ok(())
            }
            // An error leaves the trust deadline where it was: unreachable means lost in time.
            Err(error) => {
                inner.last_error = Some(error.to_string());
                if monotonic::instant() >= inner.trusted_until && !inner.unconfirmed_told {
                    inner.unconfirmed_told = true;
                    crate::events::lost::<T>(
                        &state.claim,
                        inner.held.len(),
                        &LossReason::Unconfirmed,
                    );
                }
                Err(error)
            }
        }
    }

    fn renew(&self) -> bool {
        if self.is_done() || lock(&self.state.inner).held.is_empty() {
            return false;
        }
        // The error is kept for `check` to report; the trust deadline does the rest.
        let _ = self.renew_once();
        true
    }

    fn release(&self) -> Result<bool, Error> {
        let state = &self.state;
        let _statement = lock(&state.statement);
        let keys = {
            let inner = lock(&state.inner);
            if inner.released.is_some() {
                return Ok(false);
            }
            inner.held.clone()
        };
        let released = if keys.is_empty() {
            Vec::new()
        } else {
            let mut conn = self.pool.get()?;
            guarded_update(
                self.table,
                &state.claim,
                keys,
                self.table.released(),
                &mut *conn,
            )?
        };
        crate::events::released::<T>(&state.claim, released.len());
        let mut inner = lock(&state.inner);
        inner.renewing = false;
        inner.held.clear();
        inner.released = Some(released);
        Ok(true)
    }

    fn is_done(&self) -> bool {
        let inner = lock(&self.state.inner);
        inner.released.is_some() || !inner.renewing
    }
}

/// A claim a [`Keeper`] keeps: ask it whether the lease is still held before each step of the
/// work, and release it when done (dropping it releases too).
///
/// ```
/// # include!("../doctest_setup.rs");
/// # use diesel_lease::prelude::*;
/// # use diesel_lease::{Keeper, KeeperSettings};
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let pool = jobs_pool()?;
/// let lease = Lease::from_secs(30)?;
/// let keeper = Keeper::start(pool.clone(), KeeperSettings::new(lease))?;
/// let batch: Batch<i64> = jobs::table.claim_batch(10, lease).returning(jobs::id).by("w", &mut pool.get()?)?;
/// let (ids, claim) = batch.into_parts();
/// let kept = keeper.keep(jobs::table, claim, ids)?;
/// while kept.is_held() {
///     // one step of the work
///     break;
/// }
/// drop(kept); // released
/// # Ok(())
/// # }
/// ```
pub struct Kept<K> {
    state: Arc<KeptState<K>>,
    rows: Arc<dyn Renewing>,
}

impl<K> fmt::Debug for Kept<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Kept")
            .field("claim", &self.state.claim)
            .finish_non_exhaustive()
    }
}

impl<K: Clone + PartialEq> Kept<K> {
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
    /// # let batch: Batch<i64> = jobs::table.claim_batch(10, lease).returning(jobs::id).by("w", &mut pool.get()?)?;
    /// # let (ids, claim) = batch.into_parts();
    /// let kept = keeper.keep(jobs::table, claim, ids)?;
    /// assert!(kept.is_held());
    /// # Ok(())
    /// # }
    /// ```
    pub fn is_held(&self) -> bool {
        self.state.loss().is_none()
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
    /// # let batch: Batch<i64> = jobs::table.claim_batch(10, lease).returning(jobs::id).by("w", &mut pool.get()?)?;
    /// # let (ids, claim) = batch.into_parts();
    /// let kept = keeper.keep(jobs::table, claim, ids)?;
    /// kept.check()?; // before an effect outside the database
    /// # Ok(())
    /// # }
    /// ```
    pub fn check(&self) -> Result<(), LeaseLost<K>> {
        self.state.loss().map_or(Ok(()), Err)
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
    /// # let batch: Batch<i64> = jobs::table.claim_batch(10, lease).returning(jobs::id).by("w", &mut pool.get()?)?;
    /// # let (ids, claim) = batch.into_parts();
    /// let kept = keeper.keep(jobs::table, claim, ids)?;
    /// assert_eq!(kept.held(), [1]);
    /// # Ok(())
    /// # }
    /// ```
    pub fn held(&self) -> Vec<K> {
        lock(&self.state.inner).held.clone()
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
    /// # let batch: Batch<i64> = jobs::table.claim_batch(10, lease).returning(jobs::id).by("w", &mut pool.get()?)?;
    /// # let (ids, claim) = batch.into_parts();
    /// let kept = keeper.keep(jobs::table, claim, ids)?;
    /// assert_eq!(kept.claim().owner(), "w");
    /// # Ok(())
    /// # }
    /// ```
    pub fn claim(&self) -> &Claim {
        &self.state.claim
    }

    /// Stops keeping the claim and releases the rows it still holds, guarded by its token, in
    /// one statement; gives back their keys. A release that ran before (this handle's, or the
    /// keeper's when it stopped) releases nothing again. On an error nothing was released, and
    /// dropping the handle tries once more.
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use diesel_lease::prelude::*;
    /// # use diesel_lease::{Keeper, KeeperSettings};
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let pool = jobs_pool()?;
    /// # let lease = Lease::from_secs(30)?;
    /// # let keeper = Keeper::start(pool.clone(), KeeperSettings::new(lease))?;
    /// # let batch: Batch<i64> = jobs::table.claim_batch(10, lease).returning(jobs::id).by("w", &mut pool.get()?)?;
    /// # let (ids, claim) = batch.into_parts();
    /// let kept = keeper.keep(jobs::table, claim, ids)?;
    /// assert_eq!(kept.release()?, [1]);
    /// # Ok(())
    /// # }
    /// ```
    pub fn release(self) -> Result<Vec<K>, Error> {
        if self.rows.release()? {
            Ok(lock(&self.state.inner).released.clone().unwrap_or_default())
        } else {
            Ok(Vec::new())
        }
    }
}

impl<K> Drop for Kept<K> {
    fn drop(&mut self) {
        // A dropped handle has no one to tell of an error; the lease runs out on its own.
        let _ = self.rows.release();
    }
}

/// Why a kept lease is no longer held.
///
/// ```
/// use diesel_lease::LossReason;
///
/// assert_eq!(LossReason::TakenOver.to_string(), "a renewal found the rows no longer held by the claim");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum LossReason {
    /// A renewal changed fewer rows than were held: another claim took them, or they were
    /// released behind the keeper's back.
    TakenOver,
    /// No renewal was confirmed within the lease less the margin (the database unreachable,
    /// the row locked): the lease may have run out by the database's clock.
    Unconfirmed,
    /// The longest hold passed; the keeper stopped renewing.
    LongestHold,
    /// The claim was released: the keeper stopped, and released what it kept.
    Released,
}

impl fmt::Display for LossReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            LossReason::TakenOver => "a renewal found the rows no longer held by the claim",
            LossReason::Unconfirmed => "no renewal was confirmed in time",
            LossReason::LongestHold => "the longest hold passed",
            LossReason::Released => "the keeper stopped and released the claim",
        })
    }
}

/// A kept lease that is no longer held: which rows, and why. Stop the work on them.
///
/// ```
/// use diesel_lease::{LeaseLost, LossReason};
///
/// let lost = LeaseLost { rows: vec![7_i64], reason: LossReason::TakenOver, cause: None };
/// assert_eq!(lost.to_string(), "lease lost on 1 row(s): a renewal found the rows no longer held by the claim");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseLost<K> {
    /// The keys of the rows lost.
    pub rows: Vec<K>,
    /// Why.
    pub reason: LossReason,
    /// The last renewal's error, when the keeper could not renew.
    pub cause: Option<String>,
}

impl<K> fmt::Display for LeaseLost<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "lease lost on {} row(s): {}",
            self.rows.len(),
            self.reason
        )?;
        match &self.cause {
            Some(cause) => write!(f, " (last renewal: {cause})"),
            None => Ok(()),
        }
    }
}

impl<K: fmt::Debug> std::error::Error for LeaseLost<K> {}
