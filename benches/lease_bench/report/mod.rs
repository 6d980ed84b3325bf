//! The results: markdown tables, `results.json`, the SVG plot of the ratios, and the generated
//! part of `docs/benchmarks.md`: the page writer, reached from main.rs alone. It reads the
//! measurements' results (`results.rs`) and their section numbers and figure names; no measurement
//! imports it.
use std::fmt::Write as _;
use std::process::Command;

use crate::profile_figures::Profile;
use crate::results::{Better, Goal, Results, Row};
use crate::shared::{Options, Res};
use crate::text::{command_line, number};

mod batch_claims;

/// The measurements, numbered as in the issue.
pub const SECTIONS: [(u32, &str); 16] = [
    (
        1,
        "Overhead: one row's claim, renew, release cycle against the same SQL by hand",
    ),
    (
        2,
        "The server's limit: the cycle through pgbench -M prepared against the library",
    ),
    (3, "Agent turns: acquire + release of both locks"),
    (4, "Holders at once through a pool of 4 connections"),
    (5, "Contention: 16 threads refused on one hot row"),
    (
        6,
        "SQLite: the claim cycle against hand-written statements (WAL, synchronous=NORMAL)",
    ),
    (7, "Profile of the claim cycle (callgrind, SQLite)"),
    (
        crate::batch::SECTION,
        "Batch claims: claim up to n queued jobs, finish them in one release",
    ),
    (
        crate::keeper::SECTION,
        "The keeper: renewal rounds of 1 to 100,000 held rows, and a kept claim cycle",
    ),
    (
        crate::pooler::SECTION,
        "Behind a transaction pooler: the claim cycle without the statement cache, and through PgBouncer",
    ),
    (
        crate::growth::SECTION,
        "Growth: queues of 10,000, 100,000 and 1,000,000 jobs, 90% of them done",
    ),
    (
        crate::commits::SECTION,
        "The commit limit: the claim cycle's durable commits against one-row commits",
    ),
    (
        crate::peer::SECTION,
        "A peer on the same server: graphile-worker draining no-op jobs",
    ),
    (
        crate::churn::SECTION,
        "Churn: ten minutes of claims and finishes on one queue, on a server with autovacuum on",
    ),
    (
        crate::churn::HORIZON,
        "A pinned horizon: a REPEATABLE READ transaction open for a minute, against the minute before",
    ),
    (
        crate::writes::SECTION,
        "The write cost: WAL bytes, and HOT renewals on the migration's table",
    ),
];

/// The machine and the versions, as label and value.
pub fn machine() -> Vec<(String, String)> {
    let read = |path: &str| std::fs::read_to_string(path).unwrap_or_default();
    let cpu = read("/proc/cpuinfo")
        .lines()
        .find(|line| line.starts_with("model name"))
        .and_then(|line| line.split(':').nth(1))
        .map(|model| model.trim().to_owned())
        .unwrap_or_else(|| "unknown".into());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let memory = read("/proc/meminfo")
        .lines()
        .find(|line| line.starts_with("MemTotal"))
        .and_then(|line| line.split_whitespace().nth(1))
        .and_then(|kib| kib.parse::<f64>().ok())
        .map(|kib| format!("{:.1} GiB", kib / 1024.0 / 1024.0))
        .unwrap_or_else(|| "unknown".into());
    let os = read("/etc/os-release")
        .lines()
        .find_map(|line| line.strip_prefix("PRETTY_NAME="))
        .map(|name| name.trim_matches('"').to_owned())
        .unwrap_or_else(|| std::env::consts::OS.into());
    let kernel = read("/proc/sys/kernel/osrelease").trim().to_owned();
    let lock = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.lock"))
        .unwrap_or_default();
    let locked = |name: &str| {
        let header = format!("name = \"{name}\"\n");
        lock.split("[[package]]")
            .find(|package| {
                package.trim_start().starts_with(header.trim_end()) && package.contains(&header)
            })
            .and_then(|package| {
                package
                    .lines()
                    .find_map(|line| line.strip_prefix("version = "))
            })
            .map(|version| version.trim_matches('"').to_owned())
            .unwrap_or_else(|| "unknown".into())
    };
    vec![
        (
            "CPU".into(),
            format!("{cpu}, {cores} cores (available parallelism)"),
        ),
        ("Memory".into(), memory),
        ("OS".into(), format!("{os}, Linux {kernel}")),
        ("rustc".into(), command_line("rustc", &["--version"])),
        (
            "Crates".into(),
            format!(
                "diesel {}, r2d2 {}, libsqlite3-sys {} (bundled), pq-sys {}, mysqlclient-sys {}",
                locked("diesel"),
                locked("r2d2"),
                locked("libsqlite3-sys"),
                locked("pq-sys"),
                locked("mysqlclient-sys")
            ),
        ),
        ("Build".into(), "cargo bench: the release profile".into()),
        ("diesel-lease".into(), Revision::current().describe()),
    ]
}

