//! # Chapter 7: Testing your own tables
//!
//! The `testkit` feature holds what the library's own tests are written with. Add it to your
//! dev-dependencies only: its helpers panic, as assertions do.
//!
//! ```toml
//! [dev-dependencies]
//! diesel-lease = { version = "0.3", features = ["testkit"] }
//! ```
//!
//! Three rules make tests of leases trustworthy, and the kit follows them:
//!
//! * **Race for real.** [`race`] runs `n` claimers at once, each on a connection of its own that
//!   really commits, started together by a barrier. [`one_winner`] asserts that exactly one won.
//! * **Age, do not sleep.** [`age`] dates a claim back by the database's clock, so a test sees a
//!   lease run out at once.
//! * **Wait for a condition, not a time.** [`eventually`] asks until a condition holds, with a
//!   bound that only ends a test that would hang.
//!
//! A test of your own table: eight workers race for one job and one wins. Its lease then runs
//! out, aged rather than slept, another worker takes the job over, and the first is fenced off.
//!
#![cfg_attr(feature = "testkit", doc = "```")]
#![cfg_attr(not(feature = "testkit"), doc = "```ignore")]
//! # include!("../doctest_setup.rs");
//! use std::time::Duration;
//!
//! use diesel::prelude::*;
//! use diesel_lease::prelude::*;
//! use diesel_lease::testkit;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let pool = jobs_pool_of(9)?;
//! let lease = Lease::from_secs(60)?;
//! let outcomes = testkit::race(&pool, 8, |racer, conn| {
//!     let worker = Claim::new(&format!("worker-{racer}"))?;
//!     jobs::table.claim_row(1, lease).by(&worker).returning(jobs::id).run::<i64>(conn)
//! });
//! let winner = testkit::one_winner(&outcomes, |outcome| matches!(outcome, Ok(claimed) if claimed.is_won()));
//! let Ok(Claimed::Won(won)) = &outcomes[winner] else { unreachable!("one_winner checked it") };
//!
//! let conn = &mut pool.get()?;
//! testkit::age(won, Age::new(Duration::from_secs(61))?).run(conn)?;
//! let late = jobs::table.claim_row(1, lease).by(&Claim::new("worker-late")?).returning(jobs::id).run::<i64>(conn)?;
//! assert!(late.is_won(), "the lease ran out, by the database's clock");
//! assert!(!won.release().run(conn)?, "the first worker is fenced off");
//! # Ok(())
//! # }
//! ```
//!
//! A test of something that happens on another thread, such as a keeper's release when its
//! handle is dropped, waits for it:
//!
#![cfg_attr(feature = "testkit", doc = "```")]
#![cfg_attr(not(feature = "testkit"), doc = "```ignore")]
//! # include!("../doctest_setup.rs");
//! use std::time::Duration;
//!
//! use diesel::prelude::*;
//! use diesel_lease::prelude::*;
//! use diesel_lease::testkit;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let pool = jobs_pool_of(3)?;
//! let lease = Lease::from_secs(30)?;
//! let keeper = Keeper::start(pool.clone(), KeeperSettings::new(lease))?;
//! let conn = &mut pool.get()?;
//! let kept = keeper.keep(jobs::table.claim_batch(1, lease).by(&Claim::new("w")?).run::<Job>(conn)?)?;
//! drop(kept); // released on a thread of the keeper's
//! testkit::eventually("job 1 is free", Duration::from_secs(30), || {
//!     matches!(jobs::table.holders(lease).run(conn), Ok(holders) if holders.is_empty())
//! });
//! # Ok(())
//! # }
//! ```
//!
//! Run such tests against each backend you ship on: a server's locking is not SQLite's.
//!
//! Next: [chapter 8, generic code](super::ch08_generic_code).
//!
#![cfg_attr(
    feature = "testkit",
    doc = "[`race`]: crate::testkit::race
[`one_winner`]: crate::testkit::one_winner
[`age`]: crate::testkit::age
[`eventually`]: crate::testkit::eventually"
)]
#![cfg_attr(
    not(feature = "testkit"),
    doc = "[`race`]: https://docs.rs/diesel-lease/latest/diesel_lease/testkit/fn.race.html
[`one_winner`]: https://docs.rs/diesel-lease/latest/diesel_lease/testkit/fn.one_winner.html
[`age`]: https://docs.rs/diesel-lease/latest/diesel_lease/testkit/fn.age.html
[`eventually`]: https://docs.rs/diesel-lease/latest/diesel_lease/testkit/fn.eventually.html"
)]
