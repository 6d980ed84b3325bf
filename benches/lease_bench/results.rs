//! The figures a run gathers: each a library number against its baseline from the same run, and
//! the goal it is held to.
use std::time::Duration;

use crate::profile_figures::Profile;
use crate::text::number;

/// Which way a ratio is good.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Better {
    Lower,
    Higher,
}

/// A goal of the issue, on the ratio or on the library's raw number.
#[derive(Debug, Clone, Copy)]
pub enum Goal {
    RatioAtMost(f64),
    RatioAtLeast(f64),
    LibraryAtMost(f64),
    LibraryAtLeast(f64),
}

impl Goal {
    pub fn met(self, row: &Row) -> bool {
        match self {
            Goal::RatioAtMost(goal) => row.ratio <= goal,
            Goal::RatioAtLeast(goal) => row.ratio >= goal,
            Goal::LibraryAtMost(goal) => row.library <= goal,
            Goal::LibraryAtLeast(goal) => row.library >= goal,
        }
    }

    pub fn describe(self, unit: &str) -> String {
        match self {
            Goal::RatioAtMost(goal) => format!("≤ {goal:.2}x"),
            Goal::RatioAtLeast(goal) => format!("≥ {goal:.2}x"),
            Goal::LibraryAtMost(goal) => format!("library ≤ {}", number(goal, unit)),
            Goal::LibraryAtLeast(goal) => format!("library ≥ {}", number(goal, unit)),
        }
    }

    pub fn ratio(self) -> Option<f64> {
        match self {
            Goal::RatioAtMost(goal) | Goal::RatioAtLeast(goal) => Some(goal),
            _ => None,
        }
    }
}

/// One figure: a library number against its baseline from the same run.
#[derive(Debug, Clone)]
pub struct Row {
    pub section: u32,
    pub backend: &'static str,
    pub figure: String,
    pub baseline_name: String,
    pub baseline: f64,
    pub library_name: String,
    pub library: f64,
    pub unit: &'static str,
    /// Library ÷ baseline: the median of the per-round ratios where there are rounds.
    pub ratio: f64,
    /// The smallest and largest per-round ratio.
    pub range: Option<(f64, f64)>,
    pub better: Better,
    pub goal: Option<Goal>,
}

impl Row {
    pub fn met(&self) -> Option<bool> {
        self.goal.map(|goal| goal.met(self))
    }
}

#[derive(Debug, Default)]
pub struct Results {
    pub machine: Vec<(String, String)>,
    pub rows: Vec<Row>,
    pub notes: Vec<String>,
    pub profile: Option<Profile>,
    pub elapsed: Duration,
}

impl Results {
    pub fn note(&mut self, note: impl Into<String>) {
        let note = note.into();
        println!("  note: {note}");
        self.notes.push(note);
    }

    pub fn push(&mut self, row: Row) {
        println!(
            "  [{}] {} | {} | {}: {} | {}: {} | {:.3}x{}",
            row.section,
            row.backend,
            row.figure,
            row.baseline_name,
            number(row.baseline, row.unit),
            row.library_name,
            number(row.library, row.unit),
            row.ratio,
            match row.met() {
                Some(true) => " (goal met)",
                Some(false) => " (goal NOT met)",
                None => "",
            }
        );
        self.rows.push(row);
    }
}
