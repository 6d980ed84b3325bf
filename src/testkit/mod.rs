//! A test kit for your own tests of leased tables (feature `testkit`): time passing for a claim
//! without sleeping ([`age`]), races of claimers on connections of their own ([`race`],
//! [`one_winner`]), and a bounded wait for what a test asserts ([`eventually`]).
//!
//! Its helpers panic with a message, as assertions do, when what they check fails: they belong in
//! tests, not in the code under test. Add the feature to your dev-dependencies alone:
//! `diesel-lease = { version = "0.2", features = ["testkit"] }` under `[dev-dependencies]`.
//!
//! The guide's [chapter on testing](crate::guide::ch07_testing) shows a whole test of a table of
//! your own written with them.
mod age;
mod barrier;
mod eventually;
mod race;

pub use age::age;
pub use eventually::eventually;
pub use race::{one_winner, race};
