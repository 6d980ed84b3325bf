//! Why a claim was refused, read only when asked, by the database's clock.
use std::fmt;
use std::time::Duration;

use diesel::backend::Backend;
use diesel::connection::Connection;
use diesel::deserialize::{self, Queryable};
use diesel::dsl;
use diesel::expression::Expression;
use diesel::expression_methods::EqAll;
use diesel::query_dsl::LoadQuery;
use diesel::sql_types::{BigInt, Bool, Nullable, Text};
use diesel::{IntoSql, Table};

use crate::backend::NativeLeaseQuery;
use crate::backend::{read_optional, LeaseBackend};
use crate::query::LeaseStatement;
use crate::sql::{MicrosSince, NoLock, SelectWhere};
use crate::table::{ClaimedAtOf, OwnerOf, TokenOf};
use crate::{ClaimLease, Error, Fresh, Lease};

/// Who holds a row, and whether its lease is fresh under a lease, all by the database's clock,
/// as a selection that loads as a [`Refusal`]: made by [`LeaseDsl::holder`](crate::LeaseDsl::holder).
pub type Holder<T> = (
    OwnerOf<T>,
    TokenOf<T>,
    MicrosSince<ClaimedAtOf<T>>,
    Fresh<T>,
    dsl::AsExprOf<i64, BigInt>,
);

/// The SQL type of a [`Holder`].
type HolderSqlType = (
    Nullable<Text>,
    Nullable<Text>,
    Nullable<BigInt>,
    Nullable<Bool>,
    BigInt,
);

pub(crate) fn holder<T: ClaimLease>(table: T, lease: Lease) -> Holder<T> {
    (
        T::Owner::default(),
        T::ClaimToken::default(),
        MicrosSince::new(T::ClaimedAt::default()),
        table.fresh(lease),
        (*lease.micros()).into_sql::<BigInt>(),
    )
}

/// A refused claim of one row. Nothing was written; ask [`why`](Self::why) to learn the
/// reason.
///
/// ```
/// # include!("../doctest_setup.rs");
/// # use diesel_lease::prelude::*;
/// # fn main() -> Result<(), diesel_lease::Error> {
/// # let conn = &mut jobs_connection()?;
/// let outcome = jobs::table.claim_row(7, Lease::from_secs(30)?).by(&Claim::new("w")?).run::<Job>(conn)?;
/// let Claimed::Refused(refused) = outcome else { panic!("there is no job 7") };
/// assert_eq!(refused.why().run(conn)?, Refusal::NoSuchRow);
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Refused<T: ClaimLease> {
    table: T,
    key: T::Key,
    lease: Lease,
    /// Whether the claim had a filter of its own, which may be what refused a free row.
    filtered: bool,
    /// Why, as a wait read it after its last attempt; a plain claim reads nothing.
    reading: Option<Refusal>,
}

impl<T: ClaimLease> Refused<T> {
    pub(crate) fn new(table: T, key: T::Key, lease: Lease, filtered: bool) -> Self {
        Self {
            table,
            key,
            lease,
            filtered,
            reading: None,
        }
    }

    /// The same refusal, with why it was refused as read right after it.
    pub(crate) fn read_as(self, reading: Refusal) -> Self {
        Self {
            reading: Some(reading),
            ..self
        }
    }

    /// Why the claim was refused, as it was read right after the refusal, by the database's
    /// clock, if it was: a claim run with [`waiting`](crate::ClaimRow::waiting) reads it after
    /// each refused attempt, and gives back its last reading here, so that the caller need not
    /// read again. A plain claim reads nothing it was not asked to: `None`, and
    /// [`why`](Self::why) reads it.
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use std::time::Duration;
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let worker = Claim::new("worker-1")?;
    /// let outcome = jobs::table.claim_row(7, Lease::from_secs(30)?).by(&worker).run::<Job>(conn)?;
    /// let Claimed::Refused(refused) = outcome else { panic!("there is no job 7") };
    /// assert_eq!(refused.reading(), None, "a plain claim reads nothing");
    ///
    /// let waited = jobs::table
    ///     .claim_row(7, Lease::from_secs(30)?)
    ///     .by(&worker)
    ///     .waiting(Duration::from_secs(5))
    ///     .run::<Job>(conn)?;
    /// let Claimed::Refused(refused) = waited else { panic!("there is still no job 7") };
    /// assert_eq!(refused.reading(), Some(&Refusal::NoSuchRow), "no row: it did not wait");
    /// # Ok(())
    /// # }
    /// ```
    pub fn reading(&self) -> Option<&Refusal> {
        self.reading.as_ref()
    }

