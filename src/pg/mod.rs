//! PostgreSQL: `timestamptz` columns, `statement_timestamp()`, and `RETURNING`.
//!
//! `now()` and `CURRENT_TIMESTAMP` are the transaction's start: a claim taken late in a long
//! transaction would be dated back and expire early. `statement_timestamp()` is the time the
//! statement arrived, the same for every row and comparison in it. Every statement says itself
//! which rows it changed (`RETURNING`); a batch picks its rows with `FOR UPDATE SKIP LOCKED`.
//!
//! ```
//! # include!("../doctest_setup.rs");
//! # fn main() {}
//! #[cfg(feature = "postgres")]
//! fn clock<ST: diesel_lease::__private::backend::TimestampOn<diesel::pg::Pg>>() {}
//! ```
mod batch;
mod clock;
mod ddl;
mod health;
mod pooling;
mod types;

pub use pooling::PgTransactionPooling;

impl crate::backend::SupportsReturning for diesel::pg::Pg {}
crate::backend::runs_natively!(diesel::pg::Pg);