/// The commit a run measures, and what in the checkout differs from it.
#[derive(Debug, Clone)]
pub struct Revision {
    /// The full commit hash, or what stands for it outside a git checkout.
    pub commit: String,
    /// Tracked files changed and untracked files, outside the harness's own output
    /// (`docs/benchmarks.md`, `docs/benchmarks/`); `None` when git could not tell.
    pub changed: Option<Vec<String>>,
}

impl Revision {
    /// `LEASE_BENCH_REVISION` (a commit, for sources that are not a git checkout), or git's.
    pub fn current() -> Self {
        if let Ok(commit) = std::env::var("LEASE_BENCH_REVISION") {
            return Self {
                commit,
                changed: None,
            };
        }
        let git = |args: &[&str]| {
            Command::new("git")
                .args(["-C", env!("CARGO_MANIFEST_DIR")])
                .args(args)
                .output()
                .ok()
                .filter(|out| out.status.success())
                .map(|out| String::from_utf8_lossy(&out.stdout).into_owned())
        };
        let Some(head) = git(&["rev-parse", "HEAD"]) else {
            return Self {
                commit: "unknown (not a git checkout)".into(),
                changed: None,
            };
        };
        let changed = git(&[
            "status",
            "--porcelain",
            "--untracked-files=all",
            "--",
            ".",
            ":(exclude)docs/benchmarks.md",
            ":(exclude)docs/benchmarks",
        ])
        .map(|status| {
            status
                .lines()
                .map(|line| line.get(3..).unwrap_or(line).to_owned())
                .collect()
        });
        Self {
            commit: head.trim().to_owned(),
            changed,
        }
    }

    /// Whether the checkout is the commit, file for file.
    pub fn is_clean(&self) -> bool {
        self.changed.as_ref().is_some_and(Vec::is_empty)
    }

    /// The commit, and the tree's state, for the results.
    pub fn describe(&self) -> String {
        match &self.changed {
            Some(changed) if changed.is_empty() => {
                format!("git {} (a clean tree)", self.commit)
            }
            Some(changed) => format!(
                "git {} with UNCOMMITTED CHANGES ({} file(s): {}): these results are not of the commit",
                self.commit,
                changed.len(),
                changed.iter().take(5).cloned().collect::<Vec<_>>().join(", ")
            ),
            None => format!("{} (whether the tree is clean is unknown)", self.commit),
        }
    }
}

fn ratio_text(ratio: f64) -> String {
    if !ratio.is_finite() {
        "—".into()
    } else if ratio >= 100.0 {
        format!("{ratio:.0}x")
    } else {
        format!("{ratio:.3}x")
    }
}

