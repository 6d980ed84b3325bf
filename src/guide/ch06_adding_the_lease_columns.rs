//! # Chapter 6: Adding the lease columns
//!
//! Any table with a primary key can hold leases. It needs three nullable columns, whatever
//! their names: who holds the row, the claim's token, and since when. `NULL` in all three is a
//! free row.
//!
//! ## Naming them: `claim_lease!`
//!
//! [`claim_lease!`](crate::claim_lease) tells the library which columns play which role.
//! `claim_lease!(jobs)` alone means `owner`, `claim_token` and `claimed_at`; name your own by
//! role, and add `fence: column` for a fence (chapter 4).
//!
//! ```
//! # include!("../doctest_setup.rs");
//! use diesel::prelude::*;
//! use diesel_lease::prelude::*;
//!
//! diesel::table! {
//!     use diesel::sql_types::*;
//!     use diesel_lease::sql_types::UtcTimestamp;
//!
//!     exports (id) {
//!         id -> BigInt,
//!         worker -> Nullable<Text>,
//!         lease_token -> Nullable<Text>,
//!         leased_at -> Nullable<UtcTimestamp>,
//!     }
//! }
//!
//! diesel_lease::claim_lease!(exports { owner: worker, claim_token: lease_token, claimed_at: leased_at });
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let conn = &mut empty_connection()?;
//! # diesel::sql_query(format!("CREATE TABLE exports (id BIGINT PRIMARY KEY, worker VARCHAR(255), lease_token VARCHAR(255), leased_at {TIMESTAMP})")).execute(conn)?;
//! # diesel::sql_query("INSERT INTO exports (id) VALUES (7)").execute(conn)?;
//! let won = exports::table
//!     .claim_row(7, Lease::from_secs(30)?)
//!     .by(&Claim::new("worker-1")?)
//!     .returning(exports::worker)
//!     .run::<Option<String>>(conn)?;
//! assert_eq!(won.won().map(|won| won.into_row()), Some(Some("worker-1".to_owned())));
//! # Ok(())
//! # }
//! ```
//!
//! Declare the time column as [`UtcTimestamp`](crate::sql_types::UtcTimestamp). It reads back as
//! `chrono::DateTime<Utc>` on every backend, so one `table!` serves all three. On the database
//! it is `TIMESTAMPTZ` on PostgreSQL, `DATETIME(6)` holding UTC on MySQL/MariaDB, and `TEXT` on
//! SQLite. Never make it a MySQL `TIMESTAMP` (the session's time zone shifts it) or a PostgreSQL
//! `timestamp` without time zone.
//!
//! ## The migration: `LeaseColumns`
//!
//! [`LeaseColumns`](crate::LeaseColumns) writes the diesel migration that adds the lease columns
//! to an existing table, typed for the backend, with an index on the token. On PostgreSQL it also
//! sets the table's fillfactor to 90, so that renewals find room on the row's page and stay
//! cheap (chapter 9). `down.sql` undoes it. Names are quoted, and a name that is not a plain
//! identifier is refused, with nothing written.
//!
//! ```
//! use diesel_lease::LeaseColumns;
//!
//! # #[cfg(feature = "sqlite")]
//! # fn main() -> Result<(), diesel_lease::Error> {
//! type Backend = diesel::sqlite::Sqlite; // or diesel::pg::Pg, diesel::mysql::Mysql
//!
//! let columns = LeaseColumns::new("jobs")
//!     .owner("worker")
//!     .claim_token("lease_token")
//!     .claimed_at("leased_at")
//!     .fence("fence");
//! println!("{}", columns.up_sql::<Backend>()?);
//!
//! let dir = std::env::temp_dir().join(format!("guide-migrations-{}", std::process::id()));
//! columns.write_migration::<Backend>(&dir, "2026-11-30-120000_lease_columns_jobs")?; // up.sql, down.sql
//! assert!(dir.join("2026-11-30-120000_lease_columns_jobs/up.sql").exists());
//! # std::fs::remove_dir_all(&dir).ok();
//! # Ok(())
//! # }
//! # #[cfg(not(feature = "sqlite"))]
//! # fn main() {}
//! ```
//!
//! The repository's `lease_columns` example does the same from the command line:
//!
//! ```text
//! cargo run --example lease_columns --features postgres -- --backend postgres --table jobs \
//!     --owner worker --claim-token lease_token --claimed-at leased_at --fence fence \
//!     --claim-index status=queued:id --out migrations
//! ```
//!
//! ## The index a queue's claims need
//!
//! A queue keeps its finished rows, and its claims take the first due rows in some order. With
//! [`ClaimIndex`](crate::ClaimIndex), the migration adds an index on just those rows: a partial
//! index on PostgreSQL and SQLite, an index on the status and then the key on MySQL/MariaDB.
//! Claims use it when they filter on that status and order by that key
//! (`.filter(jobs::status.eq("queued")).order_by(jobs::id)`). Rows whose claims ran out are then
//! not queued any more, so reap them back (chapter 5). A renewal writes `claimed_at` alone and
//! does not touch this index. Measurement 11 of
//! [docs/benchmarks.md](https://github.com/diesel-lease/diesel-lease/blob/main/docs/benchmarks.md)
//! claims from queues of up to 1,000,000 rows with it.
//!
//! ```
//! use diesel_lease::{ClaimIndex, LeaseColumns};
//!
//! # #[cfg(feature = "sqlite")]
//! # fn main() -> Result<(), diesel_lease::Error> {
//! let columns = LeaseColumns::new("jobs")
//!     .claim_index(ClaimIndex::rows_where("status", "queued").in_order_of("id"));
//! assert!(columns.up_sql::<diesel::sqlite::Sqlite>()?.contains(
//!     r#"CREATE INDEX "jobs_claimable_idx" ON "jobs" ("id") WHERE "status" = 'queued';"#
//! ));
//! # Ok(())
//! # }
//! # #[cfg(not(feature = "sqlite"))]
//! # fn main() {}
//! ```
//!
//! Next: [chapter 7, testing](super::ch07_testing).
