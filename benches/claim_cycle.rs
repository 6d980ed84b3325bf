//! The micro-benchmark: one row's claim, renew, release cycle through the library against the
//! same SQL by hand, prepared once as the library's statements are (the like-for-like baseline),
//! on one connection, timed by criterion. SQLite always runs (a WAL file in the temporary
//! directory); PostgreSQL and MySQL/MariaDB when their URLs are set, or a note says why not.
//!
//! ```text
//! PG_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test \
//! MYSQL_DATABASE_URL=mysql://root@127.0.0.1:3306/test \
//!     cargo bench --all-features --bench claim_cycle
//! ```
//!
//! Before timing, each backend's start-up check confirms that the hand-written statements are
//! the library's SQL, binds included. The headline is the ratio of the two medians, both
//! measured in this run, printed after criterion's own report. Criterion's options follow `--`
//! (`--quick`, `--warm-up-time 1 --measurement-time 2`, a filter such as `SQLite`).
#![allow(clippy::unwrap_used, clippy::expect_used)]
// A benchmark times itself on the application's clock; no lease is decided by it.
#![allow(clippy::disallowed_methods)]
#![forbid(unsafe_code)]

use std::path::PathBuf;
use std::time::SystemTime;

use criterion::Criterion;
use diesel_lease::Claim;

// Shared with the load test (benches/lease_bench/); this binary uses part of what they hold.
#[allow(dead_code)]
#[path = "common/backend/mod.rs"]
mod backend;
#[allow(dead_code)]
#[path = "common/hand_sql.rs"]
mod hand_sql;
#[allow(dead_code)]
#[path = "common/measure.rs"]
mod measure;
#[allow(dead_code)]
#[path = "common/measurements.rs"]
mod measurements;
#[allow(dead_code)]
#[path = "common/shared.rs"]
mod shared;
#[allow(dead_code)]
#[path = "common/suite.rs"]
mod suite;
#[allow(dead_code)]
#[path = "common/tables.rs"]
mod tables;

use crate::backend::{Mysql, Ops, Pg, Sqlite};
use crate::shared::Res;
use crate::suite::{lease, new_token, verify, LEASE_MICROS, OWNER};

/// The baseline's and the library's names in criterion's report.
const HAND: &str = "hand, prepared once";
const LIBRARY: &str = "library";

fn main() {
    let started = SystemTime::now();
    let mut criterion = Criterion::default().configure_from_args().without_plots();
    let mut measured = Vec::new();
    let sqlite_path =
        std::env::temp_dir().join(format!("bench-lease-cycle-{}.db", std::process::id()));
    let sqlite_url = sqlite_path.to_string_lossy().into_owned();
    let sqlite = cycle::<Sqlite>(&mut criterion, &sqlite_url);
    backend::sqlite::remove_database(&sqlite_url);
    let mut outcomes = vec![sqlite.map(|group| measured.push(group))];
    for (name, variable, run) in [
        ("PostgreSQL", "PG_DATABASE_URL", cycle::<Pg> as Runner),
        ("MySQL/MariaDB", "MYSQL_DATABASE_URL", cycle::<Mysql>),
    ] {
        match std::env::var(variable) {
            Ok(url) if !url.trim().is_empty() => {
                outcomes.push(run(&mut criterion, &url).map(|group| measured.push(group)));
            }
            _ => println!("SKIPPED {name}: {variable} is not set"),
        }
    }
    criterion.final_summary();
    for group in &measured {
        headline(group, started);
    }
    if let Some(error) = outcomes.into_iter().find_map(Result::err) {
        eprintln!("claim_cycle failed: {error}");
        std::process::exit(1);
    }
}

type Runner = fn(&mut Criterion, &str) -> Res<String>;

/// The cycle on backend `B` at `url`, library and baseline: the name of criterion's group.
fn cycle<B: Ops>(criterion: &mut Criterion, url: &str) -> Res<String> {
    let mut conn = backend::connect::<B>(url)?;
    B::setup(&mut conn)?;
    let outcome = (|| -> Res<String> {
        verify::<B>(&mut conn)?;
        B::free_rows(&mut conn)?;
        let lease = lease()?;
        let name = format!("claim cycle, {}", B::NAME);
        let mut group = criterion.benchmark_group(&name);
        group.bench_function(HAND, |bench| {
            bench.iter(|| {
                B::hand_cycle::<true>(&mut conn, 1, OWNER, &new_token(), LEASE_MICROS)
                    .expect("the hand-written cycle")
            })
        });
        group.bench_function(LIBRARY, |bench| {
            bench.iter(|| {
                let claim = Claim::new(OWNER).expect("a claim");
                B::lib_cycle(&mut conn, 1, &claim, lease).expect("the library's cycle")
            })
        });
        group.finish();
        Ok(name)
    })();
    let cleaned = B::teardown(&mut conn);
    outcome.and_then(|name| cleaned.map(|()| name))
}

/// Prints the library's median over the baseline's, as criterion estimated them in this run
/// (nothing in `cargo test --benches`, which runs each cycle once and estimates nothing).
fn headline(group: &str, started: SystemTime) {
    let median = |variant: &str| -> Option<f64> {
        let path = output_directory()
            .join(group)
            .join(variant)
            .join("new/estimates.json");
        let fresh = std::fs::metadata(&path)
            .and_then(|meta| meta.modified())
            .is_ok_and(|modified| modified >= started);
        let estimates: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).ok().filter(|_| fresh)?).ok()?;
        estimates["median"]["point_estimate"].as_f64()
    };
    if let (Some(hand), Some(library)) = (median(HAND), median(LIBRARY)) {
        println!(
            "{group}: library {:.2} µs ÷ {HAND} {:.2} µs = {:.3}x (medians of this run)",
            library / 1e3,
            hand / 1e3,
            library / hand
        );
    }
}

/// Where criterion keeps its estimates: `CRITERION_HOME`, or `criterion` in cargo's target
/// directory (`CARGO_TARGET_DIR`, or the one this binary was built in).
fn output_directory() -> PathBuf {
    if let Some(home) = std::env::var_os("CRITERION_HOME") {
        return home.into();
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .or_else(|| {
            // target/release/deps/claim_cycle-<hash>
            let exe = std::env::current_exe().ok()?;
            exe.ancestors().nth(3).map(PathBuf::from)
        })
        .unwrap_or_else(|| PathBuf::from("target"));
    target.join("criterion")
}
