//! SQL nodes that read the database's clock; each backend renders them its own way
//! ([`LeaseBackend`](crate::backend::LeaseBackend)).
use std::marker::PhantomData;

use diesel::backend::Backend;
use diesel::expression::{is_aggregate, AppearsOnTable, Expression, SelectableExpression};
use diesel::expression::{TypedExpressionType, ValidGrouping};
use diesel::query_builder::{AstPass, QueryFragment, QueryId};
use diesel::sql_types::Nullable;
use diesel::QueryResult;

use crate::backend::{LeaseBackend, TimestampOn};
use crate::{Age, Lease};

/// The database's current time, typed as the timestamp column `ST` it is compared with or written
/// to; [`now`] makes one whose type the comparison infers.
///
/// ```
/// use diesel::sql_types::Nullable;
/// use diesel_lease::{dsl::Now, sql_types::UtcTimestamp};
///
/// let now = Now::<Nullable<UtcTimestamp>>::default();
/// # let _ = now;
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Now<ST> {
    sql_type: PhantomData<ST>,
}

impl<ST> Default for Now<ST> {
    fn default() -> Self {
        Self {
            sql_type: PhantomData,
        }
    }
}

/// The database's current time, typed as whatever it is compared with: a "due now" filter.
///
/// ```
/// # include!("../doctest_setup.rs");
/// use diesel::prelude::*;
/// use diesel_lease::{now, Lease};
///
/// # fn main() -> Result<(), diesel_lease::Error> {
/// # let conn = &mut jobs_connection()?;
/// // Jobs claimed before now: none yet, none in the future.
/// let before_now: i64 = jobs::table.filter(jobs::claimed_at.lt(now())).count().get_result(conn)?;
/// assert_eq!(before_now, 0);
/// # Ok(())
/// # }
/// ```
pub fn now<ST>() -> Now<ST> {
    Now::default()
}

/// The database's current time minus an [`Age`], typed as the timestamp column `ST`.
///
/// ```
/// use diesel::sql_types::Nullable;
/// use diesel_lease::{__private::sql::Ago, sql_types::UtcTimestamp, Lease};
///
/// let a_minute_ago = Ago::<Nullable<UtcTimestamp>>::new(Lease::from_secs(60)?.into());
/// # let _ = a_minute_ago;
/// # Ok::<(), diesel_lease::Error>(())
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Ago<ST> {
    micros: i64,
    sql_type: PhantomData<ST>,
}

impl<ST> Ago<ST> {
    /// The database's now minus `age`.
    ///
    /// ```
    /// # use diesel::sql_types::Nullable;
    /// let now = diesel_lease::__private::sql::Ago::<Nullable<diesel_lease::sql_types::UtcTimestamp>>::new(diesel_lease::Age::ZERO);
    /// # let _ = now;
    /// ```
    pub fn new(age: Age) -> Self {
        Self {
            micros: *age.micros(),
            sql_type: PhantomData,
        }
    }

    pub(crate) fn lease(lease: Lease) -> Self {
        Self::new(lease.into())
    }

    /// The database's now minus `micros` microseconds, which may be negative: a time to come.
    pub(crate) fn micros(micros: i64) -> Self {
        Self {
            micros,
            sql_type: PhantomData,
        }
    }
}

/// SQL `NULL` typed as `ST`: what [`ClaimLease::released`](crate::ClaimLease::released) writes,
/// with no bound value.
///
/// ```
/// use diesel::sql_types::{Nullable, Text};
///
/// let null = diesel_lease::dsl::Null::<Nullable<Text>>::default();
/// # let _ = null;
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Null<ST> {
    sql_type: PhantomData<ST>,
}

impl<ST> Default for Null<ST> {
    fn default() -> Self {
        Self {
            sql_type: PhantomData,
        }
    }
}

/// How long ago the timestamp `T` (a lease column) was, in microseconds by the database's clock:
/// a `Nullable<BigInt>`, so that no application clock takes part in an age.
///
/// ```
/// # include!("../doctest_setup.rs");
/// use diesel::prelude::*;
/// use diesel_lease::{__private::sql::MicrosSince, prelude::*};
///
/// # fn main() -> Result<(), diesel_lease::Error> {
/// # let conn = &mut jobs_connection()?;
/// let age = std::time::Duration::from_secs(90);
/// diesel::update(jobs::table.find(1))
///     .set(jobs::table.taken_ago(&Claim::new("worker-1")?, Age::new(age)?))
///     .execute(conn)?;
/// let micros: Option<i64> =
///     jobs::table.find(1).select(MicrosSince::new(jobs::claimed_at)).first(conn)?;
/// assert!(micros.is_some_and(|micros| micros >= 90_000_000));
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, Copy)]
pub struct MicrosSince<T> {
    timestamp: T,
}

