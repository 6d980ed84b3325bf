//! # Chapter 3: Holding
//!
//! What a claim won is held for one lease. Work that takes longer renews it; work that is done
//! releases it. Every such write is guarded by the claim's token: it changes a row only while
//! this claim still holds it. A holder whose lease ran out and was taken over changes nothing,
//! and learns it from the answer.
//!
//! ## Renew, update, release
//!
//! [`Won`](crate::Won) (one row) and [`Batch`](crate::Batch) (many) have the same three verbs,
//! each a statement that ends with `.run(conn)`:
//!
//! * `renew()` starts the lease again, by the database's clock.
//! * `update().set(..)` writes your changes and leaves the lease as it is.
//! * `release().set(..)` writes your changes and frees the rows.
//!
//! For one row the answer is whether the claim still held it. For a batch it is the keys of the
//! rows it still held. A claim known by its token alone (stored, or sent to another process) is
//! named by [`LeaseDsl::held_rows`](crate::LeaseDsl::held_rows), with the same verbs.
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
//! let won = jobs::table.claim_row(1, lease).by(&worker).run::<Job>(conn)?.won().expect("free");
//!
//! assert!(won.renew().run(conn)?, "still ours: the lease starts again");
//! assert!(won.update().set(jobs::status.eq("half done")).run(conn)?);
//!
//! // The same claim, known by its owner and token alone.
//! let held = jobs::table.held_rows(&worker, vec![1]);
//! assert_eq!(held.release().set(jobs::status.eq("done")).run(conn)?, [1]);
//! assert!(!won.renew().run(conn)?, "released: the claim holds nothing");
//! # Ok(())
//! # }
//! ```
//!
//! A write may name more rows than one statement can bind. The library then splits it into as
//! few statements as it must, in one transaction, so it is still all or nothing. Each part sets
//! your changes, so the changeset of a split write must be `Clone` (Diesel's are).
//!
//! ## The keeper renews for you
//!
//! Renewing by hand means timing it. A [`Keeper`](crate::Keeper) does it instead: a thread,
//! started on an r2d2 pool, that renews every claim handed to it, every third of the lease by
//! default, all the claims of one table in one statement. [`Keeper::keep`](crate::Keeper::keep)
//! gives a [`Kept`](crate::Kept) handle. The work asks it [`check`](crate::Kept::check) (or
//! [`is_held`](crate::Kept::is_held)) before each step; that reads no database, it reads what the
//! keeper last learned. A renewal that finds a row taken over, or that could not confirm the
//! lease in time (the database unreachable), makes `check()` an error at once. A `Kept` is a
//! holder too, with the same three verbs: its `release()` also stops the keeper keeping the
//! claim.
//!
//! ```
//! # include!("../doctest_setup.rs");
//! use std::time::Duration;
//!
//! use diesel::prelude::*;
//! use diesel_lease::prelude::*;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let pool = jobs_pool()?;
//! let lease = Lease::from_secs(30)?;
//! // A claim is renewed for an hour at most, then given up.
//! let settings = KeeperSettings::new(lease).at_most(Duration::from_secs(3600));
//! let keeper = Keeper::start(pool.clone(), settings)?;
//!
//! let conn = &mut pool.get()?;
//! let batch = jobs::table.claim_batch(10, lease).by(&Claim::new("worker-1")?).run::<Job>(conn)?;
//! let kept = keeper.keep(batch.held())?;
//! for _job in batch.rows() {
//!     kept.check()?; // stop at once if the lease was lost
//!     // ... one step of the work ...
//! }
//! assert_eq!(kept.release().set(jobs::status.eq("done")).run(conn)?, [1]);
//! # Ok(())
//! # }
//! ```
//!
//! [`KeeperSettings`](crate::KeeperSettings) sets how often it renews, the margin it keeps
//! before a lease runs out, a longest hold (`at_most`, ShedLock's `lockAtMostFor`) and a
//! shortest hold (`at_least`, `lockAtLeastFor`: a release before it leaves the row held until
//! the shortest hold has passed, by the database's clock).
//! [`Keeper::keep_with`](crate::Keeper::keep_with) keeps one claim with settings of its own. A
//! row that another transaction holds locked is passed over, not waited for, so one locked row
//! delays no other claim
//! ([docs/operations.md](https://github.com/diesel-lease/diesel-lease/blob/main/docs/operations.md#a-row-your-own-transaction-keeps-locked)
//! says what that means for your own transactions).
//!
//! Dropping a `Kept` releases its claim; dropping the keeper releases everything it keeps. A
//! drop waits for its release at most [`KeeperSettings::drop_within`](crate::KeeperSettings::drop_within).
//!
//! ## What a keeper did
//!
//! [`Keeper::stats`](crate::Keeper::stats) is a snapshot of plain numbers since the keeper
//! started ([`KeeperStats`](crate::KeeperStats), whose fields say what each counts). It prints
//! as one line:
//!
//! ```text
//! keeper: 6 rounds (0 late, at most 952µs late), 2 renewal statements (0 failed, 0 of them conflicts), 39 rows renewed,
//! 1 rows lost (1 taken over, 0 unconfirmed, 0 past the longest hold), last round 1.6ms, smallest margin 401ms
//! ```
//!
//! Late rounds and failed renewals mean the keeper waits for a connection or a slow database;
//! a smallest margin near zero means leases are about to be given up. With the `tracing`
//! feature the same numbers come as events after each round.
//!
//! ## Shutting down
//!
//! [`Keeper::drain`](crate::Keeper::drain) releases everything the keeper keeps, each table in
//! one statement, and says what it released. [`Keeper::shutdown`](crate::Keeper::shutdown)
//! drains and stops the keeper within a bound you give.
//!
//! ```
//! # include!("../doctest_setup.rs");
//! use std::time::Duration;
//!
//! use diesel::prelude::*;
//! use diesel_lease::prelude::*;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let pool = jobs_pool()?;
//! let lease = Lease::from_secs(30)?;
//! let keeper = Keeper::start(pool.clone(), KeeperSettings::new(lease))?;
//! let conn = &mut pool.get()?;
//! let kept = keeper.keep(jobs::table.claim_batch(10, lease).by(&Claim::new("w")?).run::<Job>(conn)?)?;
//!
//! let drained = keeper.shutdown(Duration::from_secs(5))?;
//! println!("released at shutdown: {drained}"); // jobs: 1 claims, 1 rows released in 1 statement
//! assert_eq!(drained.rows(), 1);
//! assert!(!kept.is_held());
//! # Ok(())
//! # }
//! ```
//!
//! A node without a keeper can release every row an owner holds, whatever its claims:
//! [`LeaseDsl::held_by_owner`](crate::LeaseDsl::held_by_owner)`("worker-1").release()`. It goes by
//! name, not by token, so use it for an owner that has stopped claiming.
//!
//! Next: [chapter 4, fences](super::ch04_fences).
