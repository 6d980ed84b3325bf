//! Measurement 7: callgrind over the SQLite claim cycle, run on this very binary.

use std::process::Command;

use diesel_lease::{Claim, Lease};

use crate::backend::{self, Backend, Ops, Sqlite};
use crate::results::Profile;
use crate::results::{Better, Results, Row};
use crate::shared::{Options, Res};
use crate::suite::{self, OWNER};

/// The variants profiled, by the name the child process gets: what each cycle runs.
pub const VARIANTS: [(&str, &str); 4] = [
    ("lib", "library"),
    ("hand", "sql_query"),
    ("lib-diesel", "library via diesel::update"),
    ("hand-cached", "hand, prepared once"),
];

/// How many of the costliest functions the results keep.
const TOP: usize = 14;

/// The child process: `cycles` claim cycles of `variant` on a fresh SQLite WAL file.
pub fn cycles(cycles: usize, variant: &str) -> Res<()> {
    let path = std::env::temp_dir().join(format!("bench-lease-profile-{}.db", std::process::id()));
    let url = path.to_string_lossy().into_owned();
    let result = (|| {
        let mut conn = backend::connect::<Sqlite>(&url)?;
        Sqlite::setup(&mut conn)?;
        profile_cycles(&mut conn, 20, variant)?; // warm: the cached variants prepare here
        profile_cycles(&mut conn, cycles, variant)
    })();
    backend::sqlite::remove_database(&url);
    result
}

/// The loop callgrind counts (`--toggle-collect`): nothing outside it is counted.
#[inline(never)]
fn profile_cycles(conn: &mut <Sqlite as Backend>::Conn, cycles: usize, variant: &str) -> Res<()> {
    let lease = Lease::from_secs(30)?;
    for _ in 0..cycles {
        match variant {
            "lib" => Sqlite::lib_cycle(conn, 1, &Claim::new(OWNER)?, lease)?,
            "lib-diesel" => Sqlite::lib_cycle_diesel_update(conn, 1, &Claim::new(OWNER)?, lease)?,
            "hand" => Sqlite::hand_cycle::<false>(
                conn,
                1,
                OWNER,
                &suite::new_token(),
                suite::LEASE_MICROS,
            )?,
            "hand-cached" => Sqlite::hand_cycle::<true>(
                conn,
                1,
                OWNER,
                &suite::new_token(),
                suite::LEASE_MICROS,
            )?,
            other => return Err(format!("unknown profile variant {other:?}").into()),
        }
    }
    Ok(())
}

/// Runs callgrind over each variant and reads its counts.
pub fn run(options: &Options, results: &mut Results) -> Res<()> {
    println!("\n== 7. Profile of the claim cycle (callgrind, SQLite)");
    let valgrind = crate::text::command_line("valgrind", &["--version"]);
    if !valgrind.starts_with("valgrind") {
        return Err("valgrind is not installed".into());
    }
    let exe = std::env::current_exe()?;
    let cycles = options.plan.profile_cycles;
    let mut per_cycle = Vec::new();
    let mut listed = Vec::new();
    let mut listed_diesel = Vec::new();
    for (variant, name) in VARIANTS {
        let out = std::env::temp_dir().join(format!(
            "bench-lease-callgrind-{}-{variant}.out",
            std::process::id()
        ));
        let status = Command::new("valgrind")
            .arg("--tool=callgrind")
            .arg(format!("--callgrind-out-file={}", out.display()))
            .arg("--toggle-collect=*profile_cycles*")
            .arg(&exe)
            .args(["--profile-cycle", &cycles.to_string(), variant])
            .output()?;
        if !status.status.success() {
            return Err(format!(
                "callgrind of {variant} failed: {}",
                String::from_utf8_lossy(&status.stderr)
                    .lines()
                    .last()
                    .unwrap_or("")
            )
            .into());
        }
        let data = std::fs::read_to_string(&out)?;
        let total = data
            .lines()
            .find_map(|line| {
                line.strip_prefix("totals:")
                    .or_else(|| line.strip_prefix("summary:"))
            })
            .and_then(|value| value.split_whitespace().next())
            .and_then(|value| value.parse::<f64>().ok())
            .ok_or("no totals in the callgrind output")?;
        let ir = total / cycles as f64;
        println!(
            "  {name}: {} instructions per cycle",
            crate::text::number(ir, "")
        );
        per_cycle.push((name.to_owned(), ir));
        match variant {
            "lib" => listed = inclusive(&out.to_string_lossy(), total, cycles)?,
            "lib-diesel" => listed_diesel = inclusive(&out.to_string_lossy(), total, cycles)?,
            _ => {}
        }
        let _ = std::fs::remove_file(&out);
    }
    let ir = |k: usize| per_cycle[k].1;
    for (figure, base_name, base, lib_name, lib) in [
        (
            "instructions per cycle",
            VARIANTS[1].1,
            ir(1),
            VARIANTS[0].1,
            ir(0),
        ),
        (
            "instructions per cycle",
            VARIANTS[3].1,
            ir(3),
            VARIANTS[0].1,
            ir(0),
        ),
        (
            "instructions per cycle",
            VARIANTS[1].1,
            ir(1),
            VARIANTS[2].1,
            ir(2),
        ),
    ] {
        results.push(Row {
            section: crate::measurements::PROFILE,
            backend: "SQLite".into(),
            figure: figure.into(),
            baseline_name: base_name.into(),
            baseline: base,
            library_name: lib_name.into(),
            library: lib,
            unit: "".into(),
            ratio: lib / base,
            range: None,
            better: Better::Lower,
            goal: None,
        });
    }
    let top = costliest(&listed);
    for (function, ir, share) in top.iter().take(6) {
        println!(
            "    {:>5.1} %  {:>10}  {function}",
            share * 100.0,
            crate::text::number(*ir, "")
        );
    }
    let centres = CENTRES
        .iter()
        .map(|(what, patterns)| {
            (
                (*what).to_owned(),
                centre(&listed, patterns),
                centre(&listed_diesel, patterns),
            )
        })
        .collect();
    results.profile = Some(Profile {
        cycles,
        per_cycle,
        top,
        centres,
        valgrind,
    });
    Ok(())
}

