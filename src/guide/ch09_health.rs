//! # Chapter 9: Health
//!
//! Lease and queue tables die of bloat. Every claim, renewal and release writes a new version
//! of a row, and a transaction left open anywhere in the database keeps the old versions
//! from being cleaned, so each claim reads past more of them.
//! [`LeaseDsl::health`](crate::LeaseDsl::health) reads, for one lease table, what its backend
//! knows of this, by the database's clock, and warns in plain words. It gives a
//! [`TableHealth`](crate::TableHealth): readings with stable names (for a metrics exporter), and
//! warnings that name the reading, its value and the threshold passed.
//!
//! ```
//! # include!("../doctest_setup.rs");
//! use std::time::Duration;
//!
//! use diesel_lease::prelude::*;
//! use diesel_lease::HealthThresholds;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let conn = &mut jobs_connection()?;
//! // The default thresholds, but a transaction open for a minute is one too many here.
//! let thresholds = HealthThresholds::default().max_transaction_age(Duration::from_secs(60));
//! let health = jobs::table.health().thresholds(thresholds).run(conn)?;
//! print!("{health}"); // a short report: each reading, then each warning
//!
//! for (metric, value) in health.readings() {
//!     if let Some(value) = value.as_f64() {
//!         println!("lease_table_{metric}{{table=\"{}\"}} {value}", health.table());
//!     }
//! }
//! for warning in health.warnings() {
//!     eprintln!("{}: {warning}", warning.metric()); // an alert, say
//! }
//! # Ok(())
//! # }
//! ```
//!
//! What each reading and warning means on each backend, the default thresholds, and how to keep
//! renewals cheap (HOT updates on PostgreSQL) and long transactions away are for operators:
//! [docs/operations.md](https://github.com/diesel-lease/diesel-lease/blob/main/docs/operations.md#lease-table-health).
