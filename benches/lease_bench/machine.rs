//! The machine and the commit a run measures: the first rows of the results.
use std::process::Command;

use crate::text::command_line;

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
