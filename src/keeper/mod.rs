//! Keeping leases: a thread that renews the rows it keeps, tells the work the moment a lease is
//! lost, and releases them when done.
mod monotonic;
mod renewal;

use std::any::Any;
use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use diesel::connection::TransactionManager;
use diesel::query_dsl::methods::LoadQuery;
use diesel::r2d2::{ConnectionManager, Pool, R2D2Connection};
use diesel::{Column, Connection, ExpressionMethods, QueryResult, RunQueryDsl};

use crate::release_rows::{guarded_update, GuardedUpdate, LockHeldRows};
use crate::{
    Age, Ago, Claim, ClaimLease, ClockMicros, Error, Lease, Released, ReleasesRows, RenewedAgo,
};
use renewal::{renew_together, RenewedRow};
#[doc(hidden)]
pub use renewal::{KeyAndToken, PairsIn, ReadRenewed, Renewal};
pub use renewal::{ListsRowValues, RenewsRows};

/// How a [`Keeper`] keeps its leases.
///
/// * `every`: how often it renews, by default a third of the lease;
/// * `margin`: how long before the lease would run out it stops trusting a lease whose renewal
///   it could not confirm, by default a fifth of the lease;
/// * `at_most`: the longest it keeps any claim (ShedLock's `lockAtMostFor`), after which it stops
///   renewing and reports the lease lost; none by default;
/// * `at_least`: the shortest it holds any claim (ShedLock's `lockAtLeastFor`), by the database's
///   clock: a release before it leaves the rows dated so that no one takes them sooner; none by
///   default.
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
            at_least: None,
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

    /// Hold every claim at least `at_least`, counted by the database's clock from [`Keeper::keep`]:
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
    /// trusted part of the lease, and a shortest hold must be a lease's length and no longer than
    /// the longest.
    fn checked(self) -> Result<Self, Error> {
        if let Some(at_least) = self.at_least {
            Lease::new(at_least)?;
            if self.at_most.is_some_and(|at_most| at_most < at_least) {
                return Err(Error::InvalidLease(format!(
                    "a shortest hold of {at_least:?} is longer than the longest, {:?}",
                    self.at_most
                )));
            }
        }
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

/// A thread that keeps leases: it renews every claim handed to it, all the claims it keeps on one
/// table in one statement per round, each row guarded by its own claim's token; it notices when
/// a renewal changes fewer rows than are held, and stops trusting a lease it could not renew in
/// time. What it keeps is a [`Kept`] handle, which the work asks
/// [`is_held`](Kept::is_held) or [`check`](Kept::check) as often as it likes.
///
/// The keeper owns a clone of an r2d2 pool and takes a connection for each renewal only; a
/// broken connection is replaced by the pool at the next one. Size the pool for it (or give it a
/// small pool of its own): a renewal that waits for a connection is a renewal that may come too
/// late. A release on drop waits for one no longer than a renewal interval; without one, it
/// stops renewing the claim, leaves its lease to run out on its own and warns operators
/// (`tracing` feature). Dropping the keeper stops it and releases every claim it still keeps.
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
    tables: Mutex<Vec<KeptTable>>,
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
            tables: Mutex::new(Vec::new()),
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
        let hold_until = match self.shared.settings.at_least {
            Some(at_least) => {
                let started = C::Backend::clock_micros(&mut *self.shared.pool.get()?)?;
                Some(started.saturating_add(micros_of(at_least)))
            }
            None => None,
        };
        let now = monotonic::instant();
        let state = Arc::new(KeptState {
            table: crate::events::table_name::<T>(),
            claim,
            settings: self.shared.settings,
            kept_since: now,
            hold_until,
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
        let claims = self.claims_on(table);
        // The first renewal, here and now, of this claim alone: the lease is trusted from its
        // start, and a claim that cannot be renewed at all is the caller's error at once.
        claims.renew(std::slice::from_ref(&state))?;
        lock(&claims.claims).push(Arc::clone(&state));
        Ok(Kept {
            state,
            table: claims,
        })
    }

    /// The claims kept on `table` with keys `K`, created on first use.
    fn claims_on<T, K>(&self, table: T) -> Arc<TableClaims<C, T, K>>
    where
        T: ClaimLease + Send + Sync + 'static,
        T::PrimaryKey: Column,
        K: Clone + PartialEq + Send + Sync + 'static,
        C::Backend: KeepsRows<C, T, K>,
    {
        let mut tables = lock(&self.shared.tables);
        let known = tables.iter().find_map(|kept| {
            Arc::clone(&kept.typed)
                .downcast::<TableClaims<C, T, K>>()
                .ok()
        });
        known.unwrap_or_else(|| {
            let claims = Arc::new(TableClaims {
                pool: self.shared.pool.clone(),
                table,
                claims: Mutex::new(Vec::new()),
            });
            tables.push(KeptTable {
                renewing: Arc::clone(&claims) as Arc<dyn Renewing>,
                typed: Arc::clone(&claims) as Arc<dyn Any + Send + Sync>,
            });
            claims
        })
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

    /// How many renewal statements the keeper's rounds have sent: one per table and round,
    /// however many claims and rows it keeps there.
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
        for table in lock(&self.shared.tables).drain(..) {
            table.renewing.release_all();
        }
    }
}

impl<C: R2D2Connection + 'static> Shared<C> {
    /// Renews every kept claim once per round, one statement per table, each round `every`
    /// after the start of the last, until the keeper stops.
    fn run(&self) {
        loop {
            let round_start = monotonic::instant();
            let tables: Vec<Arc<dyn Renewing>> = lock(&self.tables)
                .iter()
                .map(|table| Arc::clone(&table.renewing))
                .collect();
            for table in tables {
                if self.is_stopped() {
                    return;
                }
                if table.renew_round() {
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

/// `duration` in microseconds; a shortest hold was checked to be a lease's length.
fn micros_of(duration: Duration) -> i64 {
    i64::try_from(duration.as_micros()).unwrap_or(i64::MAX)
}

/// The part of a lease a keeper trusts after a renewal it confirmed.
fn trusted_part(settings: KeeperSettings) -> Duration {
    settings.lease.as_duration().saturating_sub(settings.margin)
}

/// `work` on `conn`; when it fails, `conn` is marked broken, so that the pool closes it instead
/// of handing it to the next renewal. After a failed statement it may be a connection the server
/// killed, and r2d2 asks Diesel, which judges a connection broken by its transaction state
/// alone: on MySQL/MariaDB, a pool that does not test connections on checkout would hand the
/// dead one to every renewal after.
fn broken_on_error<C: Connection, R>(
    conn: &mut C,
    work: impl FnOnce(&mut C) -> Result<R, Error>,
) -> Result<R, Error> {
    let done = work(conn);
    if done.is_err() {
        C::TransactionManager::transaction_manager_status_mut(conn).set_in_error();
    }
    done
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
/// # #[cfg(feature = "sqlite")]
/// fn keeps<DB: diesel_lease::KeepsRows<diesel::SqliteConnection, jobs::table, i64>>() {}
/// # fn main() {
/// # #[cfg(feature = "sqlite")]
/// keeps::<diesel::sqlite::Sqlite>();
/// # }
/// ```
pub trait KeepsRows<C, T: ClaimLease, K>: RenewsRows<Renewal<T, K>, KeyAndToken<T>, ReadRenewed<T, K>, C, RenewedRow<K>>
    + ReleasesRows<'static, GuardedUpdate<T, K, Released<T>>, T::PrimaryKey, LockHeldRows<T, K>, C, K>
    + ReleasesRows<
        'static,
        GuardedUpdate<T, K, RenewedAgo<T>>,
        T::PrimaryKey,
        LockHeldRows<T, K>,
        C,
        K,
    > + ReadsClock<C>
{
}

impl<C, T, K, DB> KeepsRows<C, T, K> for DB
where
    T: ClaimLease,
    DB: RenewsRows<Renewal<T, K>, KeyAndToken<T>, ReadRenewed<T, K>, C, RenewedRow<K>>
        + ReleasesRows<
            'static,
            GuardedUpdate<T, K, Released<T>>,
            T::PrimaryKey,
            LockHeldRows<T, K>,
            C,
            K,
        > + ReleasesRows<
            'static,
            GuardedUpdate<T, K, RenewedAgo<T>>,
            T::PrimaryKey,
            LockHeldRows<T, K>,
            C,
            K,
        > + ReadsClock<C>,
{
}

/// A backend whose clock can be read through connections `C`, as [`ClockMicros`]: every backend
/// the library supports.
///
/// ```
/// # include!("../doctest_setup.rs");
/// use diesel::{Connection, QueryResult};
/// use diesel_lease::ReadsClock;
///
/// fn database_time<C: Connection>(conn: &mut C) -> QueryResult<i64>
/// where
///     C::Backend: ReadsClock<C>,
/// {
///     C::Backend::clock_micros(conn)
/// }
///
/// # fn main() -> Result<(), diesel_lease::Error> {
/// # let conn = &mut jobs_connection()?;
/// assert!(database_time(conn)? > 0);
/// # Ok(())
/// # }
/// ```
pub trait ReadsClock<C> {
    /// The database's time now, in microseconds since the Unix epoch.
    fn clock_micros(conn: &mut C) -> QueryResult<i64>;
}

impl<C, DB> ReadsClock<C> for DB
where
    C: Connection<Backend = DB>,
    DB: crate::RecoversFailedReads,
    diesel::dsl::select<ClockMicros>: LoadQuery<'static, C, i64>,
{
    fn clock_micros(conn: &mut C) -> QueryResult<i64> {
        crate::strategy::read_rows(conn, |conn| diesel::select(ClockMicros).get_result(conn))
    }
}

/// The claims a keeper keeps on one table, whatever the table and its key type.
trait Renewing: Send + Sync {
    /// Renews every claim still to renew, in one statement; whether one was sent.
    fn renew_round(&self) -> bool;
    /// Releases every claim, as the keeper stops: it has no one to tell of an error, and the
    /// leases run out on their own.
    fn release_all(&self);
}

/// Releasing one claim of a table's.
trait Releasing<K>: Send + Sync {
    /// Releases what `state` still holds, once; whether this call released. On an error
    /// nothing changed, and the release may be tried again.
    fn release(&self, state: &KeptState<K>) -> Result<bool, Error>;

    /// Releases what `state` still holds as its handle is dropped or its keeper stops, with no
    /// one to hear of an error but operators. It waits for a pool connection no longer than a
    /// renewal interval (after a renewal of the claim in flight, if any), so that a drop never
    /// hangs on an exhausted pool: a lease it could not release is renewed no more, and runs out
    /// on its own.
    fn release_unattended(&self, state: &KeptState<K>);
}

/// The claims kept on one table, seen two ways: to renew them all, and, by their concrete
/// type, to add one more.
struct KeptTable {
    renewing: Arc<dyn Renewing>,
    typed: Arc<dyn Any + Send + Sync>,
}

struct TableClaims<C: R2D2Connection + 'static, T, K> {
    pool: Pool<ConnectionManager<C>>,
    table: T,
    claims: Mutex<Vec<Arc<KeptState<K>>>>,
}

/// What the keeper and the work share of one kept claim.
struct KeptState<K> {
    /// The table's name, for operators.
    table: &'static str,
    claim: Claim,
    settings: KeeperSettings,
    kept_since: Instant,
    /// The end of the shortest hold, by the database's clock in microseconds since the epoch.
    hold_until: Option<i64>,
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
    /// Whether the claim's rows are to be renewed now: not released, not given up, and not past
    /// the longest hold, which ends its renewals here.
    fn to_renew(&self) -> bool {
        let mut inner = lock(&self.inner);
        if !inner.renewing || inner.released.is_some() {
            return false;
        }
        if self.past_longest_hold() {
            inner.renewing = false;
            inner.reason.get_or_insert(LossReason::LongestHold);
            let rows = inner.held.len();
            drop(inner);
            crate::events::lost(self.table, &self.claim, rows, &LossReason::LongestHold);
            return false;
        }
        true
    }

    /// A renewal that ran at `request_start` changed `renewed`, the rows with this claim's
    /// token: those are still held, and the trust runs from the request's start; the rest are
    /// lost.
    fn renewed<T: ClaimLease>(&self, renewed: &[&K], request_start: Instant) {
        let mut inner = lock(&self.inner);
        let (still_held, lost): (Vec<K>, Vec<K>) =
            inner.held.drain(..).partition(|key| renewed.contains(&key));
        if !lost.is_empty() {
            crate::events::lost(self.table, &self.claim, lost.len(), &LossReason::TakenOver);
            inner.lost.extend(lost);
            inner.reason.get_or_insert(LossReason::TakenOver);
        }
        crate::events::renewed::<T>(&self.claim, still_held.len());
        inner.held = still_held;
        inner.trusted_until = request_start + trusted_part(self.settings);
        inner.last_error = None;
    }

    /// A renewal failed with `error`: the trust deadline stays where it was, and once it has
    /// passed, the lease is lost.
    fn unconfirmed(&self, error: &Error) {
        let mut inner = lock(&self.inner);
        inner.last_error = Some(error.to_string());
        if monotonic::instant() >= inner.trusted_until {
            self.give_up_unconfirmed(&mut inner);
        }
    }

    /// Past the trust deadline: the lease is lost for good, and renewals stop, so that a renewal
    /// that gets through later never revives a lease the work may have been told it lost.
    /// Operators hear of it once.
    fn give_up_unconfirmed(&self, inner: &mut Inner<K>) {
        inner.renewing = false;
        inner.reason.get_or_insert(LossReason::Unconfirmed);
        if !inner.unconfirmed_told {
            inner.unconfirmed_told = true;
            crate::events::lost(
                self.table,
                &self.claim,
                inner.held.len(),
                &LossReason::Unconfirmed,
            );
        }
    }

    /// Released, or past its longest hold: nothing left to renew.
    fn is_done(&self) -> bool {
        let inner = lock(&self.inner);
        inner.released.is_some() || !inner.renewing
    }

    /// How much of the shortest hold is left, in microseconds by the database's clock; `None`
    /// when there is none, or it has passed.
    fn hold_left<C>(&self, conn: &mut C) -> Result<Option<i64>, Error>
    where
        C: Connection,
        C::Backend: ReadsClock<C>,
    {
        let Some(hold_until) = self.hold_until else {
            return Ok(None);
        };
        let left = hold_until.saturating_sub(C::Backend::clock_micros(conn)?);
        Ok((left > 0).then_some(left))
    }

    fn past_longest_hold(&self) -> bool {
        self.settings.at_most.is_some_and(|at_most| {
            // A longest hold past what the clock can count never comes.
            self.kept_since
                .checked_add(at_most)
                .is_some_and(|end| monotonic::instant() >= end)
        })
    }

    fn loss(&self) -> Option<LeaseLost<K>> {
        let mut inner = lock(&self.inner);
        let reason = if let Some(reason) = inner.reason {
            reason
        } else if inner.released.is_some() {
            LossReason::Released
        } else if self.past_longest_hold() {
            LossReason::LongestHold
        } else if monotonic::instant() >= inner.trusted_until {
            self.give_up_unconfirmed(&mut inner);
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

impl<C, T, K> TableClaims<C, T, K>
where
    C: R2D2Connection + 'static,
    T: ClaimLease + Send + Sync + 'static,
    T::PrimaryKey: Column,
    K: Clone + PartialEq + Send + Sync + 'static,
    C::Backend: KeepsRows<C, T, K>,
{
    /// One renewal of the rows `claims` still hold, now, in one statement; whether there was
    /// anything to renew, or the error when the renewal could not be made. Each claim's
    /// statement lock is held throughout, so that no release of one crosses it.
    fn renew(&self, claims: &[Arc<KeptState<K>>]) -> Result<bool, Error> {
        let _statements: Vec<MutexGuard<'_, ()>> =
            claims.iter().map(|state| lock(&state.statement)).collect();
        let renewing: Vec<&Arc<KeptState<K>>> =
            claims.iter().filter(|state| state.to_renew()).collect();
        let pairs: Vec<(K, String)> = renewing
            .iter()
            .flat_map(|state| {
                let token = state.claim.token().to_owned();
                let held = lock(&state.inner).held.clone();
                held.into_iter().map(move |key| (key, token.clone()))
            })
            .collect();
        if pairs.is_empty() {
            return Ok(false);
        }
        // The lease runs from the database's clock at the statement; the request's start on
        // ours is no later, so trusting from it can only end the trust sooner.
        let request_start = monotonic::instant();
        let renewed = self.pool.get().map_err(Error::from).and_then(|mut conn| {
            broken_on_error(&mut *conn, |conn| renew_together(self.table, pairs, conn))
        });
        match renewed {
            Ok(rows) => {
                // Sorted by token once, so that each claim looks only at its own rows.
                let mut by_token: HashMap<&str, Vec<&K>> = HashMap::new();
                for (key, token) in &rows {
                    if let Some(token) = token {
                        by_token.entry(token).or_default().push(key);
                    }
                }
                for state in renewing {
                    let renewed = by_token
                        .get(state.claim.token())
                        .map_or(&[][..], Vec::as_slice);
                    state.renewed::<T>(renewed, request_start);
                }
                Ok(true)
            }
            // An error leaves the trust deadline where it was: unreachable means lost in time.
            Err(error) => {
                for state in renewing {
                    state.unconfirmed(&error);
                }
                Err(error)
            }
        }
    }

    /// [`Releasing::release`], waiting for a pool connection as long as the pool's own timeout,
    /// or `wait`.
    fn release_waiting(&self, state: &KeptState<K>, wait: Option<Duration>) -> Result<bool, Error> {
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
            let mut conn = match wait {
                Some(wait) => self.pool.get_timeout(wait)?,
                None => self.pool.get()?,
            };
            broken_on_error(&mut *conn, |conn| match state.hold_left(conn)? {
                // Dated to outlive the lease when the shortest hold ends: a moment later, by
                // the time this statement runs, never sooner.
                Some(left) => {
                    let lease = *Age::from(state.settings.lease).micros();
                    let dated = T::ClaimedAt::default().eq(Ago::micros(lease.saturating_sub(left)));
                    guarded_update(self.table, &state.claim, keys, dated, conn)
                }
                None => guarded_update(self.table, &state.claim, keys, self.table.released(), conn),
            })?
        };
        crate::events::released::<T>(&state.claim, released.len());
        let mut inner = lock(&state.inner);
        inner.renewing = false;
        inner.held.clear();
        inner.released = Some(released);
        Ok(true)
    }
}

impl<C, T, K> Renewing for TableClaims<C, T, K>
where
    C: R2D2Connection + 'static,
    T: ClaimLease + Send + Sync + 'static,
    T::PrimaryKey: Column,
    K: Clone + PartialEq + Send + Sync + 'static,
    C::Backend: KeepsRows<C, T, K>,
{
    fn renew_round(&self) -> bool {
        let claims: Vec<Arc<KeptState<K>>> = {
            let mut claims = lock(&self.claims);
            claims.retain(|state| !state.is_done());
            claims.clone()
        };
        // An error is kept for `check` to report; the trust deadline does the rest.
        self.renew(&claims).unwrap_or(true)
    }

    fn release_all(&self) {
        for state in lock(&self.claims).drain(..) {
            self.release_unattended(&state);
        }
    }
}

impl<C, T, K> Releasing<K> for TableClaims<C, T, K>
where
    C: R2D2Connection + 'static,
    T: ClaimLease + Send + Sync + 'static,
    T::PrimaryKey: Column,
    K: Clone + PartialEq + Send + Sync + 'static,
    C::Backend: KeepsRows<C, T, K>,
{
    fn release(&self, state: &KeptState<K>) -> Result<bool, Error> {
        self.release_waiting(state, None)
    }

    fn release_unattended(&self, state: &KeptState<K>) {
        if let Err(error) = self.release_waiting(state, Some(state.settings.every)) {
            // No handle is left to release it: renewals stop, so that the lease runs out.
            let mut inner = lock(&state.inner);
            inner.renewing = false;
            let rows = inner.held.len();
            drop(inner);
            crate::events::not_released::<T>(&state.claim, rows, &error);
        }
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
    table: Arc<dyn Releasing<K>>,
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
    /// one statement (after a reading of the database's clock, with a shortest hold: before it
    /// has passed, the rows are dated rather than freed); gives back their keys. A release that
    /// ran before (this handle's, or the keeper's when it stopped) releases nothing again. On an error nothing was released, and
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
        if self.table.release(&self.state)? {
            Ok(lock(&self.state.inner).released.clone().unwrap_or_default())
        } else {
            Ok(Vec::new())
        }
    }
}

impl<K> Drop for Kept<K> {
    fn drop(&mut self) {
        self.table.release_unattended(&self.state);
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
    /// the row locked): the lease may have run out by the database's clock. Final: the keeper
    /// stops renewing, and a renewal that gets through later does not make the claim held again.
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
