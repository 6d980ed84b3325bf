//! Worker processes: this same binary run again as a worker (under `faketime` when its slot is
//! skewed), each killed with SIGKILL when a scenario says so and replaced in its slot.
//!
//! A worker says what it saw on its stdout, a line each (`error <kind>`, `finished <ids>`,
//! `stale <n>`, `clock <offset>`, `refused`, `turn`): figures for the report, never the outcomes
//! a scenario asserts, which are counted in the database (a worker may die between its COMMIT
//! and its line).
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::db::Kind;

/// Makes the process a worker: `<role> <backend> <name>`.
pub const WORKER: &str = "LEASE_FAULTS_WORKER";
/// The worker's database URL (a file path for SQLite).
pub const URL: &str = "LEASE_FAULTS_URL";
/// The role of a worker that is a node: restarted under the same name after a kill.
pub const NODE: &str = "node";

/// What the workers said, summed over all of them.
#[derive(Debug, Default)]
pub struct Tally {
    /// Errors by kind.
    pub errors: BTreeMap<String, u64>,
    /// Every job a worker was told it finished (its release returned it), in order.
    pub finished: Vec<i64>,
    /// The offsets of the workers' clocks from the database's, in whole hours.
    pub clock_hours: BTreeMap<i64, u64>,
    /// Jobs a worker finished too late: its release found them taken over and left them alone.
    pub stale: u64,
    /// Jobs a restarted node freed at start-up, held by its earlier life.
    pub freed: u64,
    pub refused: u64,
    pub turns: u64,
}

impl Tally {
    fn read(&mut self, line: &str) {
        let (word, rest) = line.split_once(' ').unwrap_or((line, ""));
        match word {
            "error" => *self.errors.entry(rest.to_owned()).or_default() += 1,
            "finished" => self
                .finished
                .extend(rest.split(' ').filter_map(|id| id.parse::<i64>().ok())),
            "clock" => {
                if let Ok(seconds) = rest.parse::<f64>() {
                    *self
                        .clock_hours
                        .entry((seconds / 3600.0).round() as i64)
                        .or_default() += 1;
                }
            }
            "stale" => self.stale += rest.parse::<u64>().unwrap_or(0),
            "freed" => self.freed += rest.parse::<u64>().unwrap_or(0),
            "refused" => self.refused += 1,
            "turn" => self.turns += 1,
            _ => eprintln!("{line}"),
        }
    }

    /// The errors, as `kind: count` lines; "none" when there were none.
    pub fn errors_text(&self) -> String {
        crate::shared::errors_text(&self.errors)
    }

    /// The errors other than SQLite's retryable "database is locked".
    pub fn unexpected_errors(&self) -> u64 {
        self.errors
            .iter()
            .filter(|(kind, _)| kind.as_str() != BUSY)
            .map(|(_, count)| count)
            .sum()
    }
}

/// How a worker names `diesel_lease::Error::Busy`.
pub const BUSY: &str = "Busy (retryable)";

struct Worker {
    name: String,
    child: Child,
    stdin: Option<ChildStdin>,
    reader: Option<JoinHandle<()>>,
}

/// The worker processes of one scenario run, a slot each.
pub struct Fleet {
    role: String,
    kind: Kind,
    url: String,
    skews: Vec<Option<&'static str>>,
    slots: Vec<Worker>,
    spawned: usize,
    next_victim: usize,
    pub kills: usize,
    pub pauses: usize,
    pub tally: Arc<Mutex<Tally>>,
    pub failures: Vec<String>,
}

