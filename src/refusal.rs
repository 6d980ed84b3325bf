//! Why a claim was refused, read only when asked, by the database's clock.
use std::fmt;
use std::time::Duration;

use diesel::connection::Connection;
use diesel::expression_methods::EqAll;
use diesel::query_dsl::LoadQuery;
use diesel::{OptionalExtension, RunQueryDsl};

use crate::claim_lease::{ClaimedAtOf, OwnerOf, TokenOf};
use crate::claim_row::KeyIs;
use crate::strategy::{read_rows, SelectWhere};
use crate::{ClaimLease, Error, Fresh, Lease, MicrosSince, RecoversFailedReads};

/// The columns read to explain a refusal: owner, token, age in microseconds, and whether the
/// lease is fresh, all by the database's clock.
#[doc(hidden)]
pub type HolderColumns<T> = (
    OwnerOf<T>,
    TokenOf<T>,
    MicrosSince<ClaimedAtOf<T>>,
    Fresh<T>,
);

/// The read behind [`Refused::why`].
#[doc(hidden)]
pub type WhyRefused<T, K> = SelectWhere<T, HolderColumns<T>, KeyIs<T, K>>;

/// A row's holder as read by [`HolderColumns`]: owner, token, age in microseconds, fresh.
pub(crate) type HolderRow = (Option<String>, Option<String>, Option<i64>, Option<bool>);

/// A refused single-row claim. Nothing was written; ask [`why`](Self::why) to learn the reason.
///
/// ```
/// # include!("doctest_setup.rs");
/// # use diesel_lease::prelude::*;
/// # fn main() -> Result<(), diesel_lease::Error> {
/// # let conn = &mut jobs_connection()?;
/// let outcome: Claimed<Job, _, _> = jobs::table.claim_row(7, Lease::from_secs(30)?).by(Claim::new("w")?, conn)?;
/// let Claimed::Refused(refused) = outcome else { panic!("there is no job 7") };
/// assert_eq!(refused.why(conn)?, Refusal::NoSuchRow);
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Refused<T, K> {
    table: T,
    key: K,
    lease: Lease,
}

impl<T: ClaimLease, K> Refused<T, K> {
    pub(crate) fn new(table: T, key: K, lease: Lease) -> Self {
        Self { table, key, lease }
    }

    /// The key of the row that was not claimed.
    ///
    /// ```
    /// # include!("doctest_setup.rs");
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let outcome: Claimed<Job, _, _> = jobs::table.claim_row(7, Lease::from_secs(30)?).by(Claim::new("w")?, conn)?;
    /// let Claimed::Refused(refused) = outcome else { panic!("there is no job 7") };
    /// assert_eq!(*refused.key(), 7);
    /// # Ok(())
    /// # }
    /// ```
    pub fn key(&self) -> &K {
        &self.key
    }

    /// Why the claim was refused, as the row stands now: one read, by the database's clock.
    ///
    /// ```
    /// # include!("doctest_setup.rs");
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let lease = Lease::from_secs(30)?;
    /// let _won: Claimed<Job, _, _> = jobs::table.claim_row(1, lease).by(Claim::new("worker-1")?, conn)?;
    /// let outcome: Claimed<Job, _, _> = jobs::table.claim_row(1, lease).by(Claim::new("worker-2")?, conn)?;
    /// let Claimed::Refused(refused) = outcome else { panic!("the lease is fresh") };
    /// let Refusal::Held(holder) = refused.why(conn)? else { panic!("held") };
    /// assert_eq!(holder.owner, "worker-1");
    /// assert!(holder.frees_in <= lease.as_duration());
    /// # Ok(())
    /// # }
    /// ```
    pub fn why<'q, C>(&self, conn: &mut C) -> Result<Refusal, Error>
    where
        C: Connection,
        C::Backend: RecoversFailedReads,
        K: Clone,
        T::PrimaryKey: EqAll<K>,
        WhyRefused<T, K>: LoadQuery<'q, C, HolderRow>,
    {
        let columns = (
            T::Owner::default(),
            T::ClaimToken::default(),
            MicrosSince::new(T::ClaimedAt::default()),
            self.table.fresh(self.lease),
        );
        let key_is = self.table.primary_key().eq_all(self.key.clone());
        let read: WhyRefused<T, K> = SelectWhere::new(self.table, columns, key_is);
        let row: Option<HolderRow> = read_rows(conn, |conn| read.get_result(conn).optional())?;
        Ok(row.map_or(Refusal::NoSuchRow, |row| refusal_of(row, self.lease)))
    }
}

/// Why a row whose holder reads `row` refuses a claim under `lease`. Whether the lease is fresh
/// is the database's answer, by the same predicate the claim used, so the two never disagree at
/// the boundary: a lease exactly `lease` old is fresh to both.
pub(crate) fn refusal_of(row: HolderRow, lease: Lease) -> Refusal {
    match row {
        (Some(owner), Some(token), Some(micros), Some(true)) => {
            let age = Duration::from_micros(micros.max(0).unsigned_abs());
            Refusal::Held(LeaseHolder {
                owner,
                token,
                age,
                frees_in: lease.as_duration().saturating_sub(age),
            })
        }
        _ => Refusal::NotClaimable,
    }
}

/// Why a claim was refused.
///
/// ```
/// use diesel_lease::Refusal;
///
/// assert_eq!(Refusal::NoSuchRow.to_string(), "no such row");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Refusal {
    /// No row has the key.
    NoSuchRow,
    /// Another claim holds the row, within its lease.
    Held(LeaseHolder),
    /// The row is not held, or its lease ran out, but the caller's filter does not take it
    /// (its status, say), or it changed hands again since the claim.
    NotClaimable,
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::NoSuchRow => f.write_str("no such row"),
            Refusal::Held(holder) => write!(f, "held: {holder}"),
            Refusal::NotClaimable => f.write_str("not claimable by this claim's filter"),
        }
    }
}

/// Who holds a row, and for how long yet, by the database's clock.
///
/// ```
/// use std::time::Duration;
/// use diesel_lease::LeaseHolder;
///
/// let holder = LeaseHolder {
///     owner: "worker-1".into(),
///     token: "t1".into(),
///     age: Duration::from_secs(10),
///     frees_in: Duration::from_secs(20),
/// };
/// assert_eq!(holder.to_string(), "worker-1 (claim t1) for 10s, frees in 20s");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseHolder {
    /// Who holds the row.
    pub owner: String,
    /// The holding claim's token.
    pub token: String,
    /// How long ago the row was claimed or last renewed.
    pub age: Duration,
    /// How long until the lease runs out, unless it is renewed.
    pub frees_in: Duration,
}

impl fmt::Display for LeaseHolder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} (claim {}) for {:?}, frees in {:?}",
            self.owner, self.token, self.age, self.frees_in
        )
    }
}
