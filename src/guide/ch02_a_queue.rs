//! # Chapter 2: A queue
//!
//! A queue's workers do not ask for a row by its key: they take the next due rows.
//! [`LeaseDsl::claim_batch`](crate::LeaseDsl::claim_batch) claims up to `size` of them in one
//! statement, which two workers cannot both win: each row goes to one claim. The batch may hold
//! fewer rows than asked for, or none.
//!
//! ## A batch, in your order
//!
//! Your `.filter(..)` says which rows are due, `.order_by(..)` which come first, and `.set(..)`
//! what the claim changes on each. The batch is one claim: one owner and token for all its rows.
//!
//! ```
//! # include!("../doctest_setup.rs");
//! use diesel::prelude::*;
//! use diesel_lease::prelude::*;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let conn = &mut jobs_connection()?;
//! diesel::sql_query("INSERT INTO jobs (id, status) VALUES (2, 'queued'), (3, 'queued')")
//!     .execute(conn)?;
//! let lease = Lease::from_secs(30)?;
//!
//! let batch = jobs::table
//!     .claim_batch(2, lease)
//!     .by(&Claim::new("worker-1")?)
//!     .filter(jobs::status.eq("queued"))
//!     .order_by(jobs::id)
//!     .set(jobs::status.eq("running"))
//!     .returning(Job::as_select())
//!     .run(conn)?;
//! assert_eq!(batch.keys(), [1, 2]);
//! assert!(batch.rows().iter().all(|job| job.status == "running"));
//!
//! // The rest, under a new claim of the same worker.
//! let rest = jobs::table
//!     .claim_batch(10, lease)
//!     .by(&Claim::new("worker-1")?)
//!     .filter(jobs::status.eq("queued"))
//!     .returning(jobs::id)
//!     .run::<i64>(conn)?;
//! assert_eq!(rest.keys(), [3]);
//!
//! // Finish the first batch in one statement, guarded by its token.
//! let done = batch.release().set(jobs::status.eq("done")).run(conn)?;
//! assert_eq!(done, [1, 2]);
//! # Ok(())
//! # }
//! ```
//!
//! A [`Batch`](crate::Batch) gives its rows, their keys and the claim. Its renewals, writes and
//! releases give back the keys of the rows the claim still held, and so changed (chapter 3). A
//! batch holds at most [`MAX_BATCH_SIZE`](crate::MAX_BATCH_SIZE) rows.
//!
//! Your changes read each row as it was before the statement, on every backend: `.set(..)` of
//! `jobs::attempts.eq(jobs::attempts + 1)` counts one more attempt on each row.
//!
//! ## The index a queue needs
//!
//! A queue keeps its finished rows. Without an index on just the due rows, each claim reads past
//! every finished row before it reaches the first queued one, and grows slower as the table
//! grows. Chapter 6 shows how the migration adds that index
//! ([`ClaimIndex`](crate::ClaimIndex)): claims read it when they filter on that status and order
//! by that key, as above.
//!
//! ## Claims from a cursor: a queue that a long transaction does not slow down
//!
//! A claim in your order reads the claim index from the queue's head. On PostgreSQL, while any
//! transaction keeps an old snapshot open (a report, a long migration, `pg_dump`), no row
//! version that snapshot could see may be removed: every claim and every finish leaves an entry
//! in the index that stays, and a claim from the head visits all those at the head, more with
//! every job claimed since the snapshot was taken (docs/benchmarks.md, measurement 15: claims
//! at a tenth of their rate). MariaDB's purge lag behind an old read view is the same in kind.
//!
//! [`.from_cursor(&cursor)`](crate::ClaimBatch::from_cursor) claims in the order of the primary
//! key, starting after the last key claimed through `cursor` (a
//! [`ClaimCursor`](crate::ClaimCursor)), so that a claim visits only the entries past where the
//! last one ended. When the rows past the cursor are fewer than the size, the same call claims
//! the rest from the head, and the cursor wraps around. Clones of a cursor share its position:
//! give one to every worker of a process, each on its own connection.
//!
//! ```
//! # include!("../doctest_setup.rs");
//! use diesel::prelude::*;
//! use diesel_lease::{prelude::*, ClaimCursor};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let conn = &mut jobs_connection()?;
//! diesel::sql_query("INSERT INTO jobs (id, status) VALUES (2, 'queued'), (3, 'queued')")
//!     .execute(conn)?;
//! let lease = Lease::from_secs(30)?;
//! let cursor = ClaimCursor::new();
//! let next = |conn: &mut _, size| {
//!     jobs::table
//!         .claim_batch(size, lease)
//!         .by(&Claim::new("worker-1")?)
//!         .filter(jobs::status.eq("queued"))
//!         .from_cursor(&cursor)
//!         .set(jobs::status.eq("running"))
//!         .returning(jobs::id)
//!         .run::<i64>(conn)
//! };
//! let first = next(conn, 2)?;
//! assert_eq!(cursor.last(), Some(2), "the greatest key claimed");
//!
//! // Job 1 is done and queued again, behind the cursor.
//! first.release().set(jobs::status.eq("queued")).run(conn)?;
//! let mut wrapped = next(conn, 2)?.keys().to_vec();
//! wrapped.sort();
//! assert_eq!(wrapped, [1, 3], "job 3 past the cursor, then job 1 from the head, in one call");
//! # Ok(())
//! # }
//! ```
//!
//! What it gives up, and the bound it keeps:
//!
//! * **The order is the key's.** Claims take rows in primary-key order from the cursor, not in
//!   an order of yours, so `.order_by(..)` and `.from_cursor(..)` do not go together (the
//!   compiler says so). A queue whose key grows with the time a job is due (a sequence, a
//!   time-ordered UUID) is claimed in due order within one pass.
//! * **No row is starved.** A row that stays claimable, and that no other transaction holds
//!   locked, is claimed within one pass of the cursor over the queue: with one claimer, at most
//!   `ceil(n / size) + 1` claims through the cursor, `n` the claimable rows; with claimers
//!   sharing a cursor, within one pass of their claims taken together. A row queued again behind
//!   the cursor (a retry, a reap) waits for that pass, where a claim from the head would take it
//!   next.
//! * **Two statements at the end of a pass.** The claim that reaches the end of the queue, and
//!   finds fewer rows than asked, sends a second statement from the head; a queue that is
//!   short, or empty, is claimed from the head in one statement, as without a cursor.
//! * **Nothing else changes.** Each statement is the same one conditional claim, with your filter
//!   and the lease's, whose result is read from the statement itself; the cursor only adds
//!   `key > last` to where it starts, and decides nothing about who holds a row.
//!
//! A cursor belongs to one table; given a claim of another, the claim is
//! [`Error::InvalidCursor`](crate::Error::InvalidCursor) before anything is sent. It lives in
//! your process: a restarted worker starts at the head.
//!
//! ## Waiting for work, or for a row
//!
//! A claim refused now may be worth making again soon: "wait until the lock is free", or "wait
//! until there is work". `.waiting(up_to)` on a claim ([`ClaimRow::waiting`](crate::ClaimRow::waiting),
//! [`ClaimBatch::waiting`](crate::ClaimBatch::waiting)) tries again until it wins or `up_to` has
//! passed, and gives back what the claim gives back.
//!
//! * **A row** that is held: the wait reads when the holder's lease frees, by the database's
//!   clock, and sleeps until then, or at most the recheck interval (a third of the lease by
//!   default; [`rechecking_every`](crate::Waiting::rechecking_every)). A holder that releases
//!   early is noticed within that interval. A row that is missing, or that your filter does not
//!   take, ends the wait at once: waiting cannot help.
//! * **A batch** that comes back empty backs off, from 15 ms up to the recheck interval (1 s by
//!   default), so work that comes is claimed within the interval.
//!
//! Run a wait on a pool with [`run_on(&pool)`](crate::Waiting::run_on): each attempt checks a
//! connection out and gives it back before the wait sleeps, so waiters hold no connection,
//! transaction or lock while they sleep. `.run(conn)` holds `conn` across the sleeps: use it only
//! with a connection of your own. A wait inside a transaction of yours is refused before
//! anything is sent. How many statements a wait sends is in
//! [docs/operations.md](https://github.com/diesel-lease/diesel-lease/blob/main/docs/operations.md#what-a-wait-costs-in-statements).
//!
//! ```
//! # include!("../doctest_setup.rs");
//! use std::time::Duration;
//!
//! use diesel::prelude::*;
//! use diesel_lease::prelude::*;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let pool = jobs_pool_of(3)?;
//! let lease = Lease::from_secs(30)?;
//! let conn = &mut pool.get()?;
//! let holder = jobs::table.claim_row(1, lease).by(&Claim::new("worker-1")?).run::<Job>(conn)?;
//! let holder = holder.won().expect("free");
//!
//! // Another worker waits up to 10 s for job 1, holding no connection between attempts.
//! let waiter = std::thread::spawn({
//!     let pool = pool.clone();
//!     move || -> Result<bool, diesel_lease::Error> {
//!         let claimed = jobs::table
//!             .claim_row(1, lease)
//!             .by(&Claim::new("worker-2")?)
//!             .returning(jobs::id)
//!             .waiting(Duration::from_secs(10))
//!             .rechecking_every(Duration::from_millis(100))
//!             .run_on::<i64, _>(&pool)?;
//!         Ok(claimed.is_won())
//!     }
//! });
//! std::thread::sleep(Duration::from_millis(200)); // the waiter is refused, and waits
//! // The holder is done early, with 30 s of its lease left: the waiter wins within 100 ms.
//! assert!(holder.release().run(conn)?);
//! assert!(waiter.join().expect("the waiter ran")?);
//!
//! // A worker waits up to 10 s for work; a job that comes is claimed within a second.
//! let worker = std::thread::spawn({
//!     let pool = pool.clone();
//!     move || -> Result<Vec<i64>, diesel_lease::Error> {
//!         let batch = jobs::table
//!             .claim_batch(10, lease)
//!             .by(&Claim::new("worker-3")?)
//!             .filter(jobs::status.eq("queued"))
//!             .filter(jobs::id.ne(1))
//!             .returning(jobs::id)
//!             .waiting(Duration::from_secs(10))
//!             .run_on::<i64, _>(&pool)?;
//!         Ok(batch.keys().to_vec())
//!     }
//! });
//! std::thread::sleep(Duration::from_millis(200)); // the worker finds nothing, and waits
//! diesel::sql_query("INSERT INTO jobs (id, status) VALUES (2, 'queued')").execute(conn)?;
//! assert_eq!(worker.join().expect("the worker ran")?, [2]);
//! # Ok(())
//! # }
//! ```
//!
//! A wait polls; it does not `LISTEN`. That keeps it the same on every backend and behind a
//! pooler such as PgBouncer, which keeps no listening session.
//!
//! Next: [chapter 3, holding](super::ch03_holding).
