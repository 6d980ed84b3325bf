//! What every file of the harness shares: its result type, its check, the options of a run and
//! the plan of how long each measurement runs. A leaf: it imports no other file of the harness.
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::Duration;

/// What the harness's functions return: any error, to be printed.
pub type Res<T> = Result<T, Box<dyn std::error::Error + Send + Sync>>;

/// Fails with `what` unless `ok`.
pub fn check(ok: bool, what: &str) -> Res<()> {
    if ok {
        Ok(())
    } else {
        Err(what.into())
    }
}

/// What this run does.
#[derive(Debug, Clone)]
pub struct Options {
    pub plan: Plan,
    pub only: Option<BTreeSet<u32>>,
    pub write: bool,
    /// Where `benchmarks/results.json` goes: `docs/`, or `--out DIR`.
    pub docs: PathBuf,
}

impl Options {
    pub fn runs(&self, measurement: u32) -> bool {
        self.only
            .as_ref()
            .is_none_or(|only| only.contains(&measurement))
    }
}

/// How long and how often each measurement runs.
#[derive(Debug, Clone, Copy)]
pub struct Plan {
    /// Rounds of the single-connection A/B measurements (each variant once per round).
    pub rounds: usize,
    /// How long one variant runs in one round of a single-connection measurement.
    pub slice: Duration,
    /// Rounds of the multi-threaded measurements.
    pub thread_rounds: usize,
    /// How long one variant runs in one round of a multi-threaded measurement.
    pub thread_slice: Duration,
    /// Rounds of measurement 2 (pgbench and the library).
    pub pgbench_rounds: usize,
    /// Seconds of one pgbench (and library) run.
    pub pgbench_secs: u64,
    /// Lease holders of measurement 4.
    pub holders: usize,
    /// Claim cycles per callgrind profile.
    pub profile_cycles: usize,
    /// Rounds of each cell of measurement 8 (batch claims).
    pub batch_rounds: usize,
    /// How long workers drain a queue in one sample of measurement 8, at most.
    pub batch_slice: Duration,
    /// The fewest and the most jobs a queue of measurement 8 holds (its warm-up queues the fewest).
    pub batch_jobs: (usize, usize),
    /// Rows of measurement 8's single-row claims (each sample claims each at most once).
    pub claim_rows: usize,
    /// Rounds of measurement 9's renewal rounds.
    pub keeper_rounds: usize,
    /// How long one variant renews in one round of measurement 9.
    pub keeper_slice: Duration,
    /// The minutes of measurements 14 and 15: their length, and how many of churn.
    pub minute: Duration,
    pub churn_minutes: usize,
}

impl Plan {
    pub fn full() -> Self {
        Self {
            rounds: 15,
            slice: Duration::from_millis(200),
            thread_rounds: 5,
            thread_slice: Duration::from_millis(1000),
            pgbench_rounds: 5,
            pgbench_secs: 5,
            holders: 10_000,
            profile_cycles: 2_000,
            batch_rounds: 5,
            batch_slice: Duration::from_millis(200),
            batch_jobs: (1_000, 60_000),
            claim_rows: 30_000,
            keeper_rounds: 7,
            keeper_slice: Duration::from_millis(300),
            minute: Duration::from_secs(60),
            churn_minutes: 10,
        }
    }

    /// A smoke run: every code path, numbers meaningless.
    pub fn quick() -> Self {
        Self {
            rounds: 2,
            slice: Duration::from_millis(50),
            thread_rounds: 1,
            thread_slice: Duration::from_millis(200),
            pgbench_rounds: 1,
            pgbench_secs: 1,
            holders: 200,
            profile_cycles: 50,
            batch_rounds: 1,
            batch_slice: Duration::from_millis(100),
            batch_jobs: (200, 5_000),
            claim_rows: 5_000,
            keeper_rounds: 1,
            keeper_slice: Duration::from_millis(50),
            minute: Duration::from_secs(3),
            churn_minutes: 2,
        }
    }
}
