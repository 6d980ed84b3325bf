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
