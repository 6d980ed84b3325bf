//! A bounded wait for a lease: a claim tried again until it wins or the wait ends, sleeping
//! between attempts as long as the refusal's own reading says is worth it, by the database's clock.
use std::time::Duration;

use diesel::connection::Connection;

use crate::backend::NativeLeaseQuery;
use crate::query::check_out::{CheckOut, CheckedOut, Held, Lend};
use crate::query::wait_schedule::{Jitter, Next, Schedule, BATCH_RECHECK, SHORTEST_RECHECK};
use crate::query::{ClaimBatch, ClaimRow, LeaseQuery, LeaseStatement, RunLeaseDsl};
use crate::{monotonic, Batch, ClaimLease, Claimed, Error};

/// A claim that waits, up to a bound, for what it claims: built by
/// [`ClaimRow::waiting`] or [`ClaimBatch::waiting`], run on a pool by
/// `.run_on(&pool)` or on a connection by `.run(conn)`, either giving back what
/// the claim gives back.
///
/// Each attempt is the claim itself, one statement as without a wait, so whether it won is read
/// from that statement, by the database's clock. Between attempts the wait sleeps holding no
/// transaction and no lock; run on a pool, it holds no connection either. The process's
/// monotonic clock only times how long the caller waits.
///
/// * **A row** ([`ClaimRow::waiting`]): each refused attempt reads why, as any refused claim of
///   a row does (one read, [`Refused::why`](crate::Refused::why)). Held: it sleeps until the holder's lease frees by
///   that reading, and 10 to 20 ms more, but never longer than the recheck interval (a third of
///   the claim's lease by default, [`rechecking_every`](Self::rechecking_every)), and three
///   quarters of it at least; then it claims again. So a holder that releases early is noticed
///   within the recheck interval, and a row held throughout costs 2 statements (the claim and the
///   read) per recheck. A row freed since its refusal is tried again after 15 to 20 ms, doubling. No such row, or a row the
///   claim's own filter does not take, ends the wait at once (2 statements): waiting cannot
///   help. The read evaluates the claim's filter, so a holder's release that lands between
///   the claim and the read is told from a row the filter refuses: read free, it is tried
///   again. The attempt at the deadline is the last, and its outcome is given back, a refusal
///   with its reading ([`Refused::why`](crate::Refused::why)).
/// * **A batch** ([`ClaimBatch::waiting`]): a batch that comes back empty backs off: 15 to 20 ms,
///   then each pause twice the step before, up to the recheck interval (1 s by default), each
///   jittered downward (three quarters of its step to all of it), so that work that comes while
///   it sleeps is claimed within the interval. It gives back the first batch that is not empty,
///   or the empty batch of the attempt at the deadline. An empty attempt is one statement on
///   every backend (on MySQL/MariaDB, its read of candidates alone).
///
/// How many statements a wait sends at most, and why it polls rather than `LISTEN`s, are in
/// [docs/operations.md](https://github.com/diesel-lease/diesel-lease/blob/main/docs/operations.md#what-a-wait-costs-in-statements).
///
/// **What a wait holds.** Run on a pool (`.run_on(&pool)`, any [`CheckOut`]), each
/// attempt checks a connection out and gives it back before the wait sleeps: ten waiters on a
/// pool of ten leave it to the keeper and to the rest between their statements. Run by
/// `.run(conn)`, the wait holds `conn` across its sleeps, idle: for a connection of the
/// caller's own, never one checked out of a pool that others share. Inside a transaction of the
/// caller's, either is refused with [`Error::WaitInTransaction`] before anything is sent; a
/// wait of zero, or past what the clock can count, and an interval under 1 ms are
/// [`Error::InvalidWait`], before anything is sent too. A database error, or a pool that gives
/// no connection, ends the wait with the error.
///
/// ```
/// # include!("../doctest_setup.rs");
/// use std::time::Duration;
/// use diesel::prelude::*;
/// use diesel_lease::prelude::*;
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let pool = jobs_pool()?;
/// let lease = Lease::from_secs(30)?;
/// let holder = jobs::table.claim_row(1, lease).by(&Claim::new("worker-1")?).run::<Job>(&mut pool.get()?)?;
/// let won = holder.won().expect("free");
///
/// // Another worker waits for job 1, rechecking every 50 ms, on connections of the pool that
/// // it gives back between attempts.
/// let waiter = std::thread::spawn({
///     let pool = pool.clone();
///     move || -> Result<bool, diesel_lease::Error> {
///         let claimed = jobs::table
///             .claim_row(1, lease)
///             .by(&Claim::new("worker-2")?)
///             .set(jobs::status.eq("running"))
///             .waiting(Duration::from_secs(20))
///             .rechecking_every(Duration::from_millis(50))
///             .run_on::<Job, _>(&pool)?;
///         Ok(claimed.is_won())
///     }
/// });
/// // The holder finishes early: the waiter wins within the recheck interval.
/// assert!(won.release().run(&mut pool.get()?)?);
/// assert!(waiter.join().expect("the waiter ran")?);
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
#[must_use = "a wait does nothing until it is run"]
pub struct Waiting<Q> {
    statement: Q,
    up_to: Duration,
    recheck: Option<Duration>,
}