impl<T> MicrosSince<T> {
    /// The age of `timestamp`.
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # fn main() {
    /// let _age = diesel_lease::__private::sql::MicrosSince::new(jobs::claimed_at);
    /// # }
    /// ```
    pub fn new(timestamp: T) -> Self {
        Self { timestamp }
    }
}

impl<T: Expression> Expression for MicrosSince<T> {
    type SqlType = Nullable<diesel::sql_types::BigInt>;
}

impl<T: AppearsOnTable<QS> + Expression, QS> AppearsOnTable<QS> for MicrosSince<T> {}

impl<T: SelectableExpression<QS> + Expression, QS> SelectableExpression<QS> for MicrosSince<T> {}

impl<T, GroupBy> ValidGrouping<GroupBy> for MicrosSince<T> {
    type IsAggregate = is_aggregate::Never;
}

impl<T: QueryId> QueryId for MicrosSince<T> {
    type QueryId = MicrosSince<T::QueryId>;
    const HAS_STATIC_QUERY_ID: bool = T::HAS_STATIC_QUERY_ID;
}

impl<T: QueryFragment<DB>, DB: LeaseBackend> QueryFragment<DB> for MicrosSince<T> {
    fn walk_ast<'b>(&'b self, out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        DB::walk_micros_since(&self.timestamp, out)
    }
}

/// The database's clock as microseconds since the Unix epoch, a `BigInt`: a reading of the
/// database's time that the application can keep, to measure a later reading against, without
/// consulting a clock of its own.
///
/// ```
/// # include!("../doctest_setup.rs");
/// use diesel::prelude::*;
/// use diesel_lease::__private::sql::ClockMicros;
///
/// # fn main() -> Result<(), diesel_lease::Error> {
/// # let conn = &mut jobs_connection()?;
/// let first: i64 = diesel::select(ClockMicros).get_result(conn)?;
/// let second: i64 = diesel::select(ClockMicros).get_result(conn)?;
/// assert!(first > 1_700_000_000_000_000 && second >= first);
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, Copy, Default, QueryId)]
pub struct ClockMicros;

impl Expression for ClockMicros {
    type SqlType = diesel::sql_types::BigInt;
}

impl<QS> AppearsOnTable<QS> for ClockMicros {}

impl<QS> SelectableExpression<QS> for ClockMicros {}

impl<GroupBy> ValidGrouping<GroupBy> for ClockMicros {
    type IsAggregate = is_aggregate::Never;
}

impl<DB: LeaseBackend> QueryFragment<DB> for ClockMicros {
    fn walk_ast<'b>(&'b self, out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        DB::walk_clock_micros(out)
    }
}

impl<ST, DB> QueryFragment<DB> for Now<ST>
where
    DB: LeaseBackend,
    ST: TimestampOn<DB>,
{
    fn walk_ast<'b>(&'b self, out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        DB::walk_now(out)
    }
}

impl<ST, DB> QueryFragment<DB> for Ago<ST>
where
    DB: LeaseBackend,
    ST: TimestampOn<DB>,
{
    fn walk_ast<'b>(&'b self, out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        DB::walk_ago(&self.micros, out)
    }
}

impl<ST, DB: Backend> QueryFragment<DB> for Null<ST> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        out.push_sql("NULL");
        Ok(())
    }
}

/// The trait impls every SQL node of this module shares: typed as `ST`, valid on any table and
/// in any grouping, and cached by type (their SQL text never varies; values are bound).
macro_rules! sql_node {
    ($($node:ident),+) => {$(
        impl<ST: TypedExpressionType> Expression for $node<ST> {
            type SqlType = ST;
        }

        impl<ST: TypedExpressionType, QS> AppearsOnTable<QS> for $node<ST> {}

        impl<ST: TypedExpressionType, QS> SelectableExpression<QS> for $node<ST> {}

        impl<ST, GroupBy> ValidGrouping<GroupBy> for $node<ST> {
            type IsAggregate = is_aggregate::Never;
        }

        impl<ST: 'static> QueryId for $node<ST> {
            type QueryId = Self;
            const HAS_STATIC_QUERY_ID: bool = true;
        }
    )+};
}

sql_node!(Now, Ago, Null);
