//! A lease table's health: what [`LeaseDsl::health`](crate::LeaseDsl::health) reads, and the
//! warnings it gives.
//!
//! Lease and queue tables are updated all the time: every claim, renewal and release writes a
//! new version of a row. They die of bloat when those versions are not cleaned up: on
//! PostgreSQL a renewal that is not a HOT update writes every index of the table again, and a
//! transaction left open anywhere in the database holds the cleanup horizon back, so dead row
//! versions pile up and `SKIP LOCKED` claims read past more of them each time; on MySQL/MariaDB
//! an old read view keeps the undo history from purge; on SQLite a reader holding an old snapshot
//! keeps the write-ahead log from being checkpointed. One call reads what each backend has, by
//! the database's clock, and warns in plain words, naming the reading, its value and the
//! threshold ([`HealthThresholds`]) it passed.
//!
//! ```
//! # include!("../doctest_setup.rs");
//! use diesel_lease::health::{Measure, Metric};
//! use diesel_lease::prelude::*;
//!
//! # fn main() -> Result<(), diesel_lease::Error> {
//! # let conn = &mut jobs_connection()?;
//! let health = jobs::table.health().run(conn)?;
//! for (metric, value) in health.readings() {
//!     println!("{metric} = {value}");
//! }
//! assert!(matches!(health.get(Metric::Pages), Some(Measure::Count(pages)) if *pages > 0));
//! # Ok(())
//! # }
//! ```
mod measure;
mod metric;
mod report;
mod thresholds;
mod warning;

pub(crate) use measure::unsigned;
pub use measure::Measure;
pub use metric::Metric;
pub(crate) use report::Reading;
pub use report::TableHealth;
pub use thresholds::HealthThresholds;
pub(crate) use warning::Check;
pub use warning::{Threshold, Warning};
