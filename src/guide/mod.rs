//! The guide: how to hold leases in the rows of your own Diesel tables, one concern a chapter.
//!
//! Read it in order the first time. Each chapter tells the story and links to the items, whose
//! own pages hold the details. Every snippet is a doctest that runs on SQLite, so what you read
//! here compiled and ran when these docs were built.
//!
//! The snippets share one table, `jobs`, declared as you would declare it:
//!
//! ```text
//! diesel::table! {
//!     jobs (id) {
//!         id -> BigInt,
//!         status -> Text,
//!         owner -> Nullable<Text>,
//!         claim_token -> Nullable<Text>,
//!         claimed_at -> Nullable<diesel_lease::sql_types::UtcTimestamp>,
//!     }
//! }
//! diesel_lease::claim_lease!(jobs);
//! ```
//!
//! A snippet's hidden lines make that table, with job 1 queued, on an in-memory SQLite database
//! (`jobs_connection()`) or on a pool of a database file (`jobs_pool()`). `fenced_jobs` is the
//! same table with a fourth column, the fence.
//!
//! # Chapters
//!
//! 1. [Claiming a row](ch01_claiming_a_row): a lease, a claim, won or refused, and why.
//! 2. [A queue](ch02_a_queue): batches of the next due rows, their order, waiting for work.
//! 3. [Holding](ch03_holding): renewals, writes and releases, and the [`Keeper`](crate::Keeper)
//!    that renews for you, its statistics and its drain at shutdown.
//! 4. [Fences](ch04_fences): a number that orders holders, for effects outside the database.
//! 5. [Reaping and node lives](ch05_reaping_and_node_lives): rows whose holders are gone.
//! 6. [Adding the lease columns](ch06_adding_the_lease_columns): [`claim_lease!`](crate::claim_lease),
//!    the column types, and the migration [`LeaseColumns`](crate::LeaseColumns) writes.
//! 7. [Testing](ch07_testing): the `testkit` feature, for tests of your own tables.
//! 8. [Generic code](ch08_generic_code): one bound per statement, and `multi_connection!`.
//! 9. [Health](ch09_health): one read that says whether a lease table is bloating.
//!
//! Two ready-made kinds of lock are built on this crate, in crates of their own:
//! [`diesel-lease-tasks`](https://docs.rs/diesel-lease-tasks) (a scheduled task run on one node
//! at a time) and [`diesel-lease-agent`](https://docs.rs/diesel-lease-agent) (the turn and user
//! locks of an AI-agent chat).
//!
//! Running it in production (timeouts, PgBouncer, pool sizes, what a table's health readings
//! mean) is in
//! [docs/operations.md](https://github.com/diesel-lease/diesel-lease/blob/main/docs/operations.md).

pub mod ch01_claiming_a_row;
pub mod ch02_a_queue;
pub mod ch03_holding;
pub mod ch04_fences;
pub mod ch05_reaping_and_node_lives;
pub mod ch06_adding_the_lease_columns;
pub mod ch07_testing;
pub mod ch08_generic_code;
pub mod ch09_health;
