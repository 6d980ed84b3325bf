//! How a scenario waits for what it asserts, bounded, rather than timing it.
use std::time::Duration;

use diesel::r2d2::R2D2Connection;

/// How long a scenario waits for what it asserts before it fails: about 30 s.
const PATIENCE: Duration = Duration::from_secs(30);

/// The kit's bounded wait ([`diesel_lease::testkit::eventually`]), with the scenarios' patience:
/// tests wait for what they assert, they do not time it.
pub fn eventually(what: &str, done: impl FnMut() -> bool) {
    diesel_lease::testkit::eventually(what, PATIENCE, done);
}

/// Waits until `keeper` has made `rounds` more rounds of renewals: tests count rounds, they do
/// not time them.
pub fn after_rounds<C: R2D2Connection>(keeper: &diesel_lease::Keeper<C>, rounds: u64) {
    let until = keeper.rounds() + rounds;
    eventually(&format!("{rounds} rounds of the keeper"), || {
        keeper.rounds() >= until
    });
}
