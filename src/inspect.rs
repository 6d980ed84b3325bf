//! Who holds what, and for how long yet: read from any lease table by the database's clock.
use std::marker::PhantomData;
use std::time::Duration;

use chrono::{DateTime, Utc};

use diesel::backend::Backend;
use diesel::connection::Connection;
use diesel::dsl;
use diesel::query_builder::{AstPass, Query, QueryFragment, QueryId};
use diesel::query_dsl::LoadQuery;
use diesel::sql_types::{BigInt, Nullable, Text};
use diesel::{Column, ExpressionMethods, QueryResult, RunQueryDsl, Table};

use crate::claim_lease::{ClaimedAtOf, OwnerOf, TokenOf};
use crate::strategy::{read_rows, Both, SelectWhere};
use crate::{
    Age, ClaimLease, ClockMicros, Error, Lease, MicrosSince, Outlived, RecoversFailedReads,
};

/// The columns read of a held row: its key, owner, token and age in microseconds, and the
/// database's time of the read.
#[doc(hidden)]
pub type HoldingColumns<T> = (
    <T as Table>::PrimaryKey,
    OwnerOf<T>,
    TokenOf<T>,
    MicrosSince<ClaimedAtOf<T>>,
    ClockMicros,
);
type IsHeld<T> = dsl::IsNotNull<TokenOf<T>>;
/// The read of every held row.
#[doc(hidden)]
pub type ReadHolders<T> = SelectWhere<T, HoldingColumns<T>, IsHeld<T>>;
/// The read of the held rows whose lease ran out.
#[doc(hidden)]
pub type ReadStale<T> = SelectWhere<T, HoldingColumns<T>, Both<IsHeld<T>, Outlived<T>>>;

type HoldingRow<K> = (K, Option<String>, Option<String>, Option<i64>, i64);

/// A held row: whose it is, and for how long yet, by the database's clock.
///
/// ```
/// use std::time::Duration;
/// use diesel_lease::Holding;
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
    /// # use diesel_lease::Holding;
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

/// The rows of `T` that are held, as [`Holding`]s under a lease: built by
/// [`ClaimLease::holders`] (every held row) or [`ClaimLease::stale`] (those whose lease ran
/// out), read by [`load`](Self::load).
///
/// ```
/// # include!("doctest_setup.rs");
/// use diesel_lease::prelude::*;
///
/// # fn main() -> Result<(), diesel_lease::Error> {
/// # let conn = &mut jobs_connection()?;
/// let lease = Lease::from_secs(30)?;
/// let _won: Batch<i64> = jobs::table.claim_batch(1, lease).returning(jobs::id).by("worker-1", conn)?;
/// let holders = jobs::table.holders(lease).load::<_, i64>(conn)?;
/// assert_eq!(holders.len(), 1);
/// assert_eq!((holders[0].key, holders[0].owner.as_str()), (1, "worker-1"));
/// assert!(holders[0].time_left > std::time::Duration::from_secs(25));
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, Copy)]
#[must_use = "a read does nothing until it is loaded"]
pub struct Holders<T, Read> {
    table: T,
    lease: Lease,
    read: PhantomData<Read>,
}

impl<T: ClaimLease, Read> Holders<T, Read> {
    pub(crate) fn new(table: T, lease: Lease) -> Self {
        Self {
            table,
            lease,
            read: PhantomData,
        }
    }
}

/// Which held rows a [`Holders`] reads.
#[doc(hidden)]
pub trait HoldersRead<T> {
    /// The read.
    type Query;
    /// The read of `table`'s held rows under `lease`.
    fn query(table: T, lease: Lease) -> Self::Query;
}

/// Every held row.
#[doc(hidden)]
#[derive(Debug, Clone, Copy)]
pub struct AllHeld;

/// The held rows whose lease ran out.
#[doc(hidden)]
#[derive(Debug, Clone, Copy)]
pub struct StaleOnly;

impl<T: ClaimLease> HoldersRead<T> for AllHeld {
    type Query = ReadHolders<T>;

    fn query(table: T, _: Lease) -> Self::Query {
        SelectWhere::new(
            table,
            holding_columns(table),
            T::ClaimToken::default().is_not_null(),
        )
    }
}

impl<T: ClaimLease> HoldersRead<T> for StaleOnly {
    type Query = ReadStale<T>;

    fn query(table: T, lease: Lease) -> Self::Query {
        let stale = Both::new(
            T::ClaimToken::default().is_not_null(),
            table.outlived(lease),
        );
        SelectWhere::new(table, holding_columns(table), stale)
    }
}

