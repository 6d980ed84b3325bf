//! Races: claimers on connections of their own, released at once, and the one winner.
use std::sync::Mutex;

use diesel::r2d2::{ConnectionManager, Pool, PooledConnection, R2D2Connection};

use super::barrier::Barrier;

/// Runs `run` on `racers` threads at once, each on a connection of its own from `pool`, and gives
/// back each racer's result, in the order of the racers (`run` is told its racer's number).
///
/// Every connection is taken before any thread starts, so the pool needs `racers` connections,
/// and a barrier releases the racers together: they really race, each committing on its own
/// connection, as separate processes would. A racer that panics fails the race; one that never
/// reaches the barrier (its thread panicked first) fails it too, rather than hanging it.
///
/// ```
/// # include!("../doctest_setup.rs");
/// use diesel_lease::prelude::*;
/// use diesel_lease::testkit;
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let pool = jobs_pool_of(4)?;
/// let lease = Lease::from_secs(30)?;
/// let won = testkit::race(&pool, 4, |racer, conn| -> Result<bool, diesel_lease::Error> {
///     let claimed = jobs::table.claim_row(1, lease).by(&Claim::new(&format!("racer-{racer}"))?).run::<Job>(conn)?;
///     Ok(claimed.is_won())
/// });
/// assert_eq!(won.iter().filter(|won| matches!(won, Ok(true))).count(), 1);
/// # Ok(())
/// # }
/// ```
pub fn race<C, T, F>(pool: &Pool<ConnectionManager<C>>, racers: usize, run: F) -> Vec<T>
where
    C: R2D2Connection + 'static,
    T: Send,
    F: Fn(usize, &mut C) -> T + Sync,
{
    let connections: Vec<PooledConnection<ConnectionManager<C>>> = (0..racers)
        .map(|racer| {
            pool.get().unwrap_or_else(|error| {
                panic!("racer {racer} of {racers} got no connection of its own: {error}")
            })
        })
        .collect();
    let start = Barrier::new(racers);
    let results = Mutex::new((0..racers).map(|_| None).collect::<Vec<Option<T>>>());
    std::thread::scope(|scope| {
        for (racer, mut conn) in connections.into_iter().enumerate() {
            let (start, results, run) = (&start, &results, &run);
            scope.spawn(move || {
                start.wait();
                let result = run(racer, &mut conn);
                let mut results = results
                    .lock()
                    .unwrap_or_else(|poisoned| poisoned.into_inner());
                results[racer] = Some(result);
            });
        }
    });
    results
        .into_inner()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .into_iter()
        .enumerate()
        .map(|(racer, result)| {
            result.unwrap_or_else(|| panic!("racer {racer} finished without a result"))
        })
        .collect()
}

/// The one racer whose outcome `won` says won; panics, naming the winners, unless exactly one
/// did.
///
/// ```
/// use diesel_lease::testkit::one_winner;
///
/// assert_eq!(one_winner(&[false, true, false], |won| *won), 1);
/// let two = std::panic::catch_unwind(|| one_winner(&[true, true], |won| *won));
/// assert!(two.is_err(), "two winners");
/// ```
pub fn one_winner<T>(outcomes: &[T], won: impl Fn(&T) -> bool) -> usize {
    let winners: Vec<usize> = outcomes
        .iter()
        .enumerate()
        .filter(|(_, outcome)| won(outcome))
        .map(|(racer, _)| racer)
        .collect();
    match winners.as_slice() {
        [winner] => *winner,
        _ => panic!(
            "{} of {} racers won, exactly one should have: winners {winners:?}",
            winners.len(),
            outcomes.len()
        ),
    }
}
