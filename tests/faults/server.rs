//! A throwaway PostgreSQL: initdb into a folder of its own under the temporary directory, on a
//! free port, with the server's default settings (durable commits, autovacuum on), stopped and
//! removed when dropped. The fault suite restarts and partitions it; the benchmark harness
//! includes this file (`#[path]`) to measure churn and write cost on a server whose settings are
//! not the CI image's.
use std::path::PathBuf;
use std::process::Command;

/// The throwaway server: a data folder of its own under the temporary directory, owned by the
/// `postgres` user when the suite runs as root (PostgreSQL refuses to run as root).
pub struct Server {
    pub bin: PathBuf,
    pub dir: PathBuf,
    pub port: u16,
}

impl Server {
    pub fn start() -> Result<Server, String> {
        let bin = bin_dir()?;
        let port = (5433..5500)
            .find(|port| std::net::TcpListener::bind(("127.0.0.1", *port)).is_ok())
            .ok_or("no free port in 5433..5500")?;
        let dir =
            std::env::temp_dir().join(format!("diesel-lease-faults-pg-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let server = Server { bin, dir, port };
        if as_root() {
            succeed(
                Command::new("chown")
                    .arg("postgres:postgres")
                    .arg(&server.dir),
            )?;
        }
        let data = server.dir.join("data");
        succeed(server.command("initdb").arg("-D").arg(&data).args([
            "-U",
            "postgres",
            "--auth=trust",
            "-E",
            "UTF8",
            "--no-sync",
        ]))?;
        server.pg_ctl(&["start"])?;
        Ok(server)
    }

    pub fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }

    /// A program of the server's, run as `postgres` when the suite runs as root.
    fn command(&self, program: &str) -> Command {
        let program = self.bin.join(program);
        if as_root() {
            let mut command = Command::new("runuser");
            command.args(["-u", "postgres", "--"]).arg(program);
            command
        } else {
            Command::new(program)
        }
    }

    /// `pg_ctl ACTION` on the server's folder and port, waiting for it to finish.
    pub fn pg_ctl(&self, action: &[&str]) -> Result<(), String> {
        // Durable commits: with synchronous_commit off, a crash would lose commits whose
        // success the workers were already told.
        let options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c synchronous_commit=on -c fsync=on",
            self.port,
            self.dir.display()
        );
        succeed(
            self.command("pg_ctl")
                .args(action)
                .arg("-D")
                .arg(self.dir.join("data"))
                .args(["-o", &options, "-l"])
                .arg(self.dir.join("log"))
                .args(["-w", "-t", "60"]),
        )
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.pg_ctl(&["stop", "-m", "immediate"]);
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The newest PostgreSQL's programs: `LEASE_FAULTS_PG_BIN`, or Debian's /usr/lib/postgresql/N/bin.
pub(crate) fn bin_dir() -> Result<PathBuf, String> {
    if let Some(bin) = std::env::var_os("LEASE_FAULTS_PG_BIN") {
        return Ok(bin.into());
    }
    let versions = std::fs::read_dir("/usr/lib/postgresql")
        .map_err(|e| format!("/usr/lib/postgresql: {e} (set LEASE_FAULTS_PG_BIN)"))?;
    versions
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .max()
        .map(|version| PathBuf::from(format!("/usr/lib/postgresql/{version}/bin")))
        .filter(|bin| bin.join("initdb").exists())
        .ok_or_else(|| {
            "no PostgreSQL server programs under /usr/lib/postgresql (set LEASE_FAULTS_PG_BIN)"
                .into()
        })
}

pub(crate) fn as_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|out| String::from_utf8_lossy(&out.stdout).trim() == "0")
}

/// Runs `command`; its output is shown only when it fails.
pub(crate) fn succeed(command: &mut Command) -> Result<(), String> {
    let output = command.output().map_err(|e| format!("{command:?}: {e}"))?;
    if output.status.success() {
        return Ok(());
    }
    Err(format!(
        "{command:?}: {}\n{}{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    ))
}
