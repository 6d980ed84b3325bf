//! # Chapter 8: Generic code
//!
//! Code written for one connection type needs no bounds: the snippets of the earlier chapters
//! are such code. Code generic over the connection, to run on PostgreSQL, MySQL/MariaDB and
//! SQLite alike, has two ways.
//!
//! ## One bound per statement
//!
//! Every statement of the library ends with `.run(conn)`, bounded by one trait,
//! [`LeaseQuery`](crate::LeaseQuery), as Diesel's queries are by `LoadQuery`. A function generic
//! over `C` writes one bound for each statement it runs: "this claim can run on `C`, giving back
//! `Job`s". The bound names the statement's type, and Diesel's `auto_type` names it: a function
//! that builds the statement, with `diesel_lease::dsl` as its `dsl_path`, gets a type of its own
//! name, whatever filters and changes the statement has. A holder's statements are named by
//! what holds the rows, in [`dsl`](crate::dsl): `dsl::Renew<H>`, `dsl::Write<H, Changes>` and
//! `dsl::Release<H, Changes>`.
//!
//! ```
//! # include!("../doctest_setup.rs");
//! use diesel::prelude::*;
//! use diesel_lease::prelude::*;
//! use diesel_lease::dsl;
//!
//! /// The claim every worker makes: the next queued jobs, started.
//! #[diesel::dsl::auto_type(dsl_path = "diesel_lease::dsl")]
//! fn next_jobs<'a>(size: usize, lease: Lease, worker: &'a Claim) -> _ {
//!     jobs::table
//!         .claim_batch(size, lease)
//!         .by(worker)
//!         .filter(jobs::status.eq("queued"))
//!         .set(jobs::status.eq("running"))
//! }
//!
//! /// What a finished job is set to, in the statement that releases it.
//! type Done = diesel::dsl::Eq<jobs::status, &'static str>;
//!
//! /// Claims the next jobs and finishes them, on any connection that can run both statements.
//! fn work<C>(conn: &mut C, worker: &Claim) -> Result<usize, diesel_lease::Error>
//! where
//!     for<'a, 'q> next_jobs<'a>: LeaseQuery<'q, C, Job>,
//!     for<'q> dsl::Release<Batch<Job, jobs::table>, Done>: LeaseQuery<'q, C, i64>,
//! {
//!     let batch = next_jobs(10, Lease::from_secs(30)?, worker).run::<Job>(conn)?;
//!     // ... the work ...
//!     Ok(batch.release().set(jobs::status.eq("done")).run(conn)?.len())
//! }
//!
//! # fn main() -> Result<(), diesel_lease::Error> {
//! # let conn = &mut jobs_connection()?;
//! assert_eq!(work(conn, &Claim::new("worker-1")?)?, 1);
//! # Ok(())
//! # }
//! ```
//!
//! A holder's statements answer whether the row was still held for a row won
//! (`dsl::Release<Won<Job, jobs::table>>`), the keys for the rest (`Batch`, `HeldRows`, `Kept`).
//! A wait run on a pool is bounded by its claim's own bound, over the pool's connection: it
//! runs nothing else.
//!
//! The repository's `job_queue` example is a whole queue written like this: its statements are
//! such functions, and its code bounds each once.
//!
//! ## A connection enum: `multi_connection!`
//!
//! Diesel's other answer for several backends is a connection enum of
//! `#[derive(diesel::MultiConnection)]`. Write [`multi_connection!`](crate::multi_connection)
//! beside the derive, with the same variants, and every statement of the library runs on the
//! enum with no bound at all: each on the connection inside, with that backend's own SQL (a
//! claim on MySQL/MariaDB is a short transaction, not one SQL text the derive could render). A
//! [`Keeper`](crate::Keeper) of a pool of the enum keeps claims of any backend, and the lease
//! columns' changesets and predicates go into Diesel's own statements on the enum. The macro's
//! page has the whole example.
//!
//! Next: [chapter 9, health](super::ch09_health).
