//! The bounds of the SQL nodes on a backend: which timestamp types its clock writes, and whether
//! it has `RETURNING`. Named by the library's bounds, never by users.
use diesel::backend::Backend;
use diesel::sql_types::{Nullable, SqlType};

/// A timestamp SQL type that the clock of backend `DB` can write.
///
/// PostgreSQL: `Timestamptz`; MySQL/MariaDB: `Datetime` (never `Timestamp`, which the session
/// time zone shifts); SQLite: `Timestamp` (TEXT); every backend:
/// [`UtcTimestamp`](crate::sql_types::UtcTimestamp); and any of them `Nullable`.
///
/// ```
/// # include!("../doctest_setup.rs");
/// use diesel::sql_types::Nullable;
/// use diesel_lease::{__private::backend::TimestampOn, sql_types::UtcTimestamp};
///
/// fn writable<ST: TimestampOn<DocBackend>>() {}
/// # fn main() {
/// writable::<Nullable<UtcTimestamp>>();
/// # }
/// ```
#[diagnostic::on_unimplemented(
    message = "the clock of `{DB}` cannot write a lease column of SQL type `{Self}`",
    note = "declare `claimed_at` as `Nullable<diesel_lease::sql_types::UtcTimestamp>`, or the backend's own UTC timestamp type"
)]
pub trait TimestampOn<DB>: SqlType {}

impl<ST, DB> TimestampOn<DB> for Nullable<ST> where
    ST: TimestampOn<DB> + SqlType<IsNull = diesel::sql_types::is_nullable::NotNull>
{
}

/// A backend with `RETURNING`: PostgreSQL, and SQLite (3.35 and later).
///
/// ```
/// fn returns<DB: diesel_lease::__private::backend::SupportsReturning>() {}
/// # #[cfg(feature = "sqlite")]
/// returns::<diesel::sqlite::Sqlite>();
/// # #[cfg(feature = "postgres")]
/// # returns::<diesel::pg::Pg>();
/// ```
pub trait SupportsReturning: Backend {}
