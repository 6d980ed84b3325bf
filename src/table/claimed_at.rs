//! The SQL types a lease's `claimed_at` column may have.

/// A SQL type a lease's `claimed_at` column may have: one the clock of a backend compiled in
/// writes, nullable (a free row has no time). `Nullable<UtcTimestamp>` on every backend;
/// `Nullable<Timestamptz>` on PostgreSQL, `Nullable<Datetime>` on MySQL/MariaDB and
/// `Nullable<Timestamp>` on SQLite, each with that backend's feature. Checked where
/// [`claim_lease!`](crate::claim_lease) names the columns, so that a column of another type
/// (`Nullable<Text>`, say) fails there, naming its type, not at the first claim.
///
/// ```
/// use diesel::sql_types::Nullable;
/// use diesel_lease::__private::ClaimedAtType;
/// use diesel_lease::sql_types::UtcTimestamp;
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

impl ClaimedAtType for diesel::sql_types::Nullable<crate::sql_types::UtcTimestamp> {}
