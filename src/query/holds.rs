//! A holder's verbs, written once: whatever holds rows under a claim renews, writes to and
//! releases them through the same three statements.
use crate::query::{Answer, Guarded, HeldRows, IncompleteWrite, Releasing, Renewing};
use crate::sql::NoChanges;
use crate::{Batch, ClaimLease, Won};

/// What holds rows of `T` under a claim: a row won ([`Won`]), a batch ([`Batch`]) or rows named
/// by key ([`HeldRows`], from [`held_rows`](crate::LeaseDsl::held_rows) or a kept claim's
/// [`stop_keeping`](crate::Kept::stop_keeping)), or a claim a keeper keeps ([`Kept`], whose
/// release also stops the keeper keeping it). Its renewals, writes and releases are guarded by
/// the claim's token: a holder whose lease was taken over changes nothing, and learns it from
/// the answer. A row won answers whether its row was still held (`bool`); the others, the keys
/// of the rows changed (`Vec<T::Key>`). One release type for all: [`dsl::Release`](crate::dsl::Release).
///
/// Code generic over what it holds bounds `H: Holds<Table = ..>`, and each statement it runs by
/// its type in [`dsl`](crate::dsl), named by the holder, with what it answers (`H::Answer`):
///
/// ```
/// # include!("../doctest_setup.rs");
/// use diesel::prelude::*;
/// use diesel_lease::prelude::*;
/// use diesel_lease::dsl;
///
/// type Done = diesel::dsl::Eq<jobs::status, &'static str>;
///
/// /// Finishes whatever a worker holds of `jobs`, in one guarded statement: the keys of the
/// /// rows it finished, or for a row won whether it did.
/// fn finish<H, C>(held: &H, conn: &mut C) -> Result<H::Answer, diesel_lease::Error>
/// where
///     H: Holds<Table = jobs::table>,
///     for<'q> dsl::Release<H, Done>: LeaseQuery<'q, C, i64, Output = H::Answer>,
/// {
///     held.release().set(jobs::status.eq("done")).run(conn)
/// }
///
/// # fn main() -> Result<(), diesel_lease::Error> {
/// # let conn = &mut jobs_connection()?;
/// let worker = Claim::new("worker-1")?;
/// let batch = jobs::table.claim_batch(10, Lease::from_secs(30)?).by(&worker).run::<Job>(conn)?;
/// assert_eq!(finish(&batch, conn)?, [1]);
/// assert!(finish(&jobs::table.held_rows(&worker, [1]), conn)?.is_empty(), "released once");
/// # Ok(())
/// # }
/// ```
///
/// [`Kept`]: crate::Kept
pub trait Holds {
    /// The table whose rows it holds.
    type Table: ClaimLease;

    /// What a write answers: `bool`, whether the row was still held, for a row won; `Vec`,
    /// the keys of the rows it changed, otherwise.
    type Answer: Answer<<Self::Table as ClaimLease>::Key>;

    /// The rows held, by key, with the claim that holds them.
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let outcome = jobs::table.claim_row(1, Lease::from_secs(30)?).by(&Claim::new("w")?).run::<Job>(conn)?;
    /// assert_eq!(outcome.won().expect("won").held().keys(), [1]);
    /// # Ok(())
    /// # }
    /// ```
    fn held(&self) -> &HeldRows<Self::Table>;

    /// The lease starts again, by the database's clock, for the rows the claim still holds: run
    /// it for what it renewed. A row no longer held was taken over; stop its work.
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let worker = Claim::new("w")?;
    /// let won = jobs::table.claim_row(1, Lease::from_secs(30)?).by(&worker).run::<Job>(conn)?.won().expect("won");
    /// assert!(won.renew().run(conn)?, "the row won is still held");
    /// assert_eq!(jobs::table.held_rows(&worker, [1]).renew().run(conn)?, [1]);
    /// # Ok(())
    /// # }
    /// ```
    fn renew(&self) -> Guarded<Self::Table, Renewing, NoChanges<Self::Table>, Self::Answer> {
        self.held().guarded(Renewing)
    }

    /// The holder's own write to the rows the claim still holds: add the changes with
    /// `.set(..)`, then run it for what it wrote.
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use diesel::prelude::*;
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let won = jobs::table.claim_row(1, Lease::from_secs(30)?).by(&Claim::new("w")?).run::<Job>(conn)?.won().expect("won");
    /// assert!(won.update().set(jobs::status.eq("running")).run(conn)?);
    /// let stranger = jobs::table.held_rows(&Claim::new("other")?, [1]);
    /// assert!(stranger.update().set(jobs::status.eq("done")).run(conn)?.is_empty(), "not its claim");
    /// # Ok(())
    /// # }
    /// ```
    fn update(&self) -> IncompleteWrite<Self::Table, Self::Answer> {
        IncompleteWrite::new(self.held().clone())
    }

    /// The release of the rows the claim still holds: owner, token and `claimed_at` set to
    /// `NULL`, with the caller's `.set(..)` in the same statement (a final status, a result).
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use diesel::prelude::*;
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let won = jobs::table.claim_row(1, Lease::from_secs(30)?).by(&Claim::new("w")?).run::<Job>(conn)?.won().expect("won");
    /// assert!(won.release().set(jobs::status.eq("done")).run(conn)?);
    /// assert!(!won.release().run(conn)?, "released already");
    /// # Ok(())
    /// # }
    /// ```
    fn release(&self) -> Guarded<Self::Table, Releasing, NoChanges<Self::Table>, Self::Answer> {
        self.held().guarded(Releasing)
    }
}

impl<T: ClaimLease> Holds for HeldRows<T> {
    type Table = T;
    type Answer = Vec<T::Key>;

    fn held(&self) -> &HeldRows<T> {
        self
    }
}

impl<R, T: ClaimLease> Holds for Batch<R, T> {
    type Table = T;
    type Answer = Vec<T::Key>;

    fn held(&self) -> &HeldRows<T> {
        self.as_ref()
    }
}

impl<R, T: ClaimLease> Holds for Won<R, T> {
    type Table = T;
    type Answer = bool;

    fn held(&self) -> &HeldRows<T> {
        self.as_ref()
    }
}
