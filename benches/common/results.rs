//! The figures a run gathers: each a library number against its baseline from the same run, and
//! the goal it is held to. The load test writes them to `results.json`; the page writer reads
//! them back from it.
use serde::{Deserialize, Serialize};

use crate::text::number;

/// Which way a ratio is good.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Better {
    Lower,
    Higher,
}

/// A goal of the issue, on the ratio or on the library's raw number.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
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
}

/// One figure: a library number against its baseline from the same run. A number that could
/// not be had (NaN) is `null` in the JSON.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Row {
    pub section: u32,
    pub backend: String,
    pub figure: String,
    pub baseline_name: String,
    #[serde(with = "nan_as_null")]
    pub baseline: f64,
    pub library_name: String,
    #[serde(with = "nan_as_null")]
    pub library: f64,
    pub unit: String,
    /// Library ÷ baseline: the median of the per-round ratios where there are rounds.
    #[serde(with = "nan_as_null")]
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

/// What measurement 7 (callgrind) found.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Profile {
    pub cycles: usize,
    /// Instructions (Ir) per claim cycle of each variant.
    pub per_cycle: Vec<(String, f64)>,
    /// The library cycle's costliest functions, inclusive: (function, Ir per cycle, share).
    pub top: Vec<(String, f64, f64)>,
    /// Cost centres: (what, Ir per cycle of the library, of the library via diesel::update).
    pub centres: Vec<(String, f64, f64)>,
    pub valgrind: String,
}

/// What a run found, and on what: the contents of `results.json`.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Results {
    /// When the run ended, UTC (`YYYY-MM-DD HH:MM`).
    pub generated: String,
    /// How long it took.
    pub seconds: f64,
    /// The machine and the versions, as label and value.
    pub machine: Vec<(String, String)>,
    pub figures: Vec<Row>,
    pub notes: Vec<String>,
    pub profile: Option<Profile>,
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
            number(row.baseline, &row.unit),
            row.library_name,
            number(row.library, &row.unit),
            row.ratio,
            match row.met() {
                Some(true) => " (goal met)",
                Some(false) => " (goal NOT met)",
                None => "",
            }
        );
        self.figures.push(row);
    }
}

/// An `f64` that JSON holds as a number, or as `null` when it is not finite.
mod nan_as_null {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(value: &f64, serializer: S) -> Result<S::Ok, S::Error> {
        if value.is_finite() {
            serializer.serialize_f64(*value)
        } else {
            serializer.serialize_none()
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<f64, D::Error> {
        Ok(Option::<f64>::deserialize(deserializer)?.unwrap_or(f64::NAN))
    }
}
