//! Who holds what, and for how long yet: read from any lease table by the database's clock.
use std::marker::PhantomData;
use std::time::Duration;

use chrono::{DateTime, Utc};
use diesel::connection::Connection;
use diesel::dsl;
use diesel::query_dsl::LoadQuery;
use diesel::{ExpressionMethods, Table};

use crate::backend::NativeLeaseQuery;
use crate::backend::{read, LeaseBackend};
use crate::query::LeaseStatement;
use crate::sql::{Both, ClockMicros, CountPerOwner, MicrosSince, NoLock, SelectWhere};
use crate::table::{ClaimedAtOf, OwnerOf, TokenOf};
use crate::{ClaimLease, Error, Lease, Outlived};

/// The columns read of a held row: its key, owner, token and age in microseconds, and the
/// database's time of the read.
type HoldingColumns<T> = (
    <T as Table>::PrimaryKey,
    OwnerOf<T>,
    TokenOf<T>,
    MicrosSince<ClaimedAtOf<T>>,
    ClockMicros,
);

/// A held row as read: its key, owner, token, age in microseconds and the database's time.
type HoldingRow<K> = (K, Option<String>, Option<String>, Option<i64>, i64);

type IsHeld<T> = dsl::IsNotNull<TokenOf<T>>;

/// A held row: whose it is, and for how long yet, by the database's clock.
///
/// ```
/// use std::time::Duration;
/// use diesel_lease::__private::Holding;
///
/// let holding = Holding {
///     key: 7_i64,
///     owner: "worker-1".into(),
///     token: "t1".into(),
///     claimed_at: chrono::DateTime::UNIX_EPOCH,
///     age: Duration::from_secs(10),
///     time_left: Duration::from_secs(20),
/// };
/// assert!(!holding.is_stale());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holding<K> {
    /// The row's primary key.
    pub key: K,
    /// Who holds it.
    pub owner: String,
    /// The holding claim's token.
    pub token: String,
    /// When it was claimed or last renewed, by the database's clock, whatever the column's own
    /// type (microseconds on PostgreSQL and MySQL, milliseconds on SQLite). A row a keeper
    /// released before its shortest hold is dated later than its release.
    pub claimed_at: DateTime<Utc>,
    /// How long ago it was claimed or last renewed; zero for a row dated to come.
    pub age: Duration,
    /// How long until its lease runs out; zero once it has (the row is stale).
    pub time_left: Duration,
}

impl<K> Holding<K> {
    /// Whether the lease ran out: the holder is gone, or late, and the row can be reaped or
    /// taken over.
    ///
    /// ```
    /// # use std::time::Duration;
    /// # use diesel_lease::__private::Holding;
    /// let holding = Holding {
    ///     key: 1,
    ///     owner: "w".into(),
    ///     token: "t".into(),
    ///     claimed_at: chrono::DateTime::UNIX_EPOCH,
    ///     age: Duration::from_secs(99),
    ///     time_left: Duration::ZERO,
    /// };
    /// assert!(holding.is_stale());
    /// ```
    pub fn is_stale(&self) -> bool {
        self.time_left.is_zero()
    }
}

/// Which held rows a [`Holders`] reads: [`AllHeld`] or [`StaleOnly`].
///
/// ```
/// # include!("../doctest_setup.rs");
/// fn reads<W: diesel_lease::__private::HoldersFilter<jobs::table>>() {}
/// # fn main() {
/// reads::<diesel_lease::__private::AllHeld>();
/// reads::<diesel_lease::__private::StaleOnly>();
/// # }
/// ```
pub trait HoldersFilter<T: ClaimLease> {
    /// The condition on the rows.
    type Condition;

    /// The condition on the rows of `table` under `lease`.
    fn condition(table: T, lease: Lease) -> Self::Condition;
}

/// Every held row.
///
/// ```
/// let _all = diesel_lease::__private::AllHeld;
/// ```
#[derive(Debug, Clone, Copy)]
pub struct AllHeld;

/// The held rows whose lease ran out.
///
/// ```
/// let _stale = diesel_lease::__private::StaleOnly;
/// ```
#[derive(Debug, Clone, Copy)]
pub struct StaleOnly;

impl<T: ClaimLease> HoldersFilter<T> for AllHeld {
    type Condition = IsHeld<T>;

    fn condition(_: T, _: Lease) -> IsHeld<T> {
        T::ClaimToken::default().is_not_null()
    }
}

impl<T: ClaimLease> HoldersFilter<T> for StaleOnly {
    type Condition = Both<IsHeld<T>, Outlived<T>>;

    fn condition(table: T, lease: Lease) -> Self::Condition {
        Both::new(
            T::ClaimToken::default().is_not_null(),
            table.outlived(lease),
        )
    }
}