    /// The key of the row that was not claimed.
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let outcome = jobs::table.claim_row(7, Lease::from_secs(30)?).by(&Claim::new("w")?).run::<Job>(conn)?;
    /// let Claimed::Refused(refused) = outcome else { panic!("there is no job 7") };
    /// assert_eq!(*refused.key(), 7);
    /// # Ok(())
    /// # }
    /// ```
    pub fn key(&self) -> &T::Key {
        &self.key
    }

    /// Why the claim was refused, as the row stands when this runs: one read, by the database's
    /// clock, with the claim's lease.
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let lease = Lease::from_secs(30)?;
    /// let _won = jobs::table.claim_row(1, lease).by(&Claim::new("worker-1")?).run::<Job>(conn)?;
    /// let outcome = jobs::table.claim_row(1, lease).by(&Claim::new("worker-2")?).run::<Job>(conn)?;
    /// let Claimed::Refused(refused) = outcome else { panic!("the lease is fresh") };
    /// let Refusal::Held(holder) = refused.why().run(conn)? else { panic!("held") };
    /// assert_eq!(holder.owner, "worker-1");
    /// assert!(holder.frees_in <= lease.as_duration());
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// A claim with a filter of its own that finds the row free here reads
    /// [`Refusal::NotClaimable`]: this read knows no filter, so it cannot tell a row the filter
    /// refuses from one released since the claim. A wait's reading
    /// ([`reading`](Self::reading)) can: it evaluates the claim's filter in the read.
    pub fn why(&self) -> Why<T> {
        Why {
            table: self.table,
            key: self.key.clone(),
            lease: self.lease,
            filtered: self.filtered,
            filter: FilterNotRead,
        }
    }

    /// The read of why, with the claim's whole condition besides its key (`filter`, the lease's
    /// and the caller's) evaluated in it: a row free at the read that `filter` takes was freed
    /// since the claim, and can be tried again.
    pub(crate) fn why_filtered<F>(&self, filter: F) -> Why<T, F> {
        Why {
            table: self.table,
            key: self.key.clone(),
            lease: self.lease,
            filtered: self.filtered,
            filter,
        }
    }
}

/// The filter of [`Refused::why`]'s read: none, the claim's own filter is not read.
#[derive(Debug, Clone, Copy, Default)]
pub struct FilterNotRead;

/// The read behind [`Refused::why`]: who holds the row now, if anyone.
///
/// ```
/// # include!("../doctest_setup.rs");
/// # use diesel_lease::prelude::*;
/// # fn main() -> Result<(), diesel_lease::Error> {
/// # let conn = &mut jobs_connection()?;
/// let outcome = jobs::table.claim_row(7, Lease::from_secs(30)?).by(&Claim::new("w")?).run::<Job>(conn)?;
/// let Claimed::Refused(refused) = outcome else { panic!("there is no job 7") };
/// let why: diesel_lease::Why<jobs::table> = refused.why();
/// assert_eq!(why.run(conn)?, Refusal::NoSuchRow);
/// # Ok(())
/// # }
/// ```
///
/// A wait reads why with the claim's condition `F` evaluated in the same read
/// ([`Refused::reading`]); [`Refused::why`] reads it without (`F` is [`FilterNotRead`]).
#[derive(Debug, Clone)]
#[must_use = "a read does nothing until it is run"]
pub struct Why<T: ClaimLease, F = FilterNotRead> {
    table: T,
    key: T::Key,
    lease: Lease,
    filtered: bool,
    filter: F,
}

/// The read of a row's holder by its key.
type WhyRead<T> = SelectWhere<
    T,
    Holder<T>,
    <<T as Table>::PrimaryKey as EqAll<<T as ClaimLease>::Key>>::Output,
    NoLock,
>;