impl<Q> Waiting<Q> {
    pub(crate) fn new(statement: Q, up_to: Duration) -> Self {
        Self {
            statement,
            up_to,
            recheck: None,
        }
    }

    /// The longest pause between two attempts, and so how late a release (a row's wait) or new
    /// work (a batch's) is noticed, at most: a third of the claim's lease by default for a row,
    /// 1 s for a batch. Each pause is between three quarters of it and all of it, unless a
    /// shorter one is worth it (the holder's lease frees sooner; the backoff has not reached
    /// it). Under 1 ms it is [`Error::InvalidWait`], before anything is sent.
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use std::time::Duration;
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let batch = jobs::table
    ///     .claim_batch(10, Lease::from_secs(30)?)
    ///     .by(&Claim::new("worker-1")?)
    ///     .waiting(Duration::from_secs(5))
    ///     .rechecking_every(Duration::from_millis(200))
    ///     .run::<Job>(conn)?;
    /// assert_eq!(batch.keys(), [1], "work was there: no wait");
    ///
    /// let busy = jobs::table
    ///     .claim_batch(10, Lease::from_secs(30)?)
    ///     .by(&Claim::new("worker-1")?)
    ///     .waiting(Duration::from_secs(5))
    ///     .rechecking_every(Duration::ZERO)
    ///     .run::<Job>(conn);
    /// assert!(matches!(busy, Err(diesel_lease::Error::InvalidWait(_))));
    /// # Ok(())
    /// # }
    /// ```
    pub fn rechecking_every(self, interval: Duration) -> Self {
        Self {
            recheck: Some(interval),
            ..self
        }
    }

    /// The wait's schedule, starting now; refused, before anything is sent, on bad input.
    fn schedule(&self, recheck: Duration) -> Result<Schedule, Error> {
        if self.up_to.is_zero() {
            return Err(Error::InvalidWait(
                "a wait of zero: run the claim without `.waiting(..)`".into(),
            ));
        }
        if recheck < SHORTEST_RECHECK {
            return Err(Error::InvalidWait(format!(
                "a recheck interval of {recheck:?}, under the shortest, {SHORTEST_RECHECK:?}"
            )));
        }
        Schedule::new(monotonic::instant(), self.up_to, recheck).ok_or_else(|| {
            Error::InvalidWait(format!(
                "a wait of {:?} ends past what the clock can count",
                self.up_to
            ))
        })
    }
}

impl<T: ClaimLease, F, Changes, Selection, By> ClaimRow<T, F, Changes, Selection, By> {
    /// Waits up to `up_to` for the row: on a refusal, sleeps until the holder's lease frees by
    /// the refusal's own reading (or the recheck interval, a third of the lease by default,
    /// passes: a holder may release early), and claims again; gives back the claim that won, or
    /// the last refusal, with its reading ([`Refused::why`](crate::Refused::why)), once
    /// `up_to` has passed. No such row, or a row the claim's own filter does not take, is given
    /// back at once. See [`Waiting`] for the schedule and what it costs in statements.
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use std::time::Duration;
    /// # use diesel::prelude::*;
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let lease = Lease::from_secs(30)?;
    /// let _holder = jobs::table.claim_row(1, lease).by(&Claim::new("worker-1")?).run::<Job>(conn)?;
    /// let outcome = jobs::table
    ///     .claim_row(1, lease)
    ///     .by(&Claim::new("worker-2")?)
    ///     .filter(jobs::status.eq("queued"))
    ///     .waiting(Duration::from_millis(100))
    ///     .run::<Job>(conn)?;
    /// let Claimed::Refused(refused) = outcome else { panic!("held for 30 s") };
    /// assert!(matches!(refused.why(), Refusal::Held(holder) if holder.owner == "worker-1"));
    /// # Ok(())
    /// # }
    /// ```
    pub fn waiting(self, up_to: Duration) -> Waiting<Self> {
        Waiting::new(self, up_to)
    }
}

