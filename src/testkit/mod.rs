//! A test kit for your own tests of leased tables (feature `testkit`): time passing for a claim
//! without sleeping ([`age`]), races of claimers on connections of their own ([`race`],
//! [`one_winner`]), and a bounded wait for what a test asserts ([`eventually`]).
//!
//! Its helpers panic with a message, as assertions do, when what they check fails: they belong in
//! tests, not in the code under test. Add the feature to your dev-dependencies alone:
//! `diesel-lease = { version = "0.2", features = ["testkit"] }` under `[dev-dependencies]`.
//!
//! A test of a user's own table: eight workers race for one job and exactly one wins; its
//! lease then runs out, by the database's clock, without the test sleeping, and a second worker
//! takes the job over.
//!
//! ```
//! # include!("../doctest_setup.rs");
//! use std::time::Duration;
//!
//! use diesel::prelude::*;
//! use diesel_lease::prelude::*;
//! use diesel_lease::testkit;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let pool = jobs_pool_of(8)?;
//! let lease = Lease::from_secs(30)?;
//! let outcomes = testkit::race(&pool, 8, |racer, conn| {
//!     let worker = Claim::new(&format!("worker-{racer}"))?;
//!     jobs::table.claim_row(1, lease).by(&worker).returning(jobs::id).run::<i64>(conn)
//! });
//! let winner = testkit::one_winner(&outcomes, |outcome| matches!(outcome, Ok(claimed) if claimed.is_won()));
//! let Ok(Claimed::Won(won)) = &outcomes[winner] else { unreachable!("one_winner checked it") };
//!
//! // Time passes for the claim alone: it is dated as if last renewed 31 s ago.
//! let conn = &mut pool.get()?;
//! assert_eq!(testkit::age(won, Age::new(Duration::from_secs(31))?).run(conn)?, [1]);
//! let late = jobs::table.claim_row(1, lease).by(&Claim::new("worker-late")?).returning(jobs::id).run::<i64>(conn)?;
//! assert!(late.is_won(), "the lease ran out, by the database's clock");
//! assert!(!won.renew().run(conn)?, "and the first holder is fenced off");
//! # Ok(())
//! # }
//! ```
mod age;
mod barrier;
mod eventually;
mod race;

pub use age::age;
pub use eventually::eventually;
pub use race::{one_winner, race};