/// Every goal of the run but the batch claims' (section 8 has a table of its own), in one table.
fn goals(results: &Results) -> String {
    let mut rows: Vec<&Row> = results
        .rows
        .iter()
        .filter(|row| row.goal.is_some() && row.section != crate::batch::SECTION)
        .collect();
    rows.sort_by_key(|row| row.section);
    if rows.is_empty() {
        return String::new();
    }
    let mut md = String::from(
        "\n### Goals\n\nEvery goal of this run (the batch claims' are in section 8), each against the \
         baseline it is set on:\n\n| Section | Backend | Figure | Baseline | Library | This run | Goal | Met |\n\
         |---:|---|---|---|---|---:|---|---|\n",
    );
    for row in rows {
        let this_run = match row.goal {
            Some(Goal::LibraryAtMost(_) | Goal::LibraryAtLeast(_)) => number(row.library, row.unit),
            _ => format!("{:.2}x", row.ratio),
        };
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} | {this_run} | {} | {} |",
            row.section,
            row.backend,
            row.figure,
            row.baseline_name,
            row.library_name,
            row.goal.map_or("—".into(), |goal| goal.describe(row.unit)),
            match row.met() {
                Some(true) => "yes",
                Some(false) => "**no**",
                None => "—",
            }
        );
    }
    md
}

/// The generated markdown: machine, tables, notes, profile, plot.
pub fn markdown(results: &Results) -> String {
    let mut md = String::new();
    let _ = writeln!(
        md,
        "Generated by the harness on {} UTC; the run took {:.0} s.\n",
        chrono::Utc::now().format("%Y-%m-%d %H:%M"),
        results.elapsed.as_secs_f64()
    );
    md.push_str("| Machine and versions | |\n|---|---|\n");
    for (label, value) in &results.machine {
        let _ = writeln!(md, "| {label} | {} |", value.replace('|', "\\|"));
    }
    md.push_str("\n![Every figure as a ratio against its baseline](benchmarks/ratios.svg)\n");
    md.push_str(&goals(results));
    for (section, title) in SECTIONS {
        let rows: Vec<&Row> = results
            .rows
            .iter()
            .filter(|row| row.section == section)
            .collect();
        if rows.is_empty() {
            continue;
        }
        let _ = writeln!(md, "\n### {section}. {title}\n");
        if section == crate::batch::SECTION {
            md.push_str(&batch_claims::markdown(&rows));
        }
        md.push_str("| Backend | Figure | Baseline | Baseline, raw | Library, raw | Ratio (library ÷ baseline) | Rounds' range | Goal | Met |\n");
        md.push_str("|---|---|---|---:|---:|---:|---:|---|---|\n");
        for row in rows {
            let range = row
                .range
                .map_or("—".into(), |(min, max)| format!("{min:.3}–{max:.3}"));
            let better = match row.better {
                Better::Lower => "lower is better",
                Better::Higher => "higher is better",
            };
            let _ = writeln!(
                md,
                "| {} | {} ({better}) | {} | {} | {}: {} | **{}** | {range} | {} | {} |",
                row.backend,
                row.figure,
                row.baseline_name,
                number(row.baseline, row.unit),
                row.library_name,
                number(row.library, row.unit),
                ratio_text(row.ratio),
                row.goal.map_or("—".into(), |goal| goal.describe(row.unit)),
                match row.met() {
                    Some(true) => "yes",
                    Some(false) => "**no**",
                    None => "—",
                }
            );
        }
        if let (7, Some(profile)) = (section, &results.profile) {
            md.push('\n');
            md.push_str(&profile.markdown());
        }
    }
    if !results.notes.is_empty() {
        md.push_str("\nNotes of this run:\n\n");
        for note in &results.notes {
            let _ = writeln!(md, "* {note}");
        }
    }
    md
}

fn json_string(text: &str) -> String {
    let mut out = String::from("\"");
    for ch in text.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            ch if (ch as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", ch as u32);
            }
            ch => out.push(ch),
        }
    }
    out.push('"');
    out
}

fn json_number(value: f64) -> String {
    if value.is_finite() {
        format!("{value}")
    } else {
        "null".into()
    }
}

