//! Why a claim of one row was refused, read right after it, by the database's clock.
use std::fmt;
use std::time::Duration;

use diesel::backend::Backend;
use diesel::connection::Connection;
use diesel::deserialize::{self, Queryable};
use diesel::dsl;
use diesel::expression_methods::EqAll;
use diesel::query_dsl::LoadQuery;
use diesel::sql_types::{BigInt, Bool, Nullable, Text};
use diesel::{IntoSql, Table};

use crate::backend::{read_optional, LeaseBackend};
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

/// A refused claim of one row: nothing was written, and [`why`](Self::why) says why.
///
/// The claim is one statement, and whether it won is read from it alone; refused, the run reads
/// why right after it, on the same connection (one read, by the database's clock, with the
/// claim's lease and its whole condition besides the key, the caller's filter included), so that
/// the refusal carries its reason. A database error in that read is the claim's error.
///
/// ```
/// # include!("../doctest_setup.rs");
/// # use diesel_lease::prelude::*;
/// # fn main() -> Result<(), diesel_lease::Error> {
/// # let conn = &mut jobs_connection()?;
/// let outcome = jobs::table.claim_row(7, Lease::from_secs(30)?).by(&Claim::new("w")?).run::<Job>(conn)?;
/// let Claimed::Refused(refused) = outcome else { panic!("there is no job 7") };
/// assert_eq!(refused.why(), &Refusal::NoSuchRow);
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Refused<T: ClaimLease> {
    key: T::Key,
    why: Refusal,
}

impl<T: ClaimLease> Refused<T> {
    pub(crate) fn new(key: T::Key, why: Refusal) -> Self {
        Self { key, why }
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

    /// Why the claim was refused, as read right after it, by the database's clock: held by
    /// another claim (and until when), no such row, or not taken by the claim's own filter. A
    /// claim run with [`waiting`](crate::ClaimRow::waiting) gives back its last attempt's.
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
    /// let Refusal::Held(holder) = refused.why() else { panic!("held") };
    /// assert_eq!(holder.owner, "worker-1");
    /// assert!(holder.frees_in <= lease.as_duration());
    /// # Ok(())
    /// # }
    /// ```
    pub fn why(&self) -> &Refusal {
        &self.why
    }
}

/// The read of a row's holder by its key, with whether the claim's condition `F` takes it now.
pub(crate) type WhyRead<T, F> = SelectWhere<
    T,
    (Holder<T>, F),
    <<T as Table>::PrimaryKey as EqAll<<T as ClaimLease>::Key>>::Output,
    NoLock,
>;

/// Why a claim of the row of `key` was refused, read on `conn`: who holds the row now, if anyone,
/// with whether the claim's condition besides its key (`filter`, the lease's and the caller's)
/// takes it now, so that a row the filter refuses is told from one freed since the claim.
pub(crate) fn read_why<'q, T, F, C>(
    table: T,
    key: T::Key,
    lease: Lease,
    filter: F,
    conn: &mut C,
) -> Result<Refusal, Error>
where
    T: ClaimLease,
    T::PrimaryKey: EqAll<T::Key>,
    C: Connection,
    C::Backend: LeaseBackend,
    WhyRead<T, F>: LoadQuery<'q, C, (Refusal, Option<bool>)>,
{
    let key_is = table.primary_key().eq_all(key);
    let read: WhyRead<T, F> = SelectWhere::new(table, (holder(table, lease), filter), key_is);
    Ok(match read_optional(read, conn)? {
        None => Refusal::NoSuchRow,
        // Claimable by the lease, and the claim's condition does not take it now: refused by
        // the caller's own filter. Taken by it: freed since the claim (a holder's release
        // between the claim and this read), and worth trying again.
        Some((Refusal::Free | Refusal::Outlived { .. }, takes)) if takes != Some(true) => {
            Refusal::NotClaimable
        }
        Some((refusal, _)) => refusal,
    })
}

/// Why a claim was refused, or who holds a row (the [`holder`](crate::LeaseDsl::holder)
/// selection), as the row stands when read, by the database's clock.
///
/// ```
/// use std::time::Duration;
/// use diesel_lease::Refusal;
///
/// assert_eq!(Refusal::NoSuchRow.to_string(), "no such row");
/// assert_eq!(Refusal::Free.to_string(), "free: no claim holds it now");
/// let outlived = Refusal::Outlived { owner: "worker-1".into(), token: "t1".into(), ago: Duration::from_secs(5) };
/// assert_eq!(
///     outlived.to_string(),
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
    /// No claim holds the row. As why a claim was refused: the row was held then and has been
    /// released since, and the claim's filter takes it now, so that it is worth trying again.
    Free,
    /// A claim held the row and its lease has run out: the row is claimable again.
    Outlived {
        /// Who held the row.
        owner: String,
        /// The claim's token.
        token: String,
        /// How long ago its lease ran out.
        ago: Duration,
    },
    /// The row is free or outlived, but the claim's own filter (a status, say) does not take
    /// it; or its lease columns are half set, a token with no owner or no time, which no claim
    /// takes. The read of why evaluates the claim's filter, so it means just that: a row freed
    /// since the claim that the filter takes reads [`Refusal::Free`] or [`Refusal::Outlived`].
    NotClaimable,
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
            (Some(owner), Some(token), Some(micros), Some(false)) => Refusal::Outlived {
                owner,
                token,
                ago: duration(micros.saturating_sub(lease)),
            },
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
            Refusal::Outlived { owner, token, ago } => write!(
                f,
                "outlived: {owner} (claim {token}) held it, and its lease ran out {ago:?} ago"
            ),
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
        let Refusal::Outlived { ago, .. } = refusal(35_000_000, false, 30_000_000) else {
            panic!()
        };
        assert_eq!(ago, Duration::from_secs(5));
    }
}