impl<T: ClaimLease, F, O, Changes, Selection, By> ClaimBatch<T, F, O, Changes, Selection, By> {
    /// Waits up to `up_to` for work: a batch that comes back empty backs off (15 to 20 ms at
    /// first, doubling up to the recheck interval, 1 s by default, each pause jittered
    /// downward) and claims again; gives back the first batch that is not empty, or an empty
    /// one once `up_to` has passed. Work that comes while it sleeps is claimed within the
    /// recheck interval. See [`Waiting`] for the schedule and what it costs in statements.
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use std::time::Duration;
    /// # use diesel::prelude::*;
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let next = || -> Result<_, diesel_lease::Error> {
    ///     Ok(jobs::table
    ///         .claim_batch(10, Lease::from_secs(30)?)
    ///         .by(&Claim::new("worker-1")?)
    ///         .filter(jobs::status.eq("queued"))
    ///         .set(jobs::status.eq("running"))
    ///         .waiting(Duration::from_millis(200)))
    /// };
    /// assert_eq!(next()?.run::<Job>(conn)?.keys(), [1], "work was there: no wait");
    /// assert!(next()?.run::<Job>(conn)?.is_empty(), "no work came within 200 ms");
    /// # Ok(())
    /// # }
    /// ```
    pub fn waiting(self, up_to: Duration) -> Waiting<Self> {
        Waiting::new(self, up_to)
    }
}

impl<Q: LeaseStatement<U>, U> LeaseStatement<U> for Waiting<Q> {
    type Output = Q::Output;
}

impl<T: ClaimLease, F, Changes, Selection, By> Waiting<ClaimRow<T, F, Changes, Selection, By>> {
    /// Runs the wait on `pool`: each attempt checks a connection out (the claim, and refused,
    /// the read of why), and gives it back before the wait sleeps, so that a waiter holds a
    /// connection only while a statement of its own runs. Besides, as
    /// [`run`](crate::RunLeaseDsl::run): what the claim gives back, bad input refused before
    /// anything is sent, a database error or a pool that gives no connection (r2d2: within its
    /// `connection_timeout`) ending the wait with the error.
    ///
    /// Code generic over the pool bounds the claim itself, as it would to run it once: a wait
    /// runs nothing but the claim.
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// use std::time::Duration;
    /// use diesel_lease::prelude::*;
    /// use diesel_lease::CheckOut;
    ///
    /// /// The claim of job `id`, named by `auto_type` after this function.
    /// #[diesel::dsl::auto_type(dsl_path = "diesel_lease::dsl")]
    /// fn job<'a>(id: i64, lease: Lease, worker: &'a Claim) -> _ {
    ///     jobs::table.claim_row(id, lease).by(worker)
    /// }
    ///
    /// /// Waits up to a second for job `id`, on connections of `pool`, one for each attempt.
    /// fn wait_for_job<P: CheckOut>(pool: &P, id: i64, worker: &Claim) -> Result<bool, diesel_lease::Error>
    /// where
    ///     for<'a, 'q> job<'a>: LeaseQuery<'q, P::Connection, Job>,
    /// {
    ///     let claimed = job(id, Lease::from_secs(30)?, worker).waiting(Duration::from_secs(1)).run_on(pool)?;
    ///     Ok(claimed.is_won())
    /// }
    ///
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let pool = jobs_pool()?;
    /// assert!(wait_for_job(&pool, 1, &Claim::new("worker-1")?)?, "job 1 was free");
    /// # Ok(())
    /// # }
    /// ```
    pub fn run_on<'q, U, P>(self, pool: &P) -> Result<Claimed<U, T>, Error>
    where
        P: CheckOut,
        // The claim's own bound, which code generic over the pool writes; the rest holds for
        // every claim of a row.
        ClaimRow<T, F, Changes, Selection, By>:
            LeaseQuery<'q, P::Connection, U> + LeaseStatement<U, Output = Claimed<U, T>> + Clone,
    {
        self.wait_for_row(&mut CheckedOut(pool))
    }

