//! # Chapter 5: Reaping and node lives
//!
//! A worker that dies holding rows leaves them claimed until the lease runs out. Then any claim
//! may take them again ([`ClaimLease::claimable`](crate::ClaimLease::claimable) is "free, or
//! outlived"). Two things help sooner, or more clearly.
//!
//! ## Reaping
//!
//! Some rows must not be taken again as if nothing happened: a payment half sent, a status of
//! `running` that no claim of queued rows will ever match. A reap moves rows whose lease ran out
//! to a state of your choice (back to `queued`, or `interrupted` for work that must never run
//! again silently), in batches that two reapers never both take.
//! [`LeaseDsl::reap`](crate::LeaseDsl::reap) takes your `.filter(..)` and `.set(..)`, frees the
//! rows, and gives back their keys. The reaped holder's token no longer matches, so none of its
//! later writes lands.
//!
//! ```
//! # include!("../doctest_setup.rs");
//! use std::time::Duration;
//!
//! use diesel::prelude::*;
//! use diesel_lease::prelude::*;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let conn = &mut jobs_connection()?;
//! let lease = Lease::from_secs(30)?;
//! let won = jobs::table
//!     .claim_row(1, lease)
//!     .by(&Claim::new("worker-1")?)
//!     .set(jobs::status.eq("running"))
//!     .run::<Job>(conn)?
//!     .won()
//!     .expect("free");
//!
//! // Who holds what, and for how long yet, by the database's clock.
//! let holders = jobs::table.holders(lease).run(conn)?;
//! assert_eq!((holders[0].key, holders[0].owner.as_str()), (1, "worker-1"));
//!
//! // Worker 1 dies; its lease runs out (aged here, not waited for).
//! diesel::update(jobs::table.find(1))
//!     .set(jobs::table.renewed_ago(Age::new(Duration::from_secs(31))?))
//!     .execute(conn)?;
//! assert_eq!(jobs::table.stale(lease).run(conn)?.len(), 1);
//!
//! let reaped = jobs::table
//!     .reap(100, lease)
//!     .filter(jobs::status.eq("running"))
//!     .set(jobs::status.eq("queued"))
//!     .run(conn)?;
//! assert_eq!(reaped, [1]);
//! assert!(!won.release().run(conn)?, "the reaped holder changes nothing");
//! # Ok(())
//! # }
//! ```
//!
//! [`holders`](crate::LeaseDsl::holders), [`stale`](crate::LeaseDsl::stale) and
//! [`held_per_owner`](crate::LeaseDsl::held_per_owner) are the reads an operator wants: who holds
//! what, whose lease ran out, and how many rows each owner holds.
//!
//! ## A node that starts again
//!
//! A node that crashes and starts again under its name would otherwise wait a whole lease for
//! the rows its last life held. A [`Node`](crate::Node) names the owner of its claims with its
//! name and a boot id drawn at start (`worker-3#5f0c2a9e41b7`). A new life knows the rows of its
//! earlier lives, and frees them at once with
//! [`LeaseDsl::held_by_earlier_lives_of`](crate::LeaseDsl::held_by_earlier_lives_of). Names are
//! matched exactly: node `worker-3` never frees the rows of `worker-30`. The fault suite kills
//! nodes and starts them again under their names, with a lease of an hour: every job a killed
//! life held is done within seconds, none twice
//! ([docs/reliability.md](https://github.com/diesel-lease/diesel-lease/blob/main/docs/reliability.md),
//! scenario 8).
//!
//! ```
//! # include!("../doctest_setup.rs");
//! use diesel::prelude::*;
//! use diesel_lease::prelude::*;
//! use diesel_lease::Node;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let conn = &mut jobs_connection()?;
//! let lease = Lease::from_secs(3600)?;
//! let before_the_crash = Node::start("worker-3")?;
//! jobs::table.claim_row(1, lease).by(&before_the_crash.claim()).run::<Job>(conn)?;
//!
//! let node = Node::start("worker-3")?; // a new life: a new boot id
//! let freed = jobs::table
//!     .held_by_earlier_lives_of(&node)
//!     .release()
//!     .set(jobs::status.eq("queued"))
//!     .run(conn)?;
//! assert_eq!(freed, [1]);
//! let batch = jobs::table.claim_batch(10, lease).by(&node.claim()).run::<Job>(conn)?;
//! assert_eq!(batch.keys(), [1]);
//! # Ok(())
//! # }
//! ```
//!
//! Next: [chapter 6, adding the lease columns](super::ch06_adding_the_lease_columns).
