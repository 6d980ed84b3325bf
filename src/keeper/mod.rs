//! Keeping leases: a thread that renews the rows it keeps, tells the work the moment a lease is
//! lost, and releases them when done.
mod bounded;
mod claims;
mod drained;
mod kept;
mod lost;
mod release;
mod renewal;
mod round;
mod settings;
mod state;
mod stats;

use std::any::Any;
use std::fmt;
use std::sync::{mpsc, Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use diesel::r2d2::{ConnectionManager, Pool, R2D2Connection};

use crate::{monotonic, Error, HeldRows, Lease};
use bounded::finished_within;
pub use claims::Keepable;
use claims::{Renewal, TableClaims, TableKeeping};
pub use drained::{Drained, DrainedTable};
pub use kept::Kept;
pub use lost::{LeaseLost, LossReason};
pub use release::{KeeperRelease, PairRelease};
pub use renewal::{KeeperRenewal, PairRenewal, RenewedRow};
pub use round::{KeeperRound, RoundRenewed};
pub use settings::KeeperSettings;
use state::{lock, ClaimState};
pub use stats::KeeperStats;
use stats::Tally;

/// A thread that keeps leases: it renews every claim handed to it, all the claims it keeps on one
/// table in one statement per round (one per 4,096 rows, past that many), each row guarded by its own claim's token; it notices when
/// a renewal changes fewer rows than are held, and stops trusting a lease it could not renew in
/// time. A row another transaction holds locked is passed over, not waited for (see
/// [`KeeperRound`]), so that it delays no other claim. What it keeps is a [`Kept`] handle, which the work asks
/// [`is_held`](Kept::is_held) or [`check`](Kept::check) as often as it likes.
///
/// The keeper owns a clone of an r2d2 pool and takes a connection for each renewal only; a
/// broken connection is replaced by the pool at the next one. Size the pool for it (or give it a
/// small pool of its own): a renewal that waits for a connection is a renewal that may come too
/// late. Dropping the keeper stops it and releases every claim it still keeps, and dropping a
/// [`Kept`] releases its claim, each on a thread of its own, waited for no longer than
/// [`KeeperSettings::drop_within`] (1 s by default) whatever the number of claims and whatever the
/// server does: a release that takes longer goes on alone, renewals stop at the drop, and rows
/// whose release never lands free by their lease (a release that fails warns operators, `tracing`
/// feature). [`drain`](Self::drain) and [`shutdown`](Self::shutdown) are the releases a caller
/// waits for.
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
/// let batch = jobs::table.claim_batch(10, lease).by(&Claim::new("worker-1")?).run::<Job>(&mut pool.get()?)?;
/// let kept = keeper.keep(batch.held())?;
/// // ... the work, checking before each outside effect:
/// kept.check()?;
/// assert_eq!(kept.release().set(jobs::status.eq("done")).run(&mut pool.get()?)?, [1]);
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
    tally: Arc<Tally>,
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
    /// are [`Error::InvalidSettings`], before any thread starts. A pool whose checkout may wait
    /// as long as the margin or longer (`connection_timeout`, 30 s in r2d2 by default) is warned
    /// of (`tracing` feature): a renewal that waits that long comes too late, and work blocked
    /// that long in a checkout learns of its loss after the lease ran out.
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
        let settings = settings.checked()?;
        let (checkout, margin) = (pool.connection_timeout(), settings.trust_margin());
        if checkout >= margin {
            crate::events::emit_keeper_checkout_too_slow(checkout, margin);
        }
        let shared = Arc::new(Shared {
            pool,
            settings,
            tables: Mutex::new(Vec::new()),
            stopped: Mutex::new(false),
            wake: Condvar::new(),
            tally: Arc::default(),
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

    /// Keeps the rows `held` names, as their claim holds them (what a claim gave back:
    /// `&batch`, `&won`, or `held_rows(..)`), from now until they are released, their lease is
    /// lost, or the keeper stops.
    ///
    /// It renews them once before it returns, so that the lease is trusted from a renewal the
    /// database confirmed, never from the claim's age as the keeper guesses it; a renewal that
    /// fails is the error returned. Keep a table's claims with a keeper of the lease its
    /// claimers use: whoever judges a lease outlived must use the same lease as its holder.
    ///
    /// A claim of no rows (an empty batch, the usual answer when no work is due) is kept as
    /// held: there is nothing to renew, so no statement is sent for it, and nothing to lose, so it
    /// is never reported lost, past a longest hold too; once released it says so, as any claim.
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use diesel_lease::prelude::*;
    /// # use diesel_lease::{Keeper, KeeperSettings};
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let pool = jobs_pool()?;
    /// let lease = Lease::from_secs(30)?;
    /// let keeper = Keeper::start(pool.clone(), KeeperSettings::new(lease))?;
    /// let outcome = jobs::table.claim_row(1, lease).by(&Claim::new("w")?).run::<Job>(&mut pool.get()?)?;
    /// let won = outcome.won().expect("claimable");
    /// let kept = keeper.keep(&won)?;
    /// assert!(kept.is_held());
    /// # Ok(())
    /// # }
    /// ```
    pub fn keep<T: Keepable<C>>(&self, held: impl AsRef<HeldRows<T>>) -> Result<Kept<T>, Error> {
        self.keep_under(held.as_ref(), self.shared.settings)
    }

    /// Keeps the rows `held` names as [`keep`](Self::keep) does, under `settings` of their own:
    /// a longest and a shortest hold, a margin, a drop bound for this claim alone, so that one
    /// keeper keeps claims held differently (a scheduled task's runs, each its own hold). They
    /// are renewed in the keeper's rounds, at its interval. Settings of another lease than the
    /// keeper's, or that its interval cannot keep, are [`Error::InvalidSettings`], before
    /// anything is sent.
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use diesel_lease::prelude::*;
    /// # use std::time::Duration;
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let pool = jobs_pool()?;
    /// let lease = Lease::from_secs(30)?;
    /// let keeper = Keeper::start(pool.clone(), KeeperSettings::new(lease))?;
    /// let won = jobs::table.claim_row(1, lease).by(&Claim::new("w")?).run::<Job>(&mut pool.get()?)?;
    /// let at_most_a_minute = KeeperSettings::new(lease).at_most(Duration::from_secs(60));
    /// let kept = keeper.keep_with(&won.won().expect("free"), at_most_a_minute)?;
    /// assert!(kept.is_held());
    /// let other_lease = KeeperSettings::new(Lease::from_secs(60)?);
    /// assert!(keeper.keep_with(&kept.stop_keeping(), other_lease).is_err(), "another lease");
    /// # Ok(())
    /// # }
    /// ```
    pub fn keep_with<T: Keepable<C>>(
        &self,
        held: impl AsRef<HeldRows<T>>,
        settings: KeeperSettings,
    ) -> Result<Kept<T>, Error> {
        let keepers = self.shared.settings;
        if settings.lease() != keepers.lease() {
            return Err(Error::InvalidSettings(format!(
                "a claim under a lease of {:?} kept by a keeper of {:?}: whoever judges a lease \
                 outlived must use the lease its holder keeps",
                settings.lease().as_duration(),
                keepers.lease().as_duration()
            )));
        }
        let settings = settings.every(keepers.renews_every()).checked()?;
        self.keep_under(held.as_ref(), settings)
    }

    /// Keeps `held` under `settings`, checked.
    fn keep_under<T: Keepable<C>>(
        &self,
        held: &HeldRows<T>,
        settings: KeeperSettings,
    ) -> Result<Kept<T>, Error> {
        let hold_until = match settings.shortest_hold() {
            Some(at_least) => {
                let started = T::database_time(&mut *self.shared.pool.get()?)?;
                Some(started.saturating_add(micros_of(at_least)))
            }
            None => None,
        };
        let table = held.table();
        let state = Arc::new(ClaimState::new(
            crate::events::table_name::<T>(),
            held.claim().clone(),
            held.keys().to_vec(),
            settings,
            hold_until,
            monotonic::instant(),
            Arc::clone(&self.shared.tally),
        ));
        let claims = self.claims_on(table);
        // The first renewal, here and now, of this claim alone: the lease is trusted from its
        // start, and a claim that cannot be renewed at all is the caller's error at once.
        let sent = claims.renew(std::slice::from_ref(&state), Renewal::Waiting)?;
        self.shared.tally.statements_sent(sent);
        lock(&claims.claims).push(Arc::clone(&state));
        Ok(Kept::new(held.clone(), state, claims))
    }

    /// The claims kept on `table`, created on first use.
    fn claims_on<T: Keepable<C>>(&self, table: T) -> Arc<TableClaims<C, T>> {
        let mut tables = lock(&self.shared.tables);
        let known = tables
            .iter()
            .find_map(|kept| Arc::clone(&kept.typed).downcast::<TableClaims<C, T>>().ok());
        known.unwrap_or_else(|| {
            let claims = Arc::new(TableClaims {
                pool: self.shared.pool.clone(),
                table,
                claims: Mutex::new(Vec::new()),
                tally: Arc::clone(&self.shared.tally),
            });
            tables.push(KeptTable {
                renewing: Arc::clone(&claims) as Arc<dyn TableKeeping>,
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
        self.shared.settings.lease()
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
        self.shared.tally.snapshot().rounds
    }

    /// How many renewal statements the keeper has sent: one per table and round, however many
    /// claims it keeps there (one per 4,096 rows, past that many), and each claim's first as it
    /// is kept.
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
        self.shared.tally.snapshot().renewal_statements
    }

    /// What the keeper has done since it started: its rounds and how late they started, the
    /// rows it renewed and lost by reason, its last round's latency and the smallest margin a
    /// kept lease had left before its trust deadline. See [`KeeperStats`].
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let pool = jobs_pool()?;
    /// let lease = Lease::from_secs(30)?;
    /// let keeper = Keeper::start(pool.clone(), KeeperSettings::new(lease))?;
    /// let won = jobs::table.claim_row(1, lease).by(&Claim::new("w")?).run::<Job>(&mut pool.get()?)?;
    /// let _kept = keeper.keep(&won.won().expect("free"))?;
    /// let stats = keeper.stats();
    /// assert_eq!(stats.rows_renewed, 1, "renewed once as it was kept");
    /// assert_eq!(stats.rows_lost(), 0);
    /// println!("keeper: {stats}");
    /// # Ok(())
    /// # }
    /// ```
    pub fn stats(&self) -> KeeperStats {
        self.shared.tally.snapshot()
    }

    /// Releases everything the keeper keeps now, at shutdown: on each table, every claim in one
    /// statement (and 4,096 rows), each row guarded by its own claim's token, and says what it
    /// released. A claim within its [shortest hold](KeeperSettings::at_least) is dated to outlive
    /// it instead, by a statement of its own, as its own release would; so is a claim that names
    /// a row another kept claim names too. Each claim's handle then says it was released.
    ///
    /// The keeper goes on running, with nothing to keep until it is given more. A claim handed
    /// back ([`Kept::stop_keeping`]) is the caller's, and left alone. A table that got no pool
    /// connection keeps its claims kept, as before the drain; one whose release fails has its
    /// claims renewed no more (the release may have committed without its answer arriving), so
    /// that their leases run out unless a release gets through (dropping a handle tries once
    /// more). Either is the error, after the other tables were drained.
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use diesel::prelude::*;
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let pool = jobs_pool()?;
    /// # diesel::sql_query("INSERT INTO jobs (id, status) VALUES (2, 'queued'), (3, 'queued')").execute(&mut pool.get()?)?;
    /// let lease = Lease::from_secs(30)?;
    /// let keeper = Keeper::start(pool.clone(), KeeperSettings::new(lease))?;
    /// let conn = &mut pool.get()?;
    /// let first = keeper.keep(jobs::table.claim_batch(2, lease).by(&Claim::new("w")?).run::<Job>(conn)?)?;
    /// let second = keeper.keep(jobs::table.claim_batch(2, lease).by(&Claim::new("w")?).run::<Job>(conn)?)?;
    ///
    /// // Shutting down: everything back, in one statement.
    /// let drained = keeper.drain()?;
    /// assert_eq!((drained.rows(), drained.tables[0].claims, drained.tables[0].statements), (3, 2, 1));
    /// println!("released at shutdown: {drained}");
    /// assert!(!first.is_held() && !second.is_held());
    /// assert!(jobs::table.holders(lease).run(conn)?.is_empty());
    /// # Ok(())
    /// # }
    /// ```
    pub fn drain(&self) -> Result<Drained, Error> {
        self.shared.drain()
    }

    /// Stops the keeper, waiting at most `within`: a [`drain`](Self::drain) of everything it
    /// keeps, once its thread has ended, then a release of what the drain left (a table that got
    /// no connection), each claim alone. What the drain released, or its error; past `within`,
    /// [`Error::StopTimedOut`], and the rest goes on alone on a thread of its own (the claims are
    /// renewed no more, so rows it never frees free by their lease). Dropping the keeper does the
    /// same, without the drain's answer, within [`KeeperSettings::drop_within`].
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use diesel_lease::prelude::*;
    /// # use std::time::Duration;
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let pool = jobs_pool()?;
    /// let lease = Lease::from_secs(30)?;
    /// let keeper = Keeper::start(pool.clone(), KeeperSettings::new(lease))?;
    /// let kept = keeper.keep(jobs::table.claim_batch(10, lease).by(&Claim::new("w")?).run::<Job>(&mut pool.get()?)?)?;
    /// let drained = keeper.shutdown(Duration::from_secs(5))?;
    /// assert_eq!(drained.rows(), 1);
    /// assert!(!kept.is_held());
    /// # Ok(())
    /// # }
    /// ```
    pub fn shutdown(mut self, within: Duration) -> Result<Drained, Error> {
        let (answer, drained) = mpsc::sync_channel(1);
        self.stop(within, move |shared| {
            // The waiter may have gone: what the drain did is in the claims' handles.
            let _ = answer.send(shared.drain());
            shared.release_all();
        });
        drained
            .try_recv()
            .unwrap_or(Err(Error::StopTimedOut(within)))
    }

    /// Stops the thread, then runs `last` on what is left and tells operators the keeper
    /// stopped, all on a thread of its own waited for at most `within`.
    fn stop(&mut self, within: Duration, last: impl FnOnce(&Shared<C>) + Send + 'static) {
        *lock(&self.shared.stopped) = true;
        self.shared.wake.notify_all();
        let Some(thread) = self.thread.take() else {
            return;
        };
        let shared = Arc::clone(&self.shared);
        finished_within("diesel-lease keeper stop", within, move || {
            // A renewal thread that panicked has nothing left to stop.
            let _ = thread.join();
            last(&shared);
            crate::events::emit_keeper_stopped(&shared.tally.snapshot());
        });
    }
}

impl<C: R2D2Connection + 'static> Drop for Keeper<C> {
    fn drop(&mut self) {
        let within = self.shared.settings.drops_within();
        self.stop(within, Shared::release_all);
    }
}

impl<C: R2D2Connection + 'static> Shared<C> {
    /// Renews every kept claim once per round, one statement per table (and 4,096 rows), each round `every`
    /// after the start of the last, until the keeper stops.
    fn run(&self) {
        let mut due = monotonic::instant();
        loop {
            let round_start = monotonic::instant();
            self.tally
                .round_started(due, round_start, self.settings.renews_every());
            let mut sent = 0;
            for table in self.tables() {
                if self.is_stopped() {
                    return;
                }
                sent += table.renew_round();
            }
            self.tally
                .round_ended(round_start, monotonic::instant(), sent);
            if sent > 0 {
                crate::events::emit_keeper_round(&self.tally.snapshot());
            }
            due = round_start + self.settings.renews_every();
            let next = due;
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

    /// Releases everything kept now, all at once where it can: see [`Keeper::drain`].
    fn drain(&self) -> Result<Drained, Error> {
        let mut drained = Drained::default();
        let mut failed = None;
        for table in self.tables() {
            match table.drain() {
                Ok(table) => drained.tables.push(table),
                Err(error) => {
                    failed.get_or_insert(error);
                }
            }
        }
        failed.map_or(Ok(drained), Err)
    }

    /// Releases every claim still kept, each alone, as the keeper stops: no one is left to hear
    /// of an error but operators, and the leases run out on their own.
    fn release_all(&self) {
        for table in lock(&self.tables).drain(..) {
            table.renewing.release_all();
        }
    }

    /// The tables with claims kept.
    fn tables(&self) -> Vec<Arc<dyn TableKeeping>> {
        lock(&self.tables)
            .iter()
            .map(|table| Arc::clone(&table.renewing))
            .collect()
    }

    fn is_stopped(&self) -> bool {
        *lock(&self.stopped)
    }
}

/// `duration` in microseconds; a shortest hold was checked to be a lease's length.
fn micros_of(duration: Duration) -> i64 {
    i64::try_from(duration.as_micros()).unwrap_or(i64::MAX)
}

/// The claims kept on one table, seen two ways: to renew them all, and, by their concrete
/// type, to add one more.
struct KeptTable {
    renewing: Arc<dyn TableKeeping>,
    typed: Arc<dyn Any + Send + Sync>,
}