    /// The wait for a row, each attempt on a connection `lender` lends.
    fn wait_for_row<'q, U, C, L>(self, lender: &mut L) -> Result<Claimed<U, T>, Error>
    where
        L: Lend<C>,
        ClaimRow<T, F, Changes, Selection, By>:
            LeaseQuery<'q, C, U> + LeaseStatement<U, Output = Claimed<U, T>> + Clone,
    {
        let recheck = self
            .recheck
            .unwrap_or_else(|| (self.statement.lease().as_duration() / 3).max(SHORTEST_RECHECK));
        let mut schedule = self.schedule(recheck)?;
        lender.ready()?;
        let mut jitter = Jitter::new();
        loop {
            // The claim, and refused, its read of why, on one connection given back before the
            // wait sleeps.
            let refused = match lender.lend(|conn| self.statement.clone().run_lease(conn))? {
                Claimed::Refused(refused) => refused,
                won => return Ok(won),
            };
            match schedule.after_refusal(refused.why(), monotonic::instant(), jitter.roll()) {
                Next::After(pause) => std::thread::sleep(pause),
                Next::Done => return Ok(Claimed::Refused(refused)),
            }
        }
    }
}

impl<T: ClaimLease, F, O, Changes, Selection, By>
    Waiting<ClaimBatch<T, F, O, Changes, Selection, By>>
{
    /// Runs the wait on `pool`, each attempt on a connection checked out for it alone and given
    /// back before the wait sleeps: as a row's wait does,
    /// giving back a batch.
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use std::time::Duration;
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let pool = jobs_pool()?;
    /// let batch = jobs::table
    ///     .claim_batch(10, Lease::from_secs(30)?)
    ///     .by(&Claim::new("worker-1")?)
    ///     .waiting(Duration::from_secs(20))
    ///     .run_on::<Job, _>(&pool)?;
    /// assert_eq!(batch.keys(), [1], "work was there: no wait");
    /// # Ok(())
    /// # }
    /// ```
    pub fn run_on<'q, U, P>(self, pool: &P) -> Result<Batch<U, T>, Error>
    where
        P: CheckOut,
        // The claim's own bound, as for a row's wait.
        ClaimBatch<T, F, O, Changes, Selection, By>:
            LeaseQuery<'q, P::Connection, U> + LeaseStatement<U, Output = Batch<U, T>> + Clone,
    {
        self.wait_for_batch(&mut CheckedOut(pool))
    }

    /// The wait for a batch, each attempt on a connection `lender` lends.
    fn wait_for_batch<'q, U, C, L>(self, lender: &mut L) -> Result<Batch<U, T>, Error>
    where
        L: Lend<C>,
        ClaimBatch<T, F, O, Changes, Selection, By>:
            LeaseQuery<'q, C, U> + LeaseStatement<U, Output = Batch<U, T>> + Clone,
    {
        let mut schedule = self.schedule(self.recheck.unwrap_or(BATCH_RECHECK))?;
        lender.ready()?;
        let mut jitter = Jitter::new();
        loop {
            let batch = lender.lend(|conn| self.statement.clone().run_lease(conn))?;
            if !batch.is_empty() {
                return Ok(batch);
            }
            match schedule.after_empty(monotonic::instant(), jitter.roll()) {
                Next::After(pause) => std::thread::sleep(pause),
                Next::Done => return Ok(batch),
            }
        }
    }
}

impl<'q, T, F, Changes, Selection, By, U, C> NativeLeaseQuery<'q, C, U>
    for Waiting<ClaimRow<T, F, Changes, Selection, By>>
where
    T: ClaimLease,
    C: Connection,
    ClaimRow<T, F, Changes, Selection, By>:
        LeaseQuery<'q, C, U> + LeaseStatement<U, Output = Claimed<U, T>> + Clone,
{
    fn run_native(self, conn: &mut C) -> Result<Claimed<U, T>, Error> {
        self.wait_for_row(&mut Held(conn))
    }
}

impl<'q, T, F, O, Changes, Selection, By, U, C> NativeLeaseQuery<'q, C, U>
    for Waiting<ClaimBatch<T, F, O, Changes, Selection, By>>
where
    T: ClaimLease,
    C: Connection,
    ClaimBatch<T, F, O, Changes, Selection, By>:
        LeaseQuery<'q, C, U> + LeaseStatement<U, Output = Batch<U, T>> + Clone,
{
    fn run_native(self, conn: &mut C) -> Result<Batch<U, T>, Error> {
        self.wait_for_batch(&mut Held(conn))
    }
}

impl<Q, C> RunLeaseDsl<C> for Waiting<Q> {}
