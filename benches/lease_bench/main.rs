//! The benchmark harness of `docs/benchmarks.md`: diesel-lease against hand-written SQL, pgbench,
//! advisory locks and `SELECT .. FOR UPDATE NOWAIT`, and its batch claims against the same SQL by
//! hand and against claiming selected jobs one by one, on PostgreSQL, MySQL/MariaDB and SQLite.
//!
//! ```text
//! PG_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test \
//! MYSQL_DATABASE_URL=mysql://root@127.0.0.1:3306/test \
//!     cargo bench --all-features --bench lease_bench
//! ```
//!
//! A server backend whose URL is unset is skipped with a note; SQLite always runs (a WAL file in
//! the temporary directory). Every figure is a ratio against a baseline measured in the same run,
//! alternating baseline and library in rounds; the raw numbers are printed beside it. The run
//! writes its figures to `docs/benchmarks/results.json`; the page writer (`lease_page`) writes the
//! page and its plot from them.
//!
//! Options (after `--`): `--quick` (a smoke run, numbers meaningless), `--only 1,3,...` (those
//! measurements; 7 is the profile, 8 the batch claims, 10 the pooler-safe setup), `--no-write`
//! (print only), `--out DIR` (write `DIR/benchmarks/results.json` instead, even with `--quick`),
//! `--profile-cycle N [lib|lib-diesel|hand|hand-cached]` (the loop callgrind runs; not for
//! direct use). Measurement 10 runs through PgBouncer too when `PGBOUNCER_DATABASE_URL` is set.
#![allow(clippy::unwrap_used, clippy::expect_used)]
// A benchmark times itself on the application's clock; no lease is decided by it.
#![allow(clippy::disallowed_methods)]
#![forbid(unsafe_code)]

use std::collections::BTreeSet;

use crate::shared::{Options, Plan, Res};

// Shared with the micro-benchmark (the backends' operations) and the page writer (the results).
#[path = "../common/backend/mod.rs"]
mod backend;
#[path = "../common/batch_figures.rs"]
mod batch_figures;
#[path = "../common/hand_sql.rs"]
mod hand_sql;
#[path = "../common/measure.rs"]
mod measure;
#[path = "../common/measurements.rs"]
mod measurements;
#[path = "../common/results.rs"]
mod results;
#[path = "../common/shared.rs"]
mod shared;
#[path = "../common/suite.rs"]
mod suite;
#[path = "../common/tables.rs"]
mod tables;
#[path = "../common/text.rs"]
mod text;

mod batch;
mod churn;
mod commits;
mod contention;
mod growth;
mod holders;
mod keeper;
mod machine;
mod overhead;
mod own_server;
mod peer;
mod pgbench;
mod pooler;
mod profile;
mod sections;
mod turns;
mod writes;

fn main() {
    if let Err(error) = run() {
        eprintln!("lease_bench failed: {error}");
        std::process::exit(1);
    }
}