impl Fleet {
    /// A worker per entry of `skews`: `None` runs on the machine's clock, `Some("+1h")` under
    /// `faketime -f +1h`.
    pub fn start(
        role: &str,
        kind: Kind,
        url: &str,
        skews: &[Option<&'static str>],
    ) -> Result<Fleet, String> {
        let mut fleet = Fleet {
            role: role.to_owned(),
            kind,
            url: url.to_owned(),
            skews: skews.to_vec(),
            slots: Vec::new(),
            spawned: 0,
            next_victim: 0,
            kills: 0,
            pauses: 0,
            tally: Arc::default(),
            failures: Vec::new(),
        };
        for slot in 0..skews.len() {
            let worker = fleet.spawn(slot)?;
            fleet.slots.push(worker);
        }
        Ok(fleet)
    }

    fn spawn(&mut self, slot: usize) -> Result<Worker, String> {
        let exe = std::env::current_exe().map_err(|e| format!("the test binary: {e}"))?;
        // A node's worker starts again under its slot's name, as a restarted machine would; the
        // others under a name of their own.
        let prefix = self.role.split(':').next().unwrap_or("worker");
        let name = if prefix == NODE {
            format!("{prefix}-{slot}")
        } else {
            format!("{prefix}-{}", self.spawned)
        };
        self.spawned += 1;
        let mut command = match self.skews[slot] {
            Some(skew) => {
                let mut command = Command::new("faketime");
                command.arg("-f").arg(skew).arg(&exe);
                command
            }
            None => Command::new(&exe),
        };
        // A process group of its own: `faketime` runs the worker as its child, and both must die.
        let mut child = command
            .process_group(0)
            .env(WORKER, format!("{} {} {name}", self.role, self.kind.arg()))
            .env(URL, &self.url)
            .env(
                crate::db::POOLING_ENV,
                if crate::db::pooling() { "1" } else { "0" },
            )
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| match self.skews[slot] {
                Some(_) => format!("faketime: {e} (apt-get install faketime)"),
                None => format!("a worker process: {e}"),
            })?;
        let stdout = child.stdout.take().ok_or("a worker's stdout")?;
        let tally = Arc::clone(&self.tally);
        let reader = std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                tally.lock().unwrap_or_else(|e| e.into_inner()).read(&line);
            }
        });
        Ok(Worker {
            name,
            stdin: child.stdin.take(),
            child,
            reader: Some(reader),
        })
    }

    /// SIGKILLs the next worker in turn and starts another in its slot.
    pub fn kill_one(&mut self) -> Result<(), String> {
        let slot = self.next_victim % self.slots.len();
        self.next_victim += 1;
        let worker = &mut self.slots[slot];
        match worker.child.try_wait() {
            // Already gone on its own: judged like any exit.
            Ok(Some(status)) => self.note_exit(slot, status, false),
            _ => {
                let status =
                    kill(&mut worker.child).map_err(|e| format!("kill {}: {e}", worker.name))?;
                self.kills += 1;
                self.note_exit(slot, status, true);
            }
        }
        self.slots[slot] = self.spawn(slot)?;
        Ok(())
    }

    /// Stops the next worker in turn (SIGSTOP) for `pause`, then lets it go on (SIGCONT): a
    /// worker that stalls past its lease, as under a long GC pause or a swapped-out machine.
    pub fn pause_one(&mut self, pause: Duration) -> Result<(), String> {
        let slot = self.next_victim % self.slots.len();
        self.next_victim += 1;
        let group = format!("-{}", self.slots[slot].child.id());
        signal("-STOP", &group).map_err(|e| format!("SIGSTOP: {e}"))?;
        std::thread::sleep(pause);
        signal("-CONT", &group).map_err(|e| format!("SIGCONT: {e}"))?;
        self.pauses += 1;
        Ok(())
    }

    fn note_exit(&mut self, slot: usize, status: std::process::ExitStatus, killed: bool) {
        let worker = &mut self.slots[slot];
        if let Some(reader) = worker.reader.take() {
            let _ = reader.join();
        }
        if !killed && !status.success() {
            self.failures
                .push(format!("{} exited with {status}", worker.name));
        }
    }

    /// The process ids of the workers running now.
    pub fn pids(&self) -> Vec<u32> {
        self.slots.iter().map(|worker| worker.child.id()).collect()
    }

    /// Whether every worker has exited.
    pub fn all_exited(&mut self) -> bool {
        self.slots
            .iter_mut()
            .all(|worker| matches!(worker.child.try_wait(), Ok(Some(_))))
    }

    /// Asks every worker to stop (their stdin closes), waits for them up to `patience`, and
    /// kills those still running then: a worker that does not stop is a failure, as is one that
    /// exits with an error or a panic.
    pub fn finish(&mut self, patience: Duration) {
        for worker in &mut self.slots {
            worker.stdin = None;
        }
        let started = crate::timer();
        while !self.all_exited() && started.elapsed() < patience {
            std::thread::sleep(Duration::from_millis(20));
        }
        for slot in 0..self.slots.len() {
            let worker = &mut self.slots[slot];
            let status = match worker.child.try_wait() {
                Ok(Some(status)) => status,
                _ => {
                    self.failures.push(format!(
                        "{} still ran after {patience:?}: killed",
                        worker.name
                    ));
                    match kill(&mut worker.child) {
                        Ok(status) => status,
                        Err(_) => continue,
                    }
                }
            };
            self.note_exit(slot, status, false);
        }
    }

    /// Runs `fault` every `period` while `go_on` says so, up to `limit` times.
    pub fn every(
        &mut self,
        period: Duration,
        limit: usize,
        mut go_on: impl FnMut(&mut Fleet) -> bool,
        mut fault: impl FnMut(&mut Fleet) -> Result<(), String>,
    ) -> Result<usize, String> {
        let mut done = 0;
        while done < limit {
            std::thread::sleep(period);
            if !go_on(self) {
                break;
            }
            fault(self)?;
            done += 1;
        }
        Ok(done)
    }
}

