//! `docs/benchmarks/ratios.svg`: every figure's ratio as a bar against its goal.
use std::collections::BTreeSet;
use std::fmt::Write as _;

use crate::measurements::BATCH;
use crate::page::{goal_ratio, ratio_text, TITLES};
use crate::results::{Better, Results, Row};

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
        && (row.section != BATCH || row.goal.and_then(goal_ratio).is_some())
}

/// A horizontal bar per figure: library ÷ baseline on a linear axis from 0 to 2 (1 = the
/// baseline), green where a goal is met, red where not, grey where the issue sets no goal.
pub fn svg(results: &Results) -> String {
    const WIDTH: f64 = 1180.0;
    const LABEL: f64 = 660.0;
    const AXIS: f64 = 400.0;
    const MAX: f64 = 2.0;
    const ROW: f64 = 20.0;
    let rows: Vec<&Row> = results.figures.iter().filter(|row| plotted(row)).collect();
    let sections: BTreeSet<u32> = rows.iter().map(|row| row.section).collect();
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
    for (section, title) in TITLES {
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
            if let Some(goal) = row.goal.and_then(goal_ratio) {
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
