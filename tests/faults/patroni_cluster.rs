//! The failover scenario's cluster (failover.rs): one etcd and three PostgreSQL nodes under
//! Patroni on loopback (PostgreSQL on 5441-5443, Patroni's REST API on 8011-8013, etcd on
//! 2479/2480), a folder of its own under the temporary directory, killed and removed when
//! dropped. Each node's `postgres` is started through libfaketime reading a file of the node's
//! own, so that a node's clock can be moved while it runs (`skew`).
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use diesel::prelude::*;
use diesel::PgConnection;

use crate::db::FaultConn;
use crate::server::{as_root, bin_dir, succeed};

pub(crate) const PORTS: [u16; 3] = [5441, 5442, 5443];
/// How long the cluster may take to be whole (bootstrapped, or a node back and streaming): a
/// bound on the setup, not on the library. Three nodes bootstrapped beside the rest of CI on
/// the 2-core machine once took longer than 60 s; a whole cluster is seen at once.
pub(crate) const WHOLE: Duration = Duration::from_secs(180);

const REST: [u16; 3] = [8011, 8012, 8013];
const ETCD: u16 = 2479;
const ETCD_PEER: u16 = 2480;
/// The settings docs/operations.md gives for a server that stops answering ("Timeouts");
/// libpq applies `connect_timeout` to each host it tries, and reads 1 as 2.
pub(crate) const SETTINGS: &str = "target_session_attrs=read-write&connect_timeout=1\
    &tcp_user_timeout=1000&keepalives=1&keepalives_idle=1&keepalives_interval=1&keepalives_count=1";

pub(crate) struct Node {
    pub(crate) name: String,
    pub(crate) port: u16,
    dir: PathBuf,
    patroni: Option<Child>,
}

pub(crate) struct Cluster {
    dir: PathBuf,
    etcd: Option<Child>,
    pub(crate) nodes: Vec<Node>,
}