impl Drop for Fleet {
    fn drop(&mut self) {
        for worker in &mut self.slots {
            if matches!(worker.child.try_wait(), Ok(None)) {
                let _ = kill(&mut worker.child);
            }
        }
    }
}

/// SIGKILLs a worker's process group (the worker, and `faketime` around it), and reaps it.
fn kill(child: &mut Child) -> std::io::Result<ExitStatus> {
    signal("-KILL", &format!("-{}", child.id()))?;
    child.wait()
}

/// Sends `signal` to `target` (a pid, or a process group as `-pgid`).
fn signal(signal: &str, target: &str) -> std::io::Result<()> {
    Command::new("kill")
        .args([signal, "--", target])
        .status()
        .map(drop)
}

/// Set in a worker once its stdin closes: the suite asks it to stop, or is gone.
static STOP: AtomicBool = AtomicBool::new(false);

/// In a worker: watches stdin for its end.
pub fn watch_stdin() {
    std::thread::spawn(|| {
        let mut sink = Vec::new();
        let _ = std::io::Read::read_to_end(&mut std::io::stdin(), &mut sink);
        STOP.store(true, Ordering::SeqCst);
    });
}

/// In a worker: whether to stop.
pub fn stopping() -> bool {
    STOP.load(Ordering::SeqCst)
}

/// In a worker: an error's kind, as the report groups them.
pub fn error_kind(error: &diesel_lease::Error) -> String {
    use diesel::result::Error as Diesel;
    use diesel_lease::Error;
    let first_line = |text: &str| -> String {
        let line = text.lines().next().unwrap_or("").trim();
        // Numbers (statement names, ports) would split one kind into many.
        line.chars()
            .filter(|c| !c.is_ascii_digit())
            .take(80)
            .collect()
    };
    match error {
        Error::Busy(_) => BUSY.into(),
        Error::Database(Diesel::DatabaseError(kind, info)) => {
            format!("Database ({kind:?}): {}", first_line(info.message()))
        }
        Error::Database(other) => format!("Database: {}", first_line(&other.to_string())),
        Error::Connection(e) => format!("Connection: {}", first_line(&e.to_string())),
        Error::Pool(_) => "Pool: no connection within the checkout timeout".into(),
        other => format!("Other: {}", first_line(&other.to_string())),
    }
}