fn holding_columns<T: ClaimLease>(table: T) -> HoldingColumns<T> {
    (
        table.primary_key(),
        T::Owner::default(),
        T::ClaimToken::default(),
        MicrosSince::new(T::ClaimedAt::default()),
        ClockMicros,
    )
}

impl<T: ClaimLease, Read: HoldersRead<T>> Holders<T, Read> {
    /// Reads the holdings, oldest first. `K` is the primary key's Rust type.
    ///
    /// ```
    /// # include!("doctest_setup.rs");
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let stale = jobs::table.stale(Lease::from_secs(30)?).load::<_, i64>(conn)?;
    /// assert!(stale.is_empty());
    /// # Ok(())
    /// # }
    /// ```
    pub fn load<'q, C, K>(self, conn: &mut C) -> Result<Vec<Holding<K>>, Error>
    where
        C: Connection,
        C::Backend: RecoversFailedReads,
        Read::Query: LoadQuery<'q, C, HoldingRow<K>>,
    {
        let read = Read::query(self.table, self.lease);
        let rows: Vec<HoldingRow<K>> = read_rows(conn, |conn| read.load(conn))?;
        let lease = *Age::from(self.lease).micros();
        let mut holdings: Vec<Holding<K>> = rows
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

/// How many rows each owner holds: built by [`ClaimLease::held_per_owner`].
///
/// ```
/// # include!("doctest_setup.rs");
/// use diesel_lease::prelude::*;
///
/// # fn main() -> Result<(), diesel_lease::Error> {
/// # let conn = &mut jobs_connection()?;
/// let _won: Batch<i64> = jobs::table.claim_batch(1, Lease::from_secs(30)?).returning(jobs::id).by("worker-1", conn)?;
/// assert_eq!(jobs::table.held_per_owner().load(conn)?, [("worker-1".to_owned(), 1)]);
/// # Ok(())
/// # }
/// ```
#[must_use = "a read does nothing until it is loaded"]
pub struct HeldPerOwner<T: Table> {
    from_clause: T::FromClause,
}

impl<T: Table> std::fmt::Debug for HeldPerOwner<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(std::any::type_name::<Self>())
    }
}

impl<T: ClaimLease> HeldPerOwner<T> {
    pub(crate) fn new(table: T) -> Self {
        Self {
            from_clause: table.from_clause(),
        }
    }

    /// Reads `(owner, rows held)`, by owner.
    ///
    /// ```
    /// # include!("doctest_setup.rs");
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// assert!(jobs::table.held_per_owner().load(conn)?.is_empty());
    /// # Ok(())
    /// # }
    /// ```
    pub fn load<'q, C>(self, conn: &mut C) -> Result<Vec<(String, i64)>, Error>
    where
        C: Connection,
        C::Backend: RecoversFailedReads,
        Self: LoadQuery<'q, C, (Option<String>, i64)>,
    {
        let rows: Vec<(Option<String>, i64)> =
            read_rows(conn, |conn| RunQueryDsl::load(self, conn))?;
        Ok(rows
            .into_iter()
            .map(|(owner, rows)| (owner.unwrap_or_default(), rows))
            .collect())
    }
}

impl<T, DB> QueryFragment<DB> for HeldPerOwner<T>
where
    DB: Backend,
    T: ClaimLease,
    T::FromClause: QueryFragment<DB>,
{
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        let owner = <OwnerOf<T> as Column>::NAME;
        out.push_sql("SELECT ");
        out.push_identifier(owner)?;
        out.push_sql(", COUNT(*) FROM ");
        self.from_clause.walk_ast(out.reborrow())?;
        out.push_sql(" WHERE ");
        out.push_identifier(<TokenOf<T> as Column>::NAME)?;
        out.push_sql(" IS NOT NULL GROUP BY ");
        out.push_identifier(owner)?;
        out.push_sql(" ORDER BY ");
        out.push_identifier(owner)
    }
}

/// What a [`HeldPerOwner`] is cached by: its table.
#[doc(hidden)]
#[derive(Debug)]
pub struct HeldPerOwnerId<T>(PhantomData<T>);

impl<T: Table + QueryId> QueryId for HeldPerOwner<T> {
    type QueryId = HeldPerOwnerId<T::QueryId>;
    const HAS_STATIC_QUERY_ID: bool = T::HAS_STATIC_QUERY_ID;
}

impl<T: Table> Query for HeldPerOwner<T> {
    type SqlType = (Nullable<Text>, BigInt);
}

impl<T: Table, C> RunQueryDsl<C> for HeldPerOwner<T> {}
