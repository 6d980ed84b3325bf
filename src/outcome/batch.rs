//! The rows a batch claim won, and the claim that holds them all.
use crate::query::HeldRows;
use crate::{Claim, ClaimLease, Fenced};

/// The rows a batch claim won, with their keys and the claim that holds them all: the handle of
/// their holder, which renews, writes to and releases them together, each statement guarded by
/// the claim's token.
///
/// ```
/// # include!("../doctest_setup.rs");
/// # use diesel::prelude::*;
/// # use diesel_lease::prelude::*;
/// # fn main() -> Result<(), diesel_lease::Error> {
/// # let conn = &mut jobs_connection()?;
/// let worker = Claim::new("worker-1")?;
/// let batch = jobs::table.claim_batch(10, Lease::from_secs(30)?).by(&worker).run::<Job>(conn)?;
/// assert!(batch.rows().iter().all(|job| job.claim_token.as_deref() == Some(worker.token())));
/// let done = batch.release().set(jobs::status.eq("done")).run(conn)?;
/// assert_eq!(done, batch.keys());
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, PartialEq)]
#[must_use = "the rows of a batch are held until their lease runs out or they are released"]
pub struct Batch<R, T: ClaimLease> {
    rows: Vec<R>,
    fences: Vec<Option<i64>>,
    held: HeldRows<T>,
}

/// The rows as their claim holds them, for what takes any holder (`keeper.keep(&batch)`).
///
/// ```
/// # include!("../doctest_setup.rs");
/// # use diesel_lease::prelude::*;
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let pool = jobs_pool()?;
/// let lease = Lease::from_secs(30)?;
/// let keeper = Keeper::start(pool.clone(), KeeperSettings::new(lease))?;
/// let batch = jobs::table.claim_batch(10, lease).by(&Claim::new("w")?).run::<Job>(&mut pool.get()?)?;
/// let kept = keeper.keep(&batch)?;
/// assert_eq!(kept.held().keys(), batch.keys());
/// # Ok(())
/// # }
/// ```
impl<R, T: ClaimLease> AsRef<HeldRows<T>> for Batch<R, T> {
    fn as_ref(&self) -> &HeldRows<T> {
        &self.held
    }
}

impl<R, T: ClaimLease> Batch<R, T> {
    pub(crate) fn new(table: T, claim: Claim, won: Vec<(R, T::Key, Option<i64>)>) -> Self {
        let mut rows = Vec::with_capacity(won.len());
        let mut keys = Vec::with_capacity(won.len());
        let mut fences = Vec::with_capacity(won.len());
        for (row, key, fence) in won {
            rows.push(row);
            keys.push(key);
            fences.push(fence);
        }
        Self {
            rows,
            fences,
            held: HeldRows::new(table, claim, keys),
        }
    }

    /// The rows won, as the claim left them, in no particular order.
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let batch = jobs::table.claim_batch(10, Lease::from_secs(30)?).by(&Claim::new("w")?).run::<Job>(conn)?;
    /// assert_eq!(batch.rows().len(), 1);
    /// # Ok(())
    /// # }
    /// ```
    pub fn rows(&self) -> &[R] {
        &self.rows
    }

    /// The rows' primary keys, in the order of [`rows`](Self::rows).
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let batch = jobs::table.claim_batch(10, Lease::from_secs(30)?).by(&Claim::new("w")?).run::<Job>(conn)?;
    /// assert_eq!(batch.keys(), [1]);
    /// # Ok(())
    /// # }
    /// ```
    pub fn keys(&self) -> &[T::Key] {
        self.held.keys()
    }

    /// Each row's fence after this take, in the order of [`rows`](Self::rows): only a table
    /// with a fence column has them.
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let batch = fenced_jobs::table.claim_batch(10, Lease::from_secs(30)?).by(&Claim::new("w")?).returning(fenced_jobs::id).run::<i64>(conn)?;
    /// assert_eq!(batch.fences(), [1]);
    /// # Ok(())
    /// # }
    /// ```
    pub fn fences(&self) -> Vec<i64>
    where
        T: Fenced,
    {
        // A fenced table's claim reads its fence, a NOT NULL column.
        self.fences
            .iter()
            .map(|fence| fence.unwrap_or_default())
            .collect()
    }

    /// The claim that holds every row of the batch.
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let worker = Claim::new("w")?;
    /// let batch = jobs::table.claim_batch(10, Lease::from_secs(30)?).by(&worker).run::<Job>(conn)?;
    /// assert_eq!(batch.claim(), &worker);
    /// # Ok(())
    /// # }
    /// ```
    pub fn claim(&self) -> &Claim {
        self.held.claim()
    }

    /// How many rows were won.
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let batch = jobs::table.claim_batch(10, Lease::from_secs(30)?).by(&Claim::new("w")?).run::<Job>(conn)?;
    /// assert_eq!(batch.len(), 1);
    /// # Ok(())
    /// # }
    /// ```
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Whether no row was won.
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let batch = jobs::table.claim_batch(10, Lease::from_secs(30)?).by(&Claim::new("w")?).run::<Job>(conn)?;
    /// assert!(!batch.is_empty());
    /// # Ok(())
    /// # }
    /// ```
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The rows, and the rows as their claim holds them: what a [`Keeper`](crate::Keeper)
    /// keeps.
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let batch = jobs::table.claim_batch(10, Lease::from_secs(30)?).by(&Claim::new("w")?).run::<Job>(conn)?;
    /// let (jobs, held) = batch.into_parts();
    /// assert_eq!(jobs[0].claim_token.as_deref(), Some(held.claim().token()));
    /// # Ok(())
    /// # }
    /// ```
    pub fn into_parts(self) -> (Vec<R>, HeldRows<T>) {
        (self.rows, self.held)
    }
}
