//! # Chapter 1: Claiming a row
//!
//! A lease is three nullable columns of a row: who holds it (`owner`), which claim this is
//! (`claim_token`) and since when (`claimed_at`). [`claim_lease!`](crate::claim_lease) names
//! them for a table (chapter 6 says how to add them). A row whose token is `NULL` is free; a row
//! whose lease is older than its length is free again.
//!
//! Two values go into every claim:
//!
//! * a [`Lease`](crate::Lease): how long a claim holds the row unless it is renewed. It is
//!   checked when made (1 ms to 30 days).
//! * a [`Claim`](crate::Claim): who claims (the owner you name) and a new random token. The
//!   token guards every later write to what the claim won. Make a new `Claim` for each row or
//!   batch you take: the same owner, a new token. An owner or a token that is empty, longer than
//!   255 characters, or has control characters or white space at either end is refused.
//!
//! ## Won or refused
//!
//! [`LeaseDsl::claim_row`](crate::LeaseDsl::claim_row) claims one row by its key (any primary
//! key, a composite one too). The statement reads as the sentence you would say: claim row 1 of
//! jobs, by this worker, where it is queued, setting it running. It ends with `.run(conn)`, like
//! every statement of the library. The claim, your filter and your changes are one conditional
//! `UPDATE`, and whether it won is read from that statement.
//!
//! ```
//! # include!("../doctest_setup.rs");
//! use diesel::prelude::*;
//! use diesel_lease::prelude::*;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let conn = &mut jobs_connection()?;
//! let lease = Lease::from_secs(30)?;
//! let worker = Claim::new("worker-1")?;
//!
//! let outcome = jobs::table
//!     .claim_row(1, lease)
//!     .by(&worker)
//!     .filter(jobs::status.eq("queued"))
//!     .set(jobs::status.eq("running"))
//!     .returning(Job::as_select())
//!     .run(conn)?;
//! let won = outcome.won().expect("job 1 was free");
//! assert_eq!(won.row().status, "running");
//! assert_eq!(won.row().owner.as_deref(), Some("worker-1"));
//! # Ok(())
//! # }
//! ```
//!
//! The outcome is a [`Claimed`](crate::Claimed): [`Won`](crate::Won) with the row you asked for
//! (`.returning(..)`, as in Diesel), or [`Refused`](crate::Refused). A `Won` is the holder's
//! handle: chapter 3 renews, writes to and releases the row through it.
//!
//! ## Why a claim was refused
//!
//! A refused claim says why: right after the claim, the run reads the row once, by the
//! database's clock, and [`Refused::why`](crate::Refused::why) gives that
//! [`Refusal`](crate::Refusal): the row is held (by whom, for how long yet), there is no such
//! row, your filter does not take it, or it was freed in between. Whether the claim won is the
//! claim statement's own answer; the read only explains a refusal.
//!
//! ```
//! # include!("../doctest_setup.rs");
//! use diesel::prelude::*;
//! use diesel_lease::prelude::*;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let conn = &mut jobs_connection()?;
//! let lease = Lease::from_secs(30)?;
//! let first = jobs::table.claim_row(1, lease).by(&Claim::new("worker-1")?).run::<Job>(conn)?;
//! assert!(first.is_won());
//!
//! let second = jobs::table.claim_row(1, lease).by(&Claim::new("worker-2")?).run::<Job>(conn)?;
//! let Claimed::Refused(refused) = second else { panic!("the lease is fresh") };
//! match refused.why() {
//!     Refusal::Held(holder) => {
//!         assert_eq!(holder.owner, "worker-1");
//!         println!("held: {holder}"); // worker-1 (claim ..) for .., frees in ..
//!     }
//!     other => panic!("unexpected: {other:?}"),
//! }
//! # Ok(())
//! # }
//! ```
//!
//! ## Releasing
//!
//! The holder gives the row back with [`release`](crate::Holds::release) (what every holder has,
//! [`Holds`](crate::Holds): a row won, a batch, rows named by key), with your changes
//! in the same statement. The release is guarded by the claim's token: it changes the row only
//! if this claim still holds it, and says whether it did.
//!
//! ```
//! # include!("../doctest_setup.rs");
//! use diesel::prelude::*;
//! use diesel_lease::prelude::*;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let conn = &mut jobs_connection()?;
//! let lease = Lease::from_secs(30)?;
//! let outcome = jobs::table.claim_row(1, lease).by(&Claim::new("worker-1")?).run::<Job>(conn)?;
//! let won = outcome.won().expect("free");
//! assert!(won.release().set(jobs::status.eq("done")).run(conn)?);
//! assert!(!won.release().run(conn)?, "released already: nothing left to release");
//! # Ok(())
//! # }
//! ```
//!
//! ## The clock, and errors
//!
//! Every time the library writes or compares comes from the database, never from the process:
//! two nodes whose clocks disagree still agree on who holds a row. [`now`](crate::now) is that
//! clock, for your own statements. Every failure is a variant of [`Error`](crate::Error), and
//! input that is not valid is refused before anything is sent. SQLite's "database is locked" is
//! [`Error::Busy`](crate::Error::Busy), worth trying again. A claim that loses a deadlock outside
//! a transaction of yours is refused like any lost race.
//!
//! ## Statements you write yourself
//!
//! The pieces of a claim are there for statements you compose with Diesel.
//! [`ClaimLease`](crate::ClaimLease), which `claim_lease!` implements, gives changesets for
//! `.set(..)` (`taken(&claim)`, `renewed()`, `released()`) and predicates for `.filter(..)`
//! (`claimable(lease)`, `unclaimed()`, `held_by(token)`, `outlived(lease)`, `fresh(lease)`).
//! [`update`](crate::update) is `diesel::update` prepared once per connection and SQL text.
//!
//! ```
//! # include!("../doctest_setup.rs");
//! use diesel::prelude::*;
//! use diesel_lease::prelude::*;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let conn = &mut jobs_connection()?;
//! let lease = Lease::from_secs(30)?;
//! let worker = Claim::new("worker-1")?;
//! let claimed = diesel_lease::update(jobs::table.find(1).filter(jobs::table.claimable(lease)))
//!     .set((jobs::table.taken(&worker), jobs::status.eq("running")))
//!     .execute(conn)?;
//! assert_eq!(claimed, 1);
//! # Ok(())
//! # }
//! ```
//!
//! These pieces are Diesel's statements to diesel-async too: on `AsyncPgConnection`,
//! `AsyncMysqlConnection` or `SyncConnectionWrapper<SqliteConnection>`, the same claim is one
//! `UPDATE` run by `diesel_async::RunQueryDsl`, its matched-row count the answer, every time the
//! database's. (The library's own statements, `.claim_row(..)` and the rest, and the
//! [`Keeper`](crate::Keeper) run on Diesel's connections for now.)
//!
//! ```
//! # include!("../doctest_setup.rs");
//! # #[cfg(feature = "sqlite")]
//! # mod on_sqlite {
//! # use super::jobs;
//! use diesel::prelude::*;
//! use diesel_async::sync_connection_wrapper::SyncConnectionWrapper;
//! use diesel_async::{AsyncConnection, RunQueryDsl};
//! use diesel_lease::prelude::*;
//!
//! /// Claims job `id` for `worker`: whether it won.
//! async fn claim_job<C>(conn: &mut C, id: i64, worker: &Claim) -> Result<bool, diesel_lease::Error>
//! where
//!     C: diesel_async::AsyncConnection<Backend = diesel::sqlite::Sqlite>,
//! {
//!     let lease = Lease::from_secs(30)?;
//!     let claimed = diesel_lease::update(jobs::table.find(id).filter(jobs::table.claimable(lease)))
//!         .set((jobs::table.taken(worker), jobs::status.eq("running")))
//!         .execute(conn)
//!         .await?;
//!     Ok(claimed == 1)
//! }
//!
//! pub async fn run() -> Result<(), Box<dyn std::error::Error>> {
//!     let conn = &mut SyncConnectionWrapper::<diesel::SqliteConnection>::establish(":memory:").await?;
//! #   diesel::sql_query("CREATE TABLE jobs (id BIGINT PRIMARY KEY, status TEXT NOT NULL, owner TEXT, claim_token TEXT, claimed_at TEXT)").execute(conn).await?;
//! #   diesel::sql_query("INSERT INTO jobs (id, status) VALUES (1, 'queued')").execute(conn).await?;
//!     assert!(claim_job(conn, 1, &Claim::new("worker-1")?).await?);
//!     assert!(!claim_job(conn, 1, &Claim::new("worker-2")?).await?, "held by worker-1");
//!     Ok(())
//! }
//! # }
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # #[cfg(feature = "sqlite")]
//! # tokio::runtime::Builder::new_current_thread().build()?.block_on(on_sqlite::run())?;
//! # Ok(())
//! # }
//! ```
//!
//! Next: [chapter 2, a queue](super::ch02_a_queue).
