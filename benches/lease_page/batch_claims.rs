//! The headline of measurement 8 (the batch claims) in docs/benchmarks.md, from its rows.
use std::fmt::Write as _;

use crate::batch_figures::*;
use crate::results::Row;
use crate::text::number;

fn ratio_text(ratio: f64) -> String {
    if ratio.is_finite() {
        format!("{ratio:.2}x")
    } else {
        "—".into()
    }
}

fn met_text(met: bool) -> &'static str {
    if met {
        "yes"
    } else {
        "**no**"
    }
}

/// The section's headline, above its table of every figure: each goal per backend with its
/// worst cell, then the library's rate per thread count and batch size against both baselines.
pub fn markdown(rows: &[&Row]) -> String {
    let mut md = String::new();
    let mut backends: Vec<&str> = Vec::new();
    for row in rows {
        if !backends.contains(&row.backend.as_str()) {
            backends.push(&row.backend);
        }
    }
    let find = |backend: &str, figure: &str, baseline: &str| {
        rows.iter()
            .find(|row| {
                row.backend == backend && row.figure == figure && row.baseline_name == baseline
            })
            .copied()
    };
    md.push_str(
        "| Goal | Backend | Cells meeting it | Worst cell | Met |\n|---|---|---:|---|---|\n",
    );
    for backend in &backends {
        for (goal, baseline, batches) in [
            (
                format!("jobs/s ≥ {LIKE_FOR_LIKE:.2}x the {HAND} (like for like: the headline)"),
                HAND,
                &BATCHES[..],
            ),
            (
                format!(
                    "jobs/s ≥ {OVER_NAIVE:.0}x {NAIVE}, at batch {}",
                    BATCHES[BATCHES.len() - 1]
                ),
                NAIVE,
                &BATCHES[BATCHES.len() - 1..],
            ),
        ] {
            let cells: Vec<(usize, usize, &Row)> = THREADS
                .iter()
                .flat_map(|&threads| batches.iter().map(move |&n| (threads, n)))
                .filter_map(|(threads, n)| {
                    find(backend, &cell_figure(threads, n), baseline).map(|row| (threads, n, row))
                })
                .collect();
            let Some((threads, n, worst)) = cells
                .iter()
                .copied()
                .min_by(|a, b| a.2.ratio.total_cmp(&b.2.ratio))
            else {
                continue;
            };
            let met = cells
                .iter()
                .filter(|(_, _, row)| row.met() == Some(true))
                .count();
            let _ = writeln!(
                md,
                "| {goal} | {backend} | {met} of {} | {} ({threads} thread(s), batch {n}) | {} |",
                cells.len(),
                ratio_text(worst.ratio),
                met_text(met == cells.len())
            );
        }
        if let Some(row) = find(backend, LOST_FIGURE, NAIVE) {
            let _ = writeln!(
                md,
                "| no lost race for the library | {backend} | — | library {}, {NAIVE} {} | {} |",
                number(row.library, ""),
                number(row.baseline, ""),
                met_text(row.met() == Some(true))
            );
        }
        if let Some(row) = find(backend, CLAIM_ROW_FIGURE, BARE) {
            let collected = find(backend, CLAIM_ROW_FIGURE, BARE_COLLECTED)
                .map_or(String::new(), |other| {
                    format!("; {} the same read with load", ratio_text(other.ratio))
                });
            let _ = writeln!(
                md,
                "| `claim_row` ≤ {CLAIM_ROW:.2}x the time of the {BARE} | {backend} | — | {} ({} against {}{collected}) | {} |",
                ratio_text(row.ratio),
                number(row.library, &row.unit),
                number(row.baseline, &row.unit),
                met_text(row.met() == Some(true))
            );
        }
    }
    let _ = writeln!(
        md,
        "\nThe library's jobs per second (claim a batch, finish it in one release), and its ratio to the {HAND} · to {NAIVE}:\n"
    );
    md.push_str("| Backend | Threads |");
    for n in BATCHES {
        let _ = write!(md, " batch {n} |");
    }
    md.push_str("\n|---|---:|");
    for _ in BATCHES {
        md.push_str("---:|");
    }
    md.push('\n');
    for backend in &backends {
        for threads in THREADS {
            let mut line = format!("| {backend} | {threads} |");
            let mut any = false;
            for n in BATCHES {
                let figure = cell_figure(threads, n);
                match (find(backend, &figure, HAND), find(backend, &figure, NAIVE)) {
                    (Some(hand), Some(naive)) => {
                        any = true;
                        let _ = write!(
                            line,
                            " {} ({} · {}) |",
                            number(hand.library, ""),
                            ratio_text(hand.ratio),
                            ratio_text(naive.ratio)
                        );
                    }
                    _ => line.push_str(" — |"),
                }
            }
            if any {
                md.push_str(&line);
                md.push('\n');
            }
        }
    }
    md.push_str("\nEvery figure:\n\n");
    md
}
