//! Measurement 10, the pooler-safe setup: the claim cycle of measurement 1 (`claim_row`, renew,
//! release) on PostgreSQL with Diesel's statement cache on, against the same with it turned off
//! by `PgTransactionPooling`, directly and through PgBouncer in transaction mode
//! (`PGBOUNCER_DATABASE_URL`, in front of the same database as `PG_DATABASE_URL`).
//!
//! Through PgBouncer with the cache on is not measured: without `max_prepared_statements`
//! (PgBouncer 1.21 and later) it fails, which is what the setup is for.
use std::cell::RefCell;
use std::time::Duration;

use diesel::PgConnection;
use diesel_lease::pg::PgTransactionPooling;
use diesel_lease::{Claim, Lease};

use crate::backend::{self, Ops, Pg};
use crate::measure::{interleave, median, micros_per_op, paired_ratio, Variant};
use crate::results::{Better, Results, Row};
use crate::shared::{Options, Res};
use crate::suite::{LEASE_MICROS, OWNER};

/// The measurement's number, in `--only` and in docs/benchmarks.md.
pub const SECTION: u32 = crate::measurements::POOLER;

const CACHED: &str = "direct, statement cache on";
const UNCACHED: &str = "direct, PgTransactionPooling";
const POOLED: &str = "PgBouncer, PgTransactionPooling";

/// A connection to `url` with the pooler-safe setup.
fn uncached(url: &str) -> Res<PgConnection> {
    let mut conn = backend::connect::<Pg>(url)?;
    PgTransactionPooling::default().apply(&mut conn);
    Ok(conn)
}

pub fn run(pg_url: &str, options: &Options, results: &mut Results) -> Res<()> {
    println!("-- {SECTION}. the claim cycle without the statement cache, and through PgBouncer");
    let bouncer_url = std::env::var("PGBOUNCER_DATABASE_URL")
        .ok()
        .filter(|url| !url.trim().is_empty());
    if bouncer_url.is_none() {
        results.note(format!(
            "{SECTION}: PGBOUNCER_DATABASE_URL is not set: measured directly only"
        ));
    }
    let mut cached = backend::connect::<Pg>(pg_url)?;
    Pg::setup(&mut cached)?;
    let outcome = (|| -> Res<()> {
        let lease = Lease::new(Duration::from_micros(LEASE_MICROS as u64))?;
        let slice = options.plan.slice;
        let conns: Vec<(&'static str, RefCell<PgConnection>)> = [
            Some((CACHED, RefCell::new(backend::connect::<Pg>(pg_url)?))),
            Some((UNCACHED, RefCell::new(uncached(pg_url)?))),
            match bouncer_url.as_deref() {
                Some(url) => Some((POOLED, RefCell::new(uncached(url)?))),
                None => None,
            },
        ]
        .into_iter()
        .flatten()
        .collect();
        let mut variants: Vec<Variant<'_>> = conns
            .iter()
            .map(|(name, conn)| {
                Variant::new(name, move || {
                    let c = &mut *conn.borrow_mut();
                    micros_per_op(slice, || Pg::lib_cycle(c, 1, &Claim::new(OWNER)?, lease))
                })
            })
            .collect();
        let samples = interleave(options.plan.rounds, &mut variants)?;
        // The cost of the disabled cache, of the whole setup, and of the pooler's hop alone.
        let pairs = [(0, 1), (0, 2), (1, 2)];
        for (baseline, library) in pairs.into_iter().filter(|&(_, k)| k < samples.len()) {
            let (ratio, min, max) = paired_ratio(&samples[library], &samples[baseline]);
            results.push(Row {
                section: SECTION,
                backend: "PostgreSQL".into(),
                figure: "claim_row, renew, release of one row".into(),
                baseline_name: conns[baseline].0.into(),
                baseline: median(&samples[baseline]),
                library_name: conns[library].0.into(),
                library: median(&samples[library]),
                unit: "µs/cycle".into(),
                ratio,
                range: Some((min, max)),
                better: Better::Lower,
                goal: None,
            });
        }
        Ok(())
    })();
    let cleaned = Pg::teardown(&mut cached);
    outcome.and(cleaned)
}
