//! MySQL/MariaDB: `DATETIME(6)` columns holding UTC, `UTC_TIMESTAMP(6)`, matched-row counts.
//!
//! `NOW()` and `CURRENT_TIMESTAMP` follow the session's `time_zone` and `TIMESTAMP` columns are
//! shifted by it; `UTC_TIMESTAMP(6)` into `DATETIME(6)` is the same whatever a session sets.
//! MySQL has no `RETURNING`: a claim's matched-row count (Diesel always asks for matched, not
//! changed, rows) says whether it won, then the row is read by the claim's token; a batch is a
//! short READ COMMITTED transaction.
//!
//! Owners and tokens are compared exactly whatever the columns' collation
//! (`CAST(CONVERT(column USING utf8mb4) AS BINARY)` beside the plain `=`): the default collations
//! ignore case, and would let `T1` hold a row claimed by `t1`. A binary collation for the token
//! column (`VARCHAR(255) COLLATE utf8mb4_bin`) still lets its index alone tell tokens apart.
//!
//! ```
//! # fn main() {}
//! fn clock<ST: diesel_lease::__private::backend::TimestampOn<diesel::mysql::Mysql>>() {}
//! ```
mod batch;
mod claim;
mod clock;
mod ddl;
mod health;
mod held;
mod transaction;
mod types;

pub use batch::{Candidates, LockKeys};

crate::backend::runs_natively!(diesel::mysql::Mysql);
