//! The run of measurements 1 and 3 to 6 and 9 on a backend, after the start-up check.
use crate::backend::{self, Ops};
use crate::results::Results;
use crate::shared::{Options, Res};
use crate::suite::verify;
use crate::{contention, holders, keeper, overhead, turns};

/// Measurements 1 (6 on SQLite), 3, 4, 5 and 9 on backend `B`.
pub fn run<B: Ops>(url: &str, options: &Options, results: &mut Results) -> Res<()> {
    println!("\n== {}", B::NAME);
    let plan = &options.plan;
    let mut conn = backend::connect::<B>(url)?;
    results.machine.extend(B::settings(&mut conn)?);
    B::setup(&mut conn)?;
    let outcome = (|| -> Res<()> {
        verify::<B>(&mut conn)?;
        let section = B::OVERHEAD_SECTION;
        if options.runs(section) {
            println!("-- {section}. overhead of the claim cycle");
            overhead::run::<B>(&mut conn, plan, results)?;
            overhead::round_trips::<B>(url, results)?;
        }
        if options.runs(turns::SECTION) {
            println!("-- 3. agent turns");
            turns::run::<B>(url, &mut conn, plan, results)?;
            turns::round_trips::<B>(url, results)?;
        }
        if options.runs(holders::SECTION) {
            println!("-- 4. holders through a pool of {}", holders::POOL);
            holders::run::<B>(url, &mut conn, plan, results)?;
        }
        if options.runs(contention::SECTION) && B::NOWAIT {
            println!("-- 5. contention on one hot row");
            contention::run::<B>(url, &mut conn, plan, results)?;
        }
        if options.runs(keeper::SECTION) {
            println!("-- 9. the keeper");
            keeper::run::<B>(url, plan, results)?;
        }
        Ok(())
    })();
    let cleaned = B::teardown(&mut conn);
    outcome.and(cleaned)
}