fn run() -> Res<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Some(at) = args.iter().position(|arg| arg == "--profile-cycle") {
        let cycles = args.get(at + 1).ok_or("--profile-cycle N")?.parse()?;
        let variant = args.get(at + 2).map(String::as_str).unwrap_or("lib");
        return profile::cycles(cycles, variant);
    }
    // `cargo test --benches` runs this binary without `--bench`: do not benchmark then.
    if !args.iter().any(|arg| arg == "--bench") {
        println!("lease_bench: run it with `cargo bench --all-features --bench lease_bench`");
        return Ok(());
    }
    let quick = args.iter().any(|arg| arg == "--quick");
    let only = match args.iter().position(|arg| arg == "--only") {
        Some(at) => Some(
            args.get(at + 1)
                .ok_or("--only 1,2,...")?
                .split(',')
                .map(str::parse)
                .collect::<Result<BTreeSet<u32>, _>>()?,
        ),
        None => None,
    };
    let out = args
        .iter()
        .position(|arg| arg == "--out")
        .map(|at| {
            args.get(at + 1)
                .map(std::path::PathBuf::from)
                .ok_or("--out DIR")
        })
        .transpose()?;
    let out_is_docs = out.is_none();
    let options = Options {
        plan: if quick { Plan::quick() } else { Plan::full() },
        only,
        write: out.is_some() || (!args.iter().any(|arg| arg == "--no-write") && !quick),
        docs: out
            .unwrap_or_else(|| std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs")),
    };
    // Results written into docs/ must be of a commit: the checkout has to be clean.
    let revision = machine::Revision::current();
    let into_docs = options.write && out_is_docs;
    if into_docs && !revision.is_clean() {
        return Err(format!(
            "refusing to write docs/ from {}: commit first (or write elsewhere with --out DIR, \
             or print only with --no-write)",
            revision.describe()
        )
        .into());
    }
    let started = std::time::Instant::now();
    let mut results = results::Results {
        machine: machine::machine(),
        ..results::Results::default()
    };

    let pg_url = server_url("PostgreSQL", "PG_DATABASE_URL");
    let mysql_url = server_url("MySQL/MariaDB", "MYSQL_DATABASE_URL");

    if let Some(url) = &pg_url {
        sections::run::<backend::Pg>(url, &options, &mut results)?;
        if options.runs(pgbench::SECTION) {
            pgbench::run(url, &options, &mut results)?;
        }
        if options.runs(batch::SECTION) {
            batch::pg::run(url, &options, &mut results)?;
        }
        if options.runs(pooler::SECTION) {
            pooler::run(url, &options, &mut results)?;
        }
        if options.runs(growth::SECTION) {
            growth::run::<backend::Pg>(url, &options.plan, &mut results)?;
        }
        if options.runs(commits::SECTION) {
            commits::run::<backend::Pg>(url, &options.plan, &mut results)?;
        }
        if options.runs(peer::SECTION) {
            peer::run(url, &options.plan, &mut results)?;
        }
        if [
            growth::SECTION,
            churn::SECTION,
            churn::HORIZON,
            writes::SECTION,
        ]
        .iter()
        .any(|section| options.runs(*section))
        {
            own_server::run(&options, &mut results)?;
        }
    }
    if let Some(url) = &mysql_url {
        sections::run::<backend::Mysql>(url, &options, &mut results)?;
        if options.runs(batch::SECTION) {
            batch::mysql::run(url, &options, &mut results)?;
        }
        if options.runs(growth::SECTION) {
            growth::run::<backend::Mysql>(url, &options.plan, &mut results)?;
        }
        if options.runs(commits::SECTION) {
            commits::run::<backend::Mysql>(url, &options.plan, &mut results)?;
        }
    }
    let sqlite_path = std::env::temp_dir().join(format!("bench-lease-{}.db", std::process::id()));
    let sqlite_url = sqlite_path.to_string_lossy().into_owned();
    let sqlite =
        sections::run::<backend::Sqlite>(&sqlite_url, &options, &mut results).and_then(|()| {
            if options.runs(batch::SECTION) {
                batch::sqlite::run(&sqlite_url, &options, &mut results)?;
            }
            if options.runs(growth::SECTION) {
                growth::run::<backend::Sqlite>(&sqlite_url, &options.plan, &mut results)?;
            }
            if options.runs(commits::SECTION) {
                commits::run::<backend::Sqlite>(&sqlite_url, &options.plan, &mut results)?;
            }
            Ok(())
        });
    backend::sqlite::remove_database(&sqlite_url);
    sqlite?;
    if options.runs(measurements::PROFILE) {
        if let Err(error) = profile::run(&options, &mut results) {
            results.note(format!("Profile skipped: {error}"));
        }
    }
    results.seconds = started.elapsed().as_secs_f64();
    results.generated = chrono::Utc::now().format("%Y-%m-%d %H:%M").to_string();
    write(&results, &options)
}

/// Writes the figures to `results.json` for the page writer, unless told not to.
fn write(results: &results::Results, options: &Options) -> Res<()> {
    if !options.write {
        println!("(--no-write or --quick: nothing written)");
        return Ok(());
    }
    let dir = options.docs.join("benchmarks");
    std::fs::create_dir_all(&dir)?;
    let json = dir.join("results.json");
    std::fs::write(&json, serde_json::to_string_pretty(results)? + "\n")?;
    println!(
        "Wrote {}; the page from it: cargo bench --all-features --bench lease_page \
         (with the same --out DIR, if any)",
        json.display()
    );
    Ok(())
}

/// The URL in `variable`, or `None` with a printed note.
fn server_url(backend: &str, variable: &str) -> Option<String> {
    match std::env::var(variable) {
        Ok(url) if !url.trim().is_empty() => Some(url),
        _ => {
            println!("SKIPPED {backend}: {variable} is not set");
            None
        }
    }
}