/// Cost centres of a claim cycle, by the functions that enter them (their costs summed).
const CENTRES: [(&str, &[&str]); 6] = [
    (
        "SQLite parses and plans each statement (sqlite3_prepare_v3)",
        &["sqlite3_prepare_v3"],
    ),
    ("SQLite runs it (sqlite3_step)", &["sqlite3_step"]),
    (
        "Diesel writes the SQL text (construct_sql)",
        &["QueryFragmentForCachedStatement<DB>>::construct_sql"],
    ),
    (
        "SQLite resets and frees the statement (sqlite3_reset, sqlite3_finalize)",
        &["sqlite3_reset", "sqlite3_finalize"],
    ),
    (
        "Diesel binds the values (StatementUse::bind)",
        &["StatementUse::bind"],
    ),
    (
        "Diesel checks whether to cache (is_safe_to_cache_prepared)",
        &["QueryFragmentForCachedStatement<DB>>::is_safe_to_cache_prepared"],
    ),
];

/// The summed inclusive cost per cycle of the functions named (exactly, or by a `::` suffix).
fn centre(listed: &[(String, f64, f64)], patterns: &[&str]) -> f64 {
    patterns
        .iter()
        .map(|pattern| {
            listed
                .iter()
                .find(|(function, _, _)| function == pattern || function.ends_with(pattern))
                .map_or(0.0, |(_, ir, _)| *ir)
        })
        .sum()
}

/// The costliest functions below the cycle, skipping those that only pass their cost on (a
/// callee within 2 % of its caller's cost).
fn costliest(listed: &[(String, f64, f64)]) -> Vec<(String, f64, f64)> {
    let mut top: Vec<(String, f64, f64)> = Vec::new();
    for entry in listed
        .iter()
        .filter(|(function, _, share)| *share < 0.98 && !function.contains("lease_bench::"))
    {
        if top.last().is_some_and(|last| entry.1 >= 0.98 * last.1) {
            continue;
        }
        top.push(entry.clone());
        if top.len() == TOP {
            break;
        }
    }
    top
}

/// Every function of a callgrind profile with its inclusive cost: (function, Ir per cycle, share).
fn inclusive(out: &str, total: f64, cycles: usize) -> Res<Vec<(String, f64, f64)>> {
    let annotate = Command::new("callgrind_annotate")
        .args(["--inclusive=yes", "--threshold=100", out])
        .output()?;
    let text = String::from_utf8_lossy(&annotate.stdout);
    let mut found = Vec::new();
    for line in text.lines() {
        let mut words = line.split_whitespace();
        let Some(Ok(ir)) = words
            .next()
            .map(|count| count.replace(',', "").parse::<f64>())
        else {
            continue;
        };
        let rest: Vec<&str> = words.collect();
        let rest = rest.join(" ");
        let rest = match rest.strip_prefix('(') {
            Some(tail) => tail
                .split_once(')')
                .map_or(rest.as_str(), |(_, after)| after.trim_start()),
            None => rest.as_str(),
        };
        // "file:function [object]"
        let without_object = rest.rsplit_once(" [").map_or(rest, |(head, _)| head);
        let function = match without_object.split_once(':') {
            Some((file, function)) if !file.contains("::") && !file.contains('<') => function,
            _ => without_object,
        };
        if function.is_empty() || function == "PROGRAM TOTALS" {
            continue;
        }
        found.push((function.to_owned(), ir / cycles as f64, ir / total));
    }
    if found.is_empty() {
        return Err("callgrind_annotate listed no function".into());
    }
    Ok(found)
}
