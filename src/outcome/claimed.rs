//! What a claim of one row came to: won, with the row and the claim, or refused.
use crate::outcome::Refused;
use crate::query::HeldRows;
use crate::{Claim, ClaimLease, Fenced};

/// What a claim of one row came to: [`Won`], with the row and the claim, or [`Refused`].
///
/// ```
/// # include!("../doctest_setup.rs");
/// # use diesel::prelude::*;
/// # use diesel_lease::prelude::*;
/// # fn main() -> Result<(), diesel_lease::Error> {
/// # let conn = &mut jobs_connection()?;
/// let worker = Claim::new("worker-1")?;
/// match jobs::table.claim_row(1, Lease::from_secs(30)?).by(&worker).run::<Job>(conn)? {
///     Claimed::Won(won) => assert_eq!(won.row().owner.as_deref(), Some("worker-1")),
///     Claimed::Refused(refused) => panic!("{}", refused.why()),
/// }
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
#[must_use = "a claim that won holds a row until its lease runs out or it is released"]
pub enum Claimed<R, T: ClaimLease> {
    /// The claim won the row.
    Won(Won<R, T>),
    /// The claim took nothing: the row is missing, held, or not claimable by the caller's filter.
    Refused(Refused<T>),
}

impl<R, T: ClaimLease> Claimed<R, T> {
    /// Whether the claim won.
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let outcome = jobs::table.claim_row(9, Lease::from_secs(30)?).by(&Claim::new("w")?).run::<Job>(conn)?;
    /// assert!(!outcome.is_won(), "there is no job 9");
    /// # Ok(())
    /// # }
    /// ```
    pub fn is_won(&self) -> bool {
        matches!(self, Claimed::Won(_))
    }

    /// The win, if the claim won.
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let outcome = jobs::table.claim_row(1, Lease::from_secs(30)?).by(&Claim::new("w")?).run::<Job>(conn)?;
    /// assert_eq!(outcome.won().map(|won| won.into_row().id), Some(1));
    /// # Ok(())
    /// # }
    /// ```
    pub fn won(self) -> Option<Won<R, T>> {
        match self {
            Claimed::Won(won) => Some(won),
            Claimed::Refused(_) => None,
        }
    }
}

/// A row won by a claim, with the claim that holds it: the handle of its holder, which renews,
/// writes to and releases the row, each guarded by the claim's token.
///
/// ```
/// # include!("../doctest_setup.rs");
/// # use diesel::prelude::*;
/// # use diesel_lease::prelude::*;
/// # fn main() -> Result<(), diesel_lease::Error> {
/// # let conn = &mut jobs_connection()?;
/// let outcome = jobs::table.claim_row(1, Lease::from_secs(30)?).by(&Claim::new("w")?).run::<Job>(conn)?;
/// let won = outcome.won().expect("claimable");
/// assert!(won.renew().run(conn)?, "still ours");
/// assert!(won.release().set(jobs::status.eq("done")).run(conn)?);
/// assert!(!won.renew().run(conn)?, "released: a holder's write lands no more");
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Won<R, T: ClaimLease> {
    row: R,
    key: T::Key,
    held: HeldRows<T>,
    fence: Option<i64>,
}

/// The row as its claim holds it, for what takes any holder (`keeper.keep(&won)`).
///
/// ```
/// # include!("../doctest_setup.rs");
/// # use diesel_lease::prelude::*;
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let pool = jobs_pool()?;
/// let lease = Lease::from_secs(30)?;
/// let keeper = Keeper::start(pool.clone(), KeeperSettings::new(lease))?;
/// let outcome = jobs::table.claim_row(1, lease).by(&Claim::new("w")?).run::<Job>(&mut pool.get()?)?;
/// let won = outcome.won().expect("free");
/// let kept = keeper.keep(&won)?;
/// assert_eq!(kept.held().keys(), [1]);
/// # Ok(())
/// # }
/// ```
impl<R, T: ClaimLease> AsRef<HeldRows<T>> for Won<R, T> {
    fn as_ref(&self) -> &HeldRows<T> {
        &self.held
    }
}

impl<R, T: ClaimLease> Won<R, T> {
    pub(crate) fn new(row: R, table: T, key: T::Key, claim: Claim, fence: Option<i64>) -> Self {
        Self {
            row,
            held: HeldRows::new(table, claim, vec![key.clone()]),
            key,
            fence,
        }
    }

    /// The row as the claim left it (or the selection asked for).
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let outcome = jobs::table.claim_row(1, Lease::from_secs(30)?).by(&Claim::new("w")?).run::<Job>(conn)?;
    /// assert_eq!(outcome.won().expect("won").row().owner.as_deref(), Some("w"));
    /// # Ok(())
    /// # }
    /// ```
    pub fn row(&self) -> &R {
        &self.row
    }

    /// The row's primary key.
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let outcome = jobs::table.claim_row(1, Lease::from_secs(30)?).by(&Claim::new("w")?).run::<Job>(conn)?;
    /// assert_eq!(outcome.won().expect("won").key(), &1);
    /// # Ok(())
    /// # }
    /// ```
    pub fn key(&self) -> &T::Key {
        &self.key
    }

    /// The claim that holds the row.
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let outcome = jobs::table.claim_row(1, Lease::from_secs(30)?).by(&Claim::new("w")?).run::<Job>(conn)?;
    /// assert_eq!(outcome.won().expect("won").claim().owner(), "w");
    /// # Ok(())
    /// # }
    /// ```
    pub fn claim(&self) -> &Claim {
        self.held.claim()
    }

    /// The row's fence after this take: higher than every earlier holder's. Hand it to outside
    /// resources with each write; see the [guide's chapter on fences](crate::guide::ch04_fences). Only a table with a fence column
    /// has one.
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let outcome = fenced_jobs::table.claim_row(1, Lease::from_secs(30)?).by(&Claim::new("w")?).returning(fenced_jobs::id).run::<i64>(conn)?;
    /// assert_eq!(outcome.won().expect("won").fence(), 1, "the first take");
    /// # Ok(())
    /// # }
    /// ```
    pub fn fence(&self) -> i64
    where
        T: Fenced,
    {
        // A fenced table's claim reads its fence, a NOT NULL column.
        self.fence.unwrap_or_default()
    }

    /// The row, leaving the claim.
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let outcome = jobs::table.claim_row(1, Lease::from_secs(30)?).by(&Claim::new("w")?).run::<Job>(conn)?;
    /// let job: Job = outcome.won().expect("won").into_row();
    /// # let _ = job;
    /// # Ok(())
    /// # }
    /// ```
    pub fn into_row(self) -> R {
        self.row
    }

    /// The row, and the row as its claim holds it: what a [`Keeper`](crate::Keeper) keeps.
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let outcome = jobs::table.claim_row(1, Lease::from_secs(30)?).by(&Claim::new("w")?).run::<Job>(conn)?;
    /// let (job, held) = outcome.won().expect("won").into_parts();
    /// assert_eq!(job.claim_token.as_deref(), Some(held.claim().token()));
    /// # Ok(())
    /// # }
    /// ```
    pub fn into_parts(self) -> (R, HeldRows<T>) {
        (self.row, self.held)
    }
}
