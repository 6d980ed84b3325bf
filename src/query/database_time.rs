//! A reading of the database's clock, as a statement of the library's, so that it runs on every
//! connection the other statements run on (a keeper's shortest hold is measured by it).
use diesel::connection::Connection;
use diesel::query_dsl::LoadQuery;

use crate::backend::NativeLeaseQuery;
use crate::backend::{read_optional, LeaseBackend};
use crate::query::LeaseStatement;
use crate::sql::ClockMicros;
use crate::Error;

/// The database's current time, in microseconds since the Unix epoch, whatever the session's
/// time zone: what a [`Keeper`](crate::Keeper) measures a shortest hold by.
///
/// ```
/// # include!("../doctest_setup.rs");
/// use diesel_lease::prelude::*;
/// use diesel_lease::__private::DatabaseTime;
///
/// # fn main() -> Result<(), diesel_lease::Error> {
/// # let conn = &mut jobs_connection()?;
/// let micros: i64 = DatabaseTime.run(conn)?;
/// assert!(micros > 1_700_000_000_000_000, "after November 2023");
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, Copy, Default)]
#[must_use = "a read does nothing until it is run"]
pub struct DatabaseTime;

impl LeaseStatement<i64> for DatabaseTime {
    type Output = i64;
}

impl<'q, C> NativeLeaseQuery<'q, C, i64> for DatabaseTime
where
    C: Connection,
    C::Backend: LeaseBackend,
    diesel::dsl::select<ClockMicros>: LoadQuery<'q, C, i64>,
{
    fn run_native(self, conn: &mut C) -> Result<i64, Error> {
        Ok(read_optional(diesel::select(ClockMicros), conn)?.unwrap_or(i64::MAX))
    }
}

impl<C> crate::RunLeaseDsl<C> for DatabaseTime {}
