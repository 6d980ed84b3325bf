//! SQLite: TEXT timestamps in one format, written only from SQLite's clock.
//!
//! SQLite compares timestamps as text, and text mis-orders mixed formats
//! (`'12:00:00' < '12:00:00.000'`), so the library writes `claimed_at` always as
//! `YYYY-MM-DD HH:MM:SS.SSS` in UTC and compares it with values of that same format. SQLite's
//! `'now'` is fixed for the whole of one statement. Every statement says itself which rows it
//! changed (`RETURNING`, SQLite 3.35 and later).
//!
//! ```
//! fn clock<ST: diesel_lease::__private::backend::TimestampOn<diesel::sqlite::Sqlite>>() {}
//! clock::<diesel_lease::sql_types::UtcTimestamp>();
//! ```
mod batch;
mod clock;
mod ddl;
mod health;
mod pragmas;
mod types;

pub use pragmas::SqlitePragmas;

impl crate::backend::SupportsReturning for diesel::sqlite::Sqlite {}
crate::backend::runs_natively!(diesel::sqlite::Sqlite);