pub fn json(results: &Results) -> String {
    let mut out = String::from("{\n  \"machine\": {");
    let machine: Vec<String> = results
        .machine
        .iter()
        .map(|(label, value)| format!("\n    {}: {}", json_string(label), json_string(value)))
        .collect();
    out.push_str(&machine.join(","));
    out.push_str("\n  },\n  \"figures\": [");
    let rows: Vec<String> = results
        .rows
        .iter()
        .map(|row| {
            format!(
                "\n    {{\"section\": {}, \"backend\": {}, \"figure\": {}, \"baseline_name\": {}, \"baseline\": {}, \
                 \"library_name\": {}, \"library\": {}, \"unit\": {}, \"ratio\": {}, \"ratio_min\": {}, \"ratio_max\": {}, \
                 \"better\": {}, \"goal\": {}, \"met\": {}}}",
                row.section,
                json_string(row.backend),
                json_string(&row.figure),
                json_string(&row.baseline_name),
                json_number(row.baseline),
                json_string(&row.library_name),
                json_number(row.library),
                json_string(row.unit),
                json_number(row.ratio),
                row.range.map_or("null".into(), |(min, _)| json_number(min)),
                row.range.map_or("null".into(), |(_, max)| json_number(max)),
                json_string(if row.better == Better::Lower { "lower" } else { "higher" }),
                row.goal.map_or("null".into(), |goal| json_string(&goal.describe(row.unit))),
                row.met().map_or("null".into(), |met| met.to_string()),
            )
        })
        .collect();
    out.push_str(&rows.join(","));
    out.push_str("\n  ],\n  \"profile\": ");
    out.push_str(
        &results
            .profile
            .as_ref()
            .map_or("null".into(), Profile::json),
    );
    out.push_str(",\n  \"notes\": [");
    let notes: Vec<String> = results
        .notes
        .iter()
        .map(|note| format!("\n    {}", json_string(note)))
        .collect();
    out.push_str(&notes.join(","));
    out.push_str("\n  ]\n}\n");
    out
}