/// The read of a row's holder by its key, with whether the claim's condition `F` takes it now.
type WhyFilteredRead<T, F> = SelectWhere<
    T,
    (Holder<T>, F),
    <<T as Table>::PrimaryKey as EqAll<<T as ClaimLease>::Key>>::Output,
    NoLock,
>;

impl<T: ClaimLease, F> LeaseStatement<Refusal> for Why<T, F> {
    type Output = Refusal;
}

impl<'q, T, C> NativeLeaseQuery<'q, C, Refusal> for Why<T>
where
    T: ClaimLease,
    T::PrimaryKey: EqAll<T::Key>,
    C: Connection,
    C::Backend: LeaseBackend,
    WhyRead<T>: LoadQuery<'q, C, Refusal>,
{
    fn run_native(self, conn: &mut C) -> Result<Refusal, Error> {
        let key_is = self.table.primary_key().eq_all(self.key);
        let read: WhyRead<T> = SelectWhere::new(self.table, holder(self.table, self.lease), key_is);
        Ok(match read_optional(read, conn)? {
            None => Refusal::NoSuchRow,
            // Claimable by the lease, so refused by the caller's own filter, unless it changed
            // hands since; without such a filter it changed hands since the claim.
            Some(Refusal::Free | Refusal::Outlived(_)) if self.filtered => Refusal::NotClaimable,
            Some(refusal) => refusal,
        })
    }
}

impl<'q, T, F, C> NativeLeaseQuery<'q, C, Refusal> for Why<T, F>
where
    T: ClaimLease,
    T::PrimaryKey: EqAll<T::Key>,
    F: Expression<SqlType = Nullable<Bool>>,
    C: Connection,
    C::Backend: LeaseBackend,
    WhyFilteredRead<T, F>: LoadQuery<'q, C, (Refusal, Option<bool>)>,
{
    fn run_native(self, conn: &mut C) -> Result<Refusal, Error> {
        let key_is = self.table.primary_key().eq_all(self.key);
        let selection = (holder(self.table, self.lease), self.filter);
        let read: WhyFilteredRead<T, F> = SelectWhere::new(self.table, selection, key_is);
        Ok(match read_optional(read, conn)? {
            None => Refusal::NoSuchRow,
            // Claimable by the lease, and the claim's condition does not take it now: refused by
            // the caller's own filter. Taken by it: freed since the claim (a holder's release
            // between the claim and this read), and worth trying again.
            Some((Refusal::Free | Refusal::Outlived(_), takes)) if takes != Some(true) => {
                Refusal::NotClaimable
            }
            Some((refusal, _)) => refusal,
        })
    }
}

impl<T: ClaimLease, F, C> crate::RunLeaseDsl<C> for Why<T, F> {}

/// Why a claim was refused, or who holds a row (the [`holder`](crate::LeaseDsl::holder)
/// selection), as the row stands when read, by the database's clock.
///
/// ```
/// use std::time::Duration;
/// use diesel_lease::{OutlivedLease, Refusal};
///
/// assert_eq!(Refusal::NoSuchRow.to_string(), "no such row");
/// assert_eq!(Refusal::Free.to_string(), "free: no claim holds it now");
/// let outlived = OutlivedLease { owner: "worker-1".into(), token: "t1".into(), ago: Duration::from_secs(5) };
/// assert_eq!(
///     Refusal::Outlived(outlived).to_string(),
///     "outlived: worker-1 (claim t1) held it, and its lease ran out 5s ago",
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Refusal {
    /// No row has the key.
    NoSuchRow,
    /// Another claim holds the row, within its lease.
    Held(LeaseHolder),
    /// No claim holds the row: a claim of it without a filter of its own was refused because it
    /// was held then, and has been released since.
    Free,
    /// A claim held the row and its lease has run out: the row is claimable again.
    Outlived(OutlivedLease),
    /// The row is free or outlived, but the claim's own filter (a status, say) does not take
    /// it; or its lease columns are half set, a token with no owner or no time, which no claim
    /// takes. A wait's reading evaluates the filter in the read, so there it means just that;
    /// [`Refused::why`], which knows no filter, gives it for any free row of a claim with a
    /// filter, released since the claim or not.
    NotClaimable,
}

