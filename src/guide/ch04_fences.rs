//! # Chapter 4: Fences
//!
//! The token stops a holder whose lease ran out from writing to its rows. It cannot stop a write
//! that goes elsewhere: to a file store, an API, another database. A holder paused past its
//! lease (a long GC pause, a lost network) wakes up still believing it holds the row, and writes
//! there, while the new holder writes too.
//!
//! A fence orders the holders. It is a fourth column, `BIGINT NOT NULL DEFAULT 0`, named
//! `fence: column` in [`claim_lease!`](crate::claim_lease). Every claim sets `fence = fence + 1`
//! in the claiming statement, so each holder of a row gets a higher number than every holder
//! before it. Renewals and releases leave it alone. Hand the fence to the outside resource with
//! each write, and have the resource refuse a fence lower than the highest it has seen: the
//! paused holder then changes nothing there either.
//!
//! ```
//! # include!("../doctest_setup.rs");
//! use std::time::Duration;
//!
//! use diesel::prelude::*;
//! use diesel_lease::prelude::*;
//!
//! // `fenced_jobs` is declared with `diesel_lease::claim_lease!(fenced_jobs { fence: fence });`
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let conn = &mut jobs_connection()?;
//! let lease = Lease::from_secs(30)?;
//!
//! let first = fenced_jobs::table
//!     .claim_row(1, lease)
//!     .by(&Claim::new("worker-1")?)
//!     .returning(fenced_jobs::id)
//!     .run::<i64>(conn)?
//!     .won()
//!     .expect("free");
//! assert_eq!(first.fence(), 1);
//!
//! // Worker 1 pauses past its lease (aged here by the database's clock), and worker 2 takes over.
//! diesel::update(fenced_jobs::table.find(1))
//!     .set(fenced_jobs::table.renewed_ago(Age::new(Duration::from_secs(31))?))
//!     .execute(conn)?;
//! let second = fenced_jobs::table
//!     .claim_row(1, lease)
//!     .by(&Claim::new("worker-2")?)
//!     .returning(fenced_jobs::id)
//!     .run::<i64>(conn)?
//!     .won()
//!     .expect("outlived");
//! assert_eq!(second.fence(), 2);
//!
//! // The outside resource keeps the highest fence it has seen, and refuses lower ones.
//! let mut highest = 0;
//! let mut accept = |fence: i64| if fence >= highest { highest = fence; true } else { false };
//! assert!(accept(second.fence()));
//! assert!(!accept(first.fence()), "worker 1 wakes up and is refused outside too");
//! assert!(!first.release().run(conn)?, "and in the database, by its token");
//! # Ok(())
//! # }
//! ```
//!
//! A fence is only as durable as the claim that wrote it. On a PostgreSQL primary with
//! asynchronous replication, a failover can lose the last claims, and the new primary hands the
//! same fence out again (docs/operations.md, "A PostgreSQL cluster that fails over"): two holders
//! then pass `fence >= highest`. Where that matters, replicate synchronously, or have the
//! resource keep the token beside the highest fence and refuse that fence from another token.
//!
//! A batch gives the fence of each row ([`Batch::fences`](crate::Batch::fences)). For a
//! statement of your own that must find the row unchanged since your claim, not only still
//! yours, add [`LeaseDsl::fence_is`](crate::LeaseDsl::fence_is) to the token's guard.
//!
//! Next: [chapter 5, reaping and node lives](super::ch05_reaping_and_node_lives).