fn xml(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// Whether a row is drawn: the plot leaves out the counts that only repeat another row, and
/// of the batch claims the figures without a goal on their ratio.
fn plotted(row: &Row) -> bool {
    row.ratio.is_finite()
        && !row.figure.starts_with("statements per")
        && !row.figure.contains("per release")
        && (row.section != crate::batch::SECTION || row.goal.and_then(Goal::ratio).is_some())
}

/// A horizontal bar per figure: library ÷ baseline on a linear axis from 0 to 2 (1 = the
/// baseline), green where a goal is met, red where not, grey where the issue sets no goal.
pub fn svg(results: &Results) -> String {
    const WIDTH: f64 = 1180.0;
    const LABEL: f64 = 660.0;
    const AXIS: f64 = 400.0;
    const MAX: f64 = 2.0;
    const ROW: f64 = 20.0;
    let rows: Vec<&Row> = results.rows.iter().filter(|row| plotted(row)).collect();
    let sections: BTreeSetU32 = rows.iter().map(|row| row.section).collect();
    let height = 70.0 + ROW * (rows.len() + sections.len()) as f64 + 40.0;
    let x = |ratio: f64| LABEL + AXIS * ratio.clamp(0.0, MAX) / MAX;
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="10" y="22" font-size="15" font-weight="bold">diesel-lease: library ÷ baseline, both measured in the same run (1.0x = the baseline)</text>"#
    );
    let _ = writeln!(
        s,
        r##"<text x="10" y="42" fill="#555">green: goal met · red: goal not met · grey: no goal · black tick: the goal · ↓/↑: lower/higher is better · bars stop at 2x</text>"##
    );
    let top = 60.0;
    let bottom = height - 30.0;
    for tick in [0.0, 0.5, 1.0, 1.5, 2.0] {
        let tx = x(tick);
        let (stroke, dash) = if tick == 1.0 {
            ("#000", "")
        } else {
            ("#ccc", r#" stroke-dasharray="3,3""#)
        };
        let _ = writeln!(
            s,
            r#"<line x1="{tx}" y1="{top}" x2="{tx}" y2="{bottom}" stroke="{stroke}"{dash}/>"#
        );
        let _ = writeln!(
            s,
            r#"<text x="{tx}" y="{}" text-anchor="middle">{tick:.1}x</text>"#,
            bottom + 15.0
        );
    }
    let mut y = top + 5.0;
    for (section, title) in SECTIONS {
        let in_section: Vec<&&Row> = rows.iter().filter(|row| row.section == section).collect();
        if in_section.is_empty() {
            continue;
        }
        let _ = writeln!(
            s,
            r#"<text x="10" y="{}" font-weight="bold">{section}. {}</text>"#,
            y + 14.0,
            xml(title)
        );
        y += ROW;
        for row in in_section {
            let color = match row.met() {
                Some(true) => "#2e7d32",
                Some(false) => "#c62828",
                None => "#90a4ae",
            };
            let arrow = if row.better == Better::Lower {
                "↓"
            } else {
                "↑"
            };
            let label = format!(
                "{} · {}: {} ÷ {} {arrow}",
                row.backend, row.figure, row.library_name, row.baseline_name
            );
            let _ = writeln!(s, r#"<text x="20" y="{}">{}</text>"#, y + 13.0, xml(&label));
            let width = x(row.ratio) - LABEL;
            let _ = writeln!(
                s,
                r#"<rect x="{LABEL}" y="{}" width="{width:.1}" height="{}" fill="{color}"/>"#,
                y + 3.0,
                ROW - 6.0
            );
            let mut text_x = x(row.ratio) + 6.0;
            if let Some(goal) = row.goal.and_then(Goal::ratio) {
                let gx = x(goal);
                let _ = writeln!(
                    s,
                    r##"<line x1="{gx}" y1="{}" x2="{gx}" y2="{}" stroke="#000" stroke-width="2"/>"##,
                    y + 1.0,
                    y + ROW - 1.0
                );
                text_x = text_x.max(gx + 6.0);
            }
            let clipped = if row.ratio > MAX { " ▶" } else { "" };
            let _ = writeln!(
                s,
                r#"<text x="{text_x}" y="{}">{}{clipped}</text>"#,
                y + 13.0,
                ratio_text(row.ratio)
            );
            y += ROW;
        }
    }
    s.push_str("</svg>\n");
    s
}

type BTreeSetU32 = std::collections::BTreeSet<u32>;

const BEGIN: &str = "<!-- BEGIN GENERATED BY lease_bench -->";
const END: &str = "<!-- END GENERATED BY lease_bench -->";

/// Prints the tables, and writes the plot, the JSON and the generated part of docs/benchmarks.md.
pub fn publish(results: &Results, options: &Options) -> Res<()> {
    let md = markdown(results);
    println!("\n{md}");
    if !options.write {
        println!("(--no-write or --quick: nothing written)");
        return Ok(());
    }
    let docs = &options.docs;
    std::fs::create_dir_all(docs.join("benchmarks"))?;
    std::fs::write(docs.join("benchmarks/ratios.svg"), svg(results))?;
    std::fs::write(docs.join("benchmarks/results.json"), json(results))?;
    let page = docs.join("benchmarks.md");
    let text = std::fs::read_to_string(&page).unwrap_or_default();
    match (text.find(BEGIN), text.find(END)) {
        (Some(begin), Some(end)) if begin < end => {
            let updated = format!("{}{BEGIN}\n{md}{}", &text[..begin], &text[end..]);
            std::fs::write(&page, updated)?;
            println!("Wrote {} (generated part), benchmarks/ratios.svg and benchmarks/results.json beside it", page.display());
        }
        _ => {
            println!(
                "{} has no {BEGIN} .. {END} block: wrote only benchmarks/ratios.svg and results.json beside it",
                page.display()
            );
        }
    }
    Ok(())
}