/// The rows of `T` that are held, as [`Holding`]s under a lease, oldest first: built by
/// [`LeaseDsl::holders`](crate::LeaseDsl::holders) (every held row) or
/// [`LeaseDsl::stale`](crate::LeaseDsl::stale) (those whose lease ran out), read by
/// `.run(conn)`.
///
/// ```
/// # include!("../doctest_setup.rs");
/// use diesel_lease::prelude::*;
///
/// # fn main() -> Result<(), diesel_lease::Error> {
/// # let conn = &mut jobs_connection()?;
/// let lease = Lease::from_secs(30)?;
/// let _won = jobs::table.claim_batch(1, lease).by(&Claim::new("worker-1")?).returning(jobs::id).run::<i64>(conn)?;
/// let holders = jobs::table.holders(lease).run(conn)?;
/// assert_eq!(holders.len(), 1);
/// assert_eq!((holders[0].key, holders[0].owner.as_str()), (1, "worker-1"));
/// assert!(holders[0].time_left > std::time::Duration::from_secs(25));
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, Copy)]
#[must_use = "a read does nothing until it is run"]
pub struct Holders<T, Which> {
    table: T,
    lease: Lease,
    which: PhantomData<Which>,
}

impl<T: ClaimLease, Which> Holders<T, Which> {
    pub(crate) fn new(table: T, lease: Lease) -> Self {
        Self {
            table,
            lease,
            which: PhantomData,
        }
    }
}

impl<T: ClaimLease, Which> LeaseStatement<T::Key> for Holders<T, Which> {
    type Output = Vec<Holding<T::Key>>;
}

impl<'q, T, Which, C> NativeLeaseQuery<'q, C, T::Key> for Holders<T, Which>
where
    T: ClaimLease,
    Which: HoldersFilter<T>,
    C: Connection,
    C::Backend: LeaseBackend,
    SelectWhere<T, HoldingColumns<T>, Which::Condition, NoLock>:
        LoadQuery<'q, C, HoldingRow<T::Key>>,
{
    fn run_native(self, conn: &mut C) -> Result<Vec<Holding<T::Key>>, Error> {
        let table = self.table;
        let columns = (
            table.primary_key(),
            T::Owner::default(),
            T::ClaimToken::default(),
            MicrosSince::new(T::ClaimedAt::default()),
            ClockMicros,
        );
        let condition = Which::condition(table, self.lease);
        let rows: Vec<HoldingRow<T::Key>> =
            read(SelectWhere::new(table, columns, condition), conn)?;
        let lease = *self.lease.micros();
        let mut holdings: Vec<Holding<T::Key>> = rows
            .into_iter()
            .map(|(key, owner, token, age, now)| {
                // Both from the database, in one statement: its clock, and the row's age by it.
                let age = age.unwrap_or(0);
                let claimed_at = DateTime::from_timestamp_micros(now.saturating_sub(age))
                    .unwrap_or(DateTime::<Utc>::MIN_UTC);
                Holding {
                    key,
                    owner: owner.unwrap_or_default(),
                    token: token.unwrap_or_default(),
                    claimed_at,
                    age: Duration::from_micros(age.max(0).unsigned_abs()),
                    time_left: Duration::from_micros(
                        lease.saturating_sub(age).max(0).unsigned_abs(),
                    ),
                }
            })
            .collect();
        holdings.sort_by_key(|holding| holding.claimed_at);
        Ok(holdings)
    }
}

impl<T: ClaimLease, Which, C> crate::RunLeaseDsl<C> for Holders<T, Which> {}

/// How many rows each owner holds, by owner: built by
/// [`LeaseDsl::held_per_owner`](crate::LeaseDsl::held_per_owner), read by `.run(conn)`.
///
/// ```
/// # include!("../doctest_setup.rs");
/// use diesel_lease::prelude::*;
///
/// # fn main() -> Result<(), diesel_lease::Error> {
/// # let conn = &mut jobs_connection()?;
/// let _won = jobs::table.claim_batch(1, Lease::from_secs(30)?).by(&Claim::new("worker-1")?).returning(jobs::id).run::<i64>(conn)?;
/// assert_eq!(jobs::table.held_per_owner().run(conn)?, [("worker-1".to_owned(), 1)]);
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, Copy)]
#[must_use = "a read does nothing until it is run"]
pub struct HeldPerOwner<T> {
    table: T,
}

impl<T: ClaimLease> HeldPerOwner<T> {
    pub(crate) fn new(table: T) -> Self {
        Self { table }
    }
}

impl<T: ClaimLease> LeaseStatement<(String, i64)> for HeldPerOwner<T> {
    type Output = Vec<(String, i64)>;
}

impl<'q, T, C> NativeLeaseQuery<'q, C, (String, i64)> for HeldPerOwner<T>
where
    T: ClaimLease,
    C: Connection,
    C::Backend: LeaseBackend,
    CountPerOwner<T>: LoadQuery<'q, C, (Option<String>, i64)>,
{
    fn run_native(self, conn: &mut C) -> Result<Vec<(String, i64)>, Error> {
        let rows: Vec<(Option<String>, i64)> = read(CountPerOwner::new(self.table), conn)?;
        Ok(rows
            .into_iter()
            .map(|(owner, rows)| (owner.unwrap_or_default(), rows))
            .collect())
    }
}

impl<T: ClaimLease, C> crate::RunLeaseDsl<C> for HeldPerOwner<T> {}