impl Cluster {
    /// Starts etcd and the three nodes, and waits until one leads and both others stream from
    /// it (one of them as the synchronous standby, with `synchronous`).
    pub(crate) fn start(synchronous: bool) -> Result<Cluster, String> {
        for program in ["etcd", "patroni", "patronictl"] {
            if Command::new(program).arg("--version").output().is_err() {
                return Err(format!(
                    "no {program} (apt-get install patroni etcd-server etcd-client)"
                ));
            }
        }
        let faketime = ["x86_64-linux-gnu", "aarch64-linux-gnu"]
            .iter()
            .map(|arch| PathBuf::from(format!("/usr/lib/{arch}/faketime/libfaketime.so.1")))
            .find(|path| path.exists())
            .ok_or("no libfaketime (apt-get install faketime)")?;
        if let Some(port) = PORTS
            .iter()
            .chain(&REST)
            .chain(&[ETCD, ETCD_PEER])
            .find(|port| std::net::TcpListener::bind(("127.0.0.1", **port)).is_err())
        {
            return Err(format!(
                "port {port} is taken: the cluster needs 5441-5443, 8011-8013, 2479-2480"
            ));
        }
        let dir = std::env::temp_dir().join(format!(
            "diesel-lease-faults-patroni-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        let mut cluster = Cluster {
            dir: dir.clone(),
            etcd: None,
            nodes: Vec::new(),
        };
        cluster.write_bin(&faketime)?;
        for (n, port) in PORTS.iter().enumerate() {
            let node_dir = dir.join(format!("node{}", n + 1));
            mkdir(&node_dir)?;
            std::fs::write(node_dir.join("skew"), "+0").map_err(|e| e.to_string())?;
            std::fs::write(
                node_dir.join("patroni.yml"),
                config(n, &node_dir, &dir.join("bin"), synchronous),
            )
            .map_err(|e| e.to_string())?;
            cluster.nodes.push(Node {
                name: format!("node{}", n + 1),
                port: *port,
                dir: node_dir,
                patroni: None,
            });
        }
        mkdir(&dir.join("etcd"))?;
        if as_root() {
            succeed(
                Command::new("chown")
                    .args(["-R", "postgres:postgres"])
                    .arg(&dir),
            )?;
        }
        let etcd_url = |port: u16| format!("http://127.0.0.1:{port}");
        cluster.etcd = Some(spawn(
            Command::new("etcd")
                .args(["--name", "faults", "--data-dir"])
                .arg(dir.join("etcd/data"))
                .args(["--listen-client-urls", &etcd_url(ETCD)])
                .args(["--advertise-client-urls", &etcd_url(ETCD)])
                .args(["--listen-peer-urls", &etcd_url(ETCD_PEER)])
                .args(["--initial-advertise-peer-urls", &etcd_url(ETCD_PEER)])
                .args([
                    "--initial-cluster",
                    &format!("faults={}", etcd_url(ETCD_PEER)),
                ]),
            &dir.join("etcd/log"),
        )?);
        wait_for(Duration::from_secs(20), || {
            std::net::TcpStream::connect(("127.0.0.1", ETCD)).ok()
        })
        .ok_or("etcd did not listen within 20 s")?;
        for node in &mut cluster.nodes {
            node.patroni = Some(spawn(
                Command::new("patroni")
                    .arg(node.dir.join("patroni.yml"))
                    .env("HOME", &node.dir)
                    .env("LEASE_SKEW_FILE", node.dir.join("skew")),
                &node.dir.join("patroni.log"),
            )?);
        }
        // Whatever kept it from being whole is in its logs, which the drop removes.
        cluster
            .healthy(synchronous, WHOLE)
            .map_err(|error| format!("{error}; {}", cluster.log_tails()))?;
        Ok(cluster)
    }

    /// The folder of programs Patroni runs: PostgreSQL's, with `postgres` started through
    /// libfaketime, whose offset the node's `skew` file holds (read again every second).
    fn write_bin(&self, faketime: &Path) -> Result<(), String> {
        let bin = self.dir.join("bin");
        mkdir(&bin)?;
        let real = bin_dir()?;
        for entry in std::fs::read_dir(&real).map_err(|e| e.to_string())? {
            let name = entry.map_err(|e| e.to_string())?.file_name();
            if name != "postgres" {
                std::os::unix::fs::symlink(real.join(&name), bin.join(&name))
                    .map_err(|e| e.to_string())?;
            }
        }
        // The monotonic clock stays real: the server's timeouts are not under test.
        let script = format!(
            "#!/bin/sh\nexec env LD_PRELOAD={} FAKETIME_DONT_FAKE_MONOTONIC=1 \
             FAKETIME_CACHE_DURATION=1 FAKETIME_TIMESTAMP_FILE=\"$LEASE_SKEW_FILE\" {} \"$@\"\n",
            faketime.display(),
            real.join("postgres").display()
        );
        let path = bin.join("postgres");
        std::fs::write(&path, script).map_err(|e| e.to_string())?;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
            .map_err(|e| e.to_string())
    }

    /// The URL of the whole cluster: libpq tries the hosts in turn and keeps the one that
    /// takes writes, with the documented timeouts.
    pub(crate) fn url(&self) -> String {
        let hosts: Vec<String> = PORTS
            .iter()
            .map(|port| format!("127.0.0.1:{port}"))
            .collect();
        format!(
            "postgres://postgres@{}/postgres?{SETTINGS}",
            hosts.join(",")
        )
    }

    /// A node's server through its socket, which no packet filter on loopback touches.
    fn local(&self, node: usize) -> QueryResult<PgConnection> {
        let url = format!(
            "postgres://postgres@/postgres?host={}&port={}&connect_timeout=2",
            self.nodes[node].dir.display(),
            self.nodes[node].port
        );
        PgConnection::establish(&url)
            .map_err(|e| diesel::result::Error::QueryBuilderError(e.to_string().into()))
    }

    /// `sql`'s column `n` on `node`.
    pub(crate) fn number(&self, node: usize, sql: &str) -> Option<i64> {
        self.local(node).ok()?.number(sql).ok()?
    }

    /// The node whose server takes writes, among `among`.
    pub(crate) fn writable(&self, among: &[usize]) -> Option<usize> {
        among.iter().copied().find(|node| {
            self.number(
                *node,
                "SELECT CASE WHEN pg_is_in_recovery() THEN 0 ELSE 1 END::bigint AS n",
            ) == Some(1)
        })
    }

    /// Waits until a node leads and both others stream from it (one as its synchronous standby
    /// with `synchronous`); the leader.
    pub(crate) fn healthy(&self, synchronous: bool, within: Duration) -> Result<usize, String> {
        let sql = format!(
            "SELECT count(*) AS n FROM pg_stat_replication WHERE state = 'streaming'{}",
            if synchronous {
                " HAVING count(*) FILTER (WHERE sync_state = 'sync') = 1"
            } else {
                ""
            }
        );
        wait_for(within, || {
            let leader = self.writable(&[0, 1, 2])?;
            (self.number(leader, &sql)? == 2).then_some(leader)
        })
        .ok_or_else(|| format!("the cluster was not whole within {within:?}"))
    }

    /// The ports the replicas' connections to `leader` come from (their WAL streams).
    pub(crate) fn replication_ports(&self, leader: usize) -> Result<Vec<u16>, String> {
        let ports = self
            .local(leader)
            .and_then(|mut conn| {
                conn.numbers("SELECT client_port::bigint AS n FROM pg_stat_replication")
            })
            .map_err(|e| format!("the replication ports: {e}"))?;
        Ok(ports
            .into_iter()
            .flatten()
            .filter_map(|port| u16::try_from(port).ok())
            .collect())
    }

    /// The node `leader` replicates to synchronously (Patroni names a node's stream after it,
    /// `nodeN`): with `synchronous_mode`, the one node Patroni may promote.
    pub(crate) fn sync_standby(&self, leader: usize) -> Option<usize> {
        let n = self.number(
            leader,
            "SELECT substr(application_name, 5)::bigint AS n FROM pg_stat_replication \
             WHERE sync_state = 'sync'",
        )?;
        usize::try_from(n).ok()?.checked_sub(1)
    }

    /// The pid of a node's postmaster, from its `postmaster.pid`.
    pub(crate) fn postmaster(&self, node: usize) -> Result<u32, String> {
        let path = self.nodes[node].dir.join("data/postmaster.pid");
        std::fs::read_to_string(&path)
            .ok()
            .and_then(|text| text.lines().next()?.trim().parse().ok())
            .ok_or_else(|| format!("no pid in {}", path.display()))
    }

    /// Signals a node's postmaster (`KILL`), or its Patroni (`STOP`, `CONT`).
    pub(crate) fn signal(&self, node: usize, signal: &str, patroni: bool) -> Result<(), String> {
        let pid = if patroni {
            self.nodes[node]
                .patroni
                .as_ref()
                .map(Child::id)
                .ok_or("no Patroni")?
        } else {
            self.postmaster(node)?
        };
        succeed(
            Command::new("kill")
                .arg(format!("-{signal}"))
                .arg(pid.to_string()),
        )
    }

    /// Replication made synchronous (Patroni's `synchronous_mode`), or not, for the cluster.
    pub(crate) fn set_synchronous(&self, on: bool) -> Result<(), String> {
        succeed(self.patronictl().args([
            "edit-config",
            "--force",
            "-s",
            &format!("synchronous_mode={on}"),
        ]))
    }

    /// A node's server clock moved by `offset` (libfaketime's syntax, `+5` for 5 s ahead),
    /// within a second.
    pub(crate) fn skew(&self, node: usize, offset: &str) -> Result<(), String> {
        std::fs::write(self.nodes[node].dir.join("skew"), offset).map_err(|e| e.to_string())
    }

    /// The last line of a node's Patroni log.
    pub(crate) fn log_tail(&self, node: usize) -> String {
        std::fs::read_to_string(self.nodes[node].dir.join("patroni.log"))
            .ok()
            .and_then(|log| log.lines().last().map(str::to_owned))
            .unwrap_or_default()
    }

    /// The last lines of each node's Patroni log and of etcd's.
    fn log_tails(&self) -> String {
        let tail = |path: PathBuf| {
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            let lines: Vec<&str> = text.lines().collect();
            format!(
                "{}: {}",
                path.display(),
                lines[lines.len().saturating_sub(5)..].join(" | ")
            )
        };
        let mut tails: Vec<String> = self
            .nodes
            .iter()
            .map(|node| tail(node.dir.join("patroni.log")))
            .collect();
        tails.push(tail(self.dir.join("etcd/log")));
        tails.join("; ")
    }

    fn patronictl(&self) -> Command {
        let mut command = Command::new("patronictl");
        command.arg("-c").arg(self.nodes[0].dir.join("patroni.yml"));
        command
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        // Patroni first, so that it starts no server again; then the servers it left running.
        for node in &mut self.nodes {
            if let Some(mut child) = node.patroni.take() {
                let _ = Command::new("kill")
                    .args(["-CONT", &child.id().to_string()])
                    .status();
                let _ = child.kill();
                let _ = child.wait();
            }
        }
        for node in 0..self.nodes.len() {
            if let Ok(pid) = self.postmaster(node) {
                let _ = Command::new("kill")
                    .args(["-KILL", &pid.to_string()])
                    .status();
            }
        }
        if let Some(mut etcd) = self.etcd.take() {
            let _ = etcd.kill();
            let _ = etcd.wait();
        }
        std::thread::sleep(Duration::from_millis(300));
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Patroni's configuration of node `n`: a leader key of 10 s, a loop of 2 s, and a server that
/// dies failed over at once (`primary_start_timeout: 0`) rather than started again in place.
/// Patroni reaches its own server through the socket, as it would on a host whose network is
/// down: a packet filter on the server's port cuts off clients and replicas, not Patroni. A
/// server shut down (demoted) waits for its WAL senders, and a sender whose standby is cut off
/// waits `wal_sender_timeout` (60 s by default, 5 s here) before it gives up.
fn config(n: usize, dir: &Path, bin: &Path, synchronous: bool) -> String {
    let dir = dir.display();
    format!(
        "scope: diesel-lease-faults
name: node{node}
restapi:
  listen: 127.0.0.1:{rest}
  connect_address: 127.0.0.1:{rest}
etcd3:
  hosts: 127.0.0.1:{ETCD}
bootstrap:
  dcs:
    ttl: 10
    loop_wait: 2
    retry_timeout: 3
    primary_start_timeout: 0
    synchronous_mode: {synchronous}
    postgresql:
      use_pg_rewind: true
      parameters:
        wal_log_hints: 'on'
        wal_sender_timeout: 5s
        synchronous_commit: 'on'
        max_connections: 40
        shared_buffers: 16MB
  initdb:
    - encoding: UTF8
postgresql:
  listen: 127.0.0.1:{port}
  connect_address: 127.0.0.1:{port}
  data_dir: {dir}/data
  bin_dir: {bin}
  pgpass: {dir}/pgpass
  use_unix_socket: true
  authentication:
    superuser: {{username: postgres}}
    replication: {{username: postgres}}
    rewind: {{username: postgres}}
  pg_hba:
    - local all all trust
    - host all all 127.0.0.1/32 trust
    - host replication all 127.0.0.1/32 trust
  parameters:
    unix_socket_directories: {dir}
watchdog:
  mode: 'off'
",
        node = n + 1,
        rest = REST[n],
        port = PORTS[n],
        bin = bin.display(),
    )
}

fn mkdir(dir: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
        .map_err(|e| format!("{}: {e}", dir.display()))
}

/// `command` as the `postgres` user when the suite runs as root (etcd's and PostgreSQL's
/// folders are its), by `setpriv`, which execs, so that the child's pid is the daemon's.
fn spawn(command: &mut Command, log: &Path) -> Result<Child, String> {
    let out = std::fs::File::create(log).map_err(|e| format!("{}: {e}", log.display()))?;
    let err = out.try_clone().map_err(|e| e.to_string())?;
    let mut full = if as_root() {
        let mut setpriv = Command::new("setpriv");
        setpriv
            .args([
                "--reuid=postgres",
                "--regid=postgres",
                "--init-groups",
                "--",
            ])
            .arg(command.get_program())
            .args(command.get_args());
        setpriv
    } else {
        let mut plain = Command::new(command.get_program());
        plain.args(command.get_args());
        plain
    };
    for (key, value) in command.get_envs() {
        if let Some(value) = value {
            full.env(key, value);
        }
    }
    full.stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .spawn()
        .map_err(|e| format!("{:?}: {e}", command.get_program()))
}

/// Polls `ready` every 50 ms until it gives something, for at most `within`.
pub(crate) fn wait_for<T>(within: Duration, mut ready: impl FnMut() -> Option<T>) -> Option<T> {
    let started = crate::timer();
    loop {
        if let Some(value) = ready() {
            return Some(value);
        }
        if started.elapsed() > within {
            return None;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}
