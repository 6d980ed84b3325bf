//! The portable timestamp SQL type for lease columns.

/// A UTC timestamp that reads back as `chrono::DateTime<Utc>` on every backend.
///
/// Declare `claimed_at` columns with it in `table!` to share one schema across backends. Its
/// column type is `TIMESTAMPTZ` on PostgreSQL, `DATETIME(6)` holding UTC on MySQL/MariaDB, and
/// `TEXT` on SQLite, where the library writes it as `YYYY-MM-DD HH:MM:SS.SSS` in UTC. Only the
/// database's clock writes it (through [`now`](crate::now) and the dated-back changesets); the library never
/// binds an application time into it.
///
/// ```
/// diesel::table! {
///     use diesel::sql_types::*;
///     use diesel_lease::sql_types::UtcTimestamp;
///
///     jobs (id) {
///         id -> BigInt,
///         owner -> Nullable<Text>,
///         claim_token -> Nullable<Text>,
///         claimed_at -> Nullable<UtcTimestamp>,
///     }
/// }
/// # fn main() {}
/// ```
#[derive(
    Debug, Clone, Copy, Default, diesel::query_builder::QueryId, diesel::sql_types::SqlType,
)]
pub struct UtcTimestamp;

/// A SQL type a lease's `claimed_at` column may have: one the clock of a backend compiled in
/// writes, nullable (a free row has no time). `Nullable<UtcTimestamp>` on every backend;
/// `Nullable<Timestamptz>` on PostgreSQL, `Nullable<Datetime>` on MySQL/MariaDB and
/// `Nullable<Timestamp>` on SQLite, each with that backend's feature. Checked where
/// [`claim_lease!`](crate::claim_lease) names the columns, so that a column of another type
/// (`Nullable<Text>`, say) fails there, naming its type, not at the first claim.
///
/// ```
/// use diesel::sql_types::Nullable;
/// use diesel_lease::sql_types::{ClaimedAtType, UtcTimestamp};
///
/// fn lease_clock<ST: ClaimedAtType>() {}
/// lease_clock::<Nullable<UtcTimestamp>>();
/// ```
#[diagnostic::on_unimplemented(
    message = "a lease's `claimed_at` column cannot be of SQL type `{Self}`",
    label = "the `claimed_at` column's type",
    note = "declare `claimed_at` as `Nullable<diesel_lease::sql_types::UtcTimestamp>` (every backend), or `Nullable<Timestamptz>` on PostgreSQL, `Nullable<Datetime>` on MySQL/MariaDB, `Nullable<Timestamp>` on SQLite, with diesel-lease's feature for that backend on"
)]
pub trait ClaimedAtType {}

impl ClaimedAtType for diesel::sql_types::Nullable<UtcTimestamp> {}
