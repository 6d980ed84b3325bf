//! Measurement 8's (the batch claims') cells, figures, baselines and goals: what the measurement
//! names its rows by and the page finds them by. A leaf: it imports no other file.

/// Worker threads, each on its own pooled connection.
pub const THREADS: [usize; 3] = [1, 4, 16];
/// The most jobs one claim takes.
pub const BATCHES: [usize; 3] = [1, 10, 100];
/// The goals: the library against the same SQL by hand, prepared once (jobs/s)...
pub const LIKE_FOR_LIKE: f64 = 0.95;
/// ... against select-then-claim-each at the largest batch (jobs/s) ...
pub const OVER_NAIVE: f64 = 5.0;
/// ... and `claim_row` against the bare changesets (µs per claim).
pub const CLAIM_ROW: f64 = 1.03;

pub const LIBRARY: &str = "library";
pub const HAND: &str = "same SQL by hand, prepared once";
pub const NAIVE: &str = "select, then claim each by id";
pub const BARE: &str = "bare changesets by hand";
/// The same, the row read with `load` (every row collected) rather than `get_result`.
pub const BARE_COLLECTED: &str = "bare changesets by hand, read with load";

/// The figure of a cell of the batch measurement.
pub fn cell_figure(threads: usize, batch: usize) -> String {
    format!("jobs/s, {threads} thread(s), batch {batch}")
}

pub const LOST_FIGURE: &str = "lost races, all cells (a claim that found its job taken)";
pub const CLAIM_ROW_FIGURE: &str = "µs per claim of one row by key";