/// A claim whose lease has run out, and since when, by the database's clock.
///
/// ```
/// use std::time::Duration;
/// use diesel_lease::OutlivedLease;
///
/// let outlived = OutlivedLease { owner: "worker-1".into(), token: "t1".into(), ago: Duration::from_secs(5) };
/// assert_eq!(outlived.to_string(), "worker-1 (claim t1) held it, and its lease ran out 5s ago");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutlivedLease {
    /// Who held the row.
    pub owner: String,
    /// The claim's token.
    pub token: String,
    /// How long ago its lease ran out.
    pub ago: Duration,
}

impl fmt::Display for OutlivedLease {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} (claim {}) held it, and its lease ran out {:?} ago",
            self.owner, self.token, self.ago
        )
    }
}

/// Whether the lease is fresh is the database's answer, by the same predicate the claim used, so
/// the two never disagree at the boundary: a lease exactly as old as its length is fresh to both.
impl<DB: Backend> Queryable<HolderSqlType, DB> for Refusal
where
    HolderRow: deserialize::FromStaticSqlRow<HolderSqlType, DB>,
{
    type Row = HolderRow;

    fn build(row: Self::Row) -> deserialize::Result<Self> {
        Ok(Refusal::of_row(row))
    }
}

/// A holder's row as the read gives it: owner, token, its age in microseconds by the database's
/// clock, whether that is fresh under the lease, and the lease in microseconds.
type HolderRow = (
    Option<String>,
    Option<String>,
    Option<i64>,
    Option<bool>,
    i64,
);

impl Refusal {
    fn of_row((owner, token, micros, fresh, lease): HolderRow) -> Self {
        let duration = |micros: i64| Duration::from_micros(micros.max(0).unsigned_abs());
        match (owner, token, micros, fresh) {
            (Some(owner), Some(token), Some(micros), Some(true)) => Refusal::Held(LeaseHolder {
                owner,
                token,
                age: duration(micros),
                // From the age as the database gave it: a row dated to come (a keeper's release
                // before a shortest hold longer than the lease) frees that much later.
                frees_in: duration(lease.saturating_sub(micros)),
            }),
            (Some(owner), Some(token), Some(micros), Some(false)) => {
                Refusal::Outlived(OutlivedLease {
                    owner,
                    token,
                    ago: duration(micros.saturating_sub(lease)),
                })
            }
            (_, None, _, _) => Refusal::Free,
            // A token without an owner or a time: lease columns half set by hand.
            _ => Refusal::NotClaimable,
        }
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::NoSuchRow => f.write_str("no such row"),
            Refusal::Held(holder) => write!(f, "held: {holder}"),
            Refusal::Free => f.write_str("free: no claim holds it now"),
            Refusal::Outlived(outlived) => write!(f, "outlived: {outlived}"),
            Refusal::NotClaimable => f.write_str(
                "not claimable: free or outlived, but not taken by this claim's own filter, or it changed hands since",
            ),
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

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::Refusal;

    /// What a holder's row of this age (in microseconds), fresh or not, says under `lease`.
    fn refusal(age: i64, fresh: bool, lease: i64) -> Refusal {
        Refusal::of_row((
            Some("node-a".into()),
            Some("t1".into()),
            Some(age),
            Some(fresh),
            lease,
        ))
    }

    #[test]
    fn a_held_row_frees_in_the_lease_less_its_age() {
        let Refusal::Held(holder) = refusal(10_000_000, true, 30_000_000) else {
            panic!()
        };
        assert_eq!(holder.age, Duration::from_secs(10));
        assert_eq!(holder.frees_in, Duration::from_secs(20));
    }

    #[test]
    fn a_row_dated_to_come_frees_that_much_later_than_the_lease() {
        let Refusal::Held(holder) = refusal(-60_000_000, true, 30_000_000) else {
            panic!()
        };
        assert_eq!(holder.age, Duration::ZERO);
        assert_eq!(holder.frees_in, Duration::from_secs(90));
    }

    #[test]
    fn an_outlived_row_ran_out_its_age_less_the_lease_ago() {
        let Refusal::Outlived(outlived) = refusal(35_000_000, false, 30_000_000) else {
            panic!()
        };
        assert_eq!(outlived.ago, Duration::from_secs(5));
    }
}
