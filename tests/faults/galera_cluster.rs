//! Galera's cluster (scenario 5, galera.rs): three MariaDB nodes of the suite's own on loopback,
//! a data folder each under the temporary directory and ports of their own; and what the
//! scenario's parts share of it.
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use diesel::connection::SimpleConnection;
use diesel::prelude::*;
use diesel::r2d2::{ConnectionManager, CustomizeConnection};
use diesel::sql_types::Text;
use diesel::MysqlConnection;

use crate::db::{self, fault_jobs, Pool};
use crate::server::{as_root, succeed};

pub(crate) const NODES: usize = 3;
pub(crate) const DATABASE: &str = "faults";

/// Every connection waits for the node to have applied what the cluster committed before it
/// reads (`wsrep_sync_wait = 1`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct SyncWait;

impl CustomizeConnection<MysqlConnection, diesel::r2d2::Error> for SyncWait {
    fn on_acquire(&self, conn: &mut MysqlConnection) -> Result<(), diesel::r2d2::Error> {
        conn.batch_execute("SET SESSION wsrep_sync_wait = 1")
            .map_err(diesel::r2d2::Error::QueryError)
    }
}

pub(crate) struct Node {
    pub(crate) port: u16,
    config: PathBuf,
    child: Option<Child>,
}

/// The cluster: a folder per node under the temporary directory, owned by `mysql` when the
/// suite runs as root; killed, and the folder removed, when dropped.
pub(crate) struct Cluster {
    dir: PathBuf,
    mariadbd: PathBuf,
    pub(crate) nodes: Vec<Node>,
    pub(crate) version: String,
    pub(crate) ready_in: Duration,
}

impl Cluster {
    pub(crate) fn start() -> Result<Cluster, String> {
        let mariadbd = ["/usr/sbin/mariadbd", "/usr/bin/mariadbd"]
            .into_iter()
            .map(PathBuf::from)
            .find(|path| path.exists())
            .ok_or("no mariadbd (apt-get install mariadb-server)")?;
        let provider = std::env::var("LEASE_FAULTS_GALERA_LIB")
            .unwrap_or_else(|_| "/usr/lib/galera/libgalera_smm.so".into());
        if !Path::new(&provider).exists() {
            return Err(format!(
                "no Galera provider at {provider} (apt-get install galera-4)"
            ));
        }
        if Command::new("rsync").arg("--version").output().is_err() {
            return Err(
                "no rsync, which Galera's state transfer uses (apt-get install rsync)".into(),
            );
        }
        // The first block of ports of which every one is free.
        let offset = [0_u16, 100, 200, 300]
            .into_iter()
            .find(|offset| {
                (0..NODES as u16).all(|i| {
                    [3311, 4611, 4621, 4631].iter().all(|base| {
                        std::net::TcpListener::bind(("127.0.0.1", base + offset + i)).is_ok()
                    })
                })
            })
            .ok_or("no free ports for the cluster")?;
        let dir =
            std::env::temp_dir().join(format!("diesel-lease-faults-galera-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let gcomm: Vec<String> = (0..NODES as u16)
            .map(|i| format!("127.0.0.1:{}", 4611 + offset + i))
            .collect();
        let mut nodes = Vec::new();
        for i in 0..NODES as u16 {
            let node_dir = dir.join(format!("node{}", i + 1));
            std::fs::create_dir_all(node_dir.join("data"))
                .map_err(|e| format!("{}: {e}", node_dir.display()))?;
            let port = 3311 + offset + i;
            let config = node_dir.join("my.cnf");
            std::fs::write(
                &config,
                node_config(
                    &node_dir,
                    i + 1,
                    port,
                    &gcomm.join(","),
                    &provider,
                    offset + i,
                ),
            )
            .map_err(|e| format!("{}: {e}", config.display()))?;
            nodes.push(Node {
                port,
                config,
                child: None,
            });
        }
        let mut cluster = Cluster {
            dir,
            mariadbd,
            nodes,
            version: String::new(),
            ready_in: Duration::ZERO,
        };
        if as_root() {
            succeed(
                Command::new("chown")
                    .arg("-R")
                    .arg("mysql:mysql")
                    .arg(&cluster.dir),
            )?;
        }
        let mut install = Command::new("mariadb-install-db");
        install
            .arg(format!(
                "--defaults-file={}",
                cluster.nodes[0].config.display()
            ))
            .args(["--auth-root-authentication-method=normal", "--skip-test-db"]);
        if as_root() {
            install.arg("--user=mysql");
        }
        succeed(&mut install)?;
        let started = crate::timer();
        cluster.start_node(0, true)?;
        cluster.wait_synced(0, Duration::from_secs(60))?;
        let conn = &mut MysqlConnection::establish(&cluster.server_url(0))
            .map_err(|e| format!("node 1: {e}"))?;
        conn.batch_execute(&format!("CREATE DATABASE IF NOT EXISTS {DATABASE}"))
            .map_err(|e| format!("the database: {e}"))?;
        cluster.version = diesel::select(diesel::dsl::sql::<Text>("VERSION()"))
            .get_result::<String>(conn)
            .map(|version| format!("MariaDB {version}"))
            .map_err(|e| e.to_string())?;
        // One joiner at a time: two joining at once make the group settle slowly.
        for node in 1..NODES {
            cluster.start_node(node, false)?;
            cluster.wait_synced(node, Duration::from_secs(60))?;
        }
        cluster.ready_in = started.elapsed();
        Ok(cluster)
    }

    pub(crate) fn server_url(&self, node: usize) -> String {
        format!("mysql://root@127.0.0.1:{}", self.nodes[node].port)
    }

    pub(crate) fn url(&self, node: usize) -> String {
        format!("{}/{DATABASE}", self.server_url(node))
    }

    pub(crate) fn pool(&self, node: usize, size: u32) -> Pool<MysqlConnection> {
        db::pool::<MysqlConnection>(&self.url(node), size)
    }

    /// A pool whose reads see every commit of the cluster.
    pub(crate) fn synced_pool(&self, node: usize) -> Pool<MysqlConnection> {
        Pool::builder()
            .max_size(2)
            .min_idle(Some(0))
            .connection_timeout(Duration::from_secs(5))
            .connection_customizer(Box::new(SyncWait))
            .build_unchecked(ConnectionManager::new(self.url(node)))
    }

    pub(crate) fn start_node(&mut self, node: usize, new_cluster: bool) -> Result<(), String> {
        let mut command = Command::new(&self.mariadbd);
        command.arg(format!(
            "--defaults-file={}",
            self.nodes[node].config.display()
        ));
        if as_root() {
            command.arg("--user=mysql");
        }
        if new_cluster {
            command.arg("--wsrep-new-cluster");
        }
        let child = command
            .process_group(0)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("mariadbd: {e}"))?;
        self.nodes[node].child = Some(child);
        Ok(())
    }

    /// Waits until every node has applied the queue's `rows` rows: DDL is ordered the same on
    /// every node, but applied by each in its own time.
    pub(crate) fn settle(&self, rows: i64) -> Result<(), String> {
        for node in 0..NODES {
            let pool = self.synced_pool(node);
            let started = crate::timer();
            loop {
                let seen = pool.get().ok().and_then(|mut conn| {
                    fault_jobs::table.count().get_result::<i64>(&mut *conn).ok()
                });
                if seen == Some(rows) {
                    break;
                }
                if started.elapsed() > Duration::from_secs(30) {
                    return Err(format!("node {} saw {seen:?} rows, not {rows}", node + 1));
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        Ok(())
    }

    /// SIGKILLs a node.
    pub(crate) fn kill(&mut self, node: usize) -> Result<(), String> {
        let mut child = self.nodes[node]
            .child
            .take()
            .ok_or("the node was not running")?;
        child.kill().map_err(|e| format!("kill: {e}"))?;
        child.wait().map_err(|e| format!("wait: {e}"))?;
        Ok(())
    }

    fn status(&self, node: usize, name: &str) -> Result<String, String> {
        let conn =
            &mut MysqlConnection::establish(&self.server_url(node)).map_err(|e| e.to_string())?;
        diesel::select(diesel::dsl::sql::<Text>(&format!(
            "(SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS \
             WHERE VARIABLE_NAME = '{name}')"
        )))
        .get_result(conn)
        .map_err(|e| e.to_string())
    }

    /// Waits until the node is Synced with the cluster.
    pub(crate) fn wait_synced(&mut self, node: usize, patience: Duration) -> Result<(), String> {
        let started = crate::timer();
        let mut last = String::new();
        while started.elapsed() < patience {
            if let Some(Ok(Some(status))) = self.nodes[node].child.as_mut().map(Child::try_wait) {
                last = format!("mariadbd exited with {status}");
                break;
            }
            match self.status(node, "WSREP_LOCAL_STATE_COMMENT") {
                Ok(state) if state == "Synced" => return Ok(()),
                Ok(state) => last = state,
                Err(error) => last = error,
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let log = std::fs::read_to_string(self.dir.join(format!("node{}/error.log", node + 1)))
            .unwrap_or_default();
        let tail: Vec<&str> = log.lines().rev().take(8).collect();
        Err(format!(
            "node {} not Synced within {patience:?}: {last}; its log ends: {}",
            node + 1,
            tail.into_iter().rev().collect::<Vec<_>>().join(" / ")
        ))
    }

    /// Waits until `node` sees a cluster of `size`.
    pub(crate) fn wait_for_size(
        &self,
        node: usize,
        size: usize,
        patience: Duration,
    ) -> Result<(), String> {
        let started = crate::timer();
        let mut last = String::new();
        while started.elapsed() < patience {
            match self.status(node, "WSREP_CLUSTER_SIZE") {
                Ok(seen) if seen == size.to_string() => return Ok(()),
                Ok(seen) => last = seen,
                Err(error) => last = error,
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Err(format!(
            "node {} did not see a cluster of {size} within {patience:?}: {last}",
            node + 1
        ))
    }

    /// Certification failures and brute-force aborts so far, summed over the nodes.
    pub(crate) fn conflicts(&self) -> Result<(u64, u64), String> {
        let mut sums = (0, 0);
        for node in 0..NODES {
            let number = |name| -> Result<u64, String> {
                self.status(node, name)?
                    .parse::<u64>()
                    .map_err(|e| format!("{name}: {e}"))
            };
            sums.0 += number("WSREP_LOCAL_CERT_FAILURES")?;
            sums.1 += number("WSREP_LOCAL_BF_ABORTS")?;
        }
        Ok(sums)
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for node in &mut self.nodes {
            if let Some(mut child) = node.child.take() {
                let _ = child.kill();
                let _ = child.wait();
            }
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A node's settings: its own folder, socket and ports, Galera's on loopback, little memory, and
/// messages in German (`lc_messages`): a conflict lost at COMMIT must be told by its number (1213),
/// not by its English message.
fn node_config(
    dir: &Path,
    number: u16,
    port: u16,
    gcomm: &str,
    provider: &str,
    offset: u16,
) -> String {
    let dir = dir.display();
    format!(
        "[mariadbd]\n\
         datadir={dir}/data\n\
         socket={dir}/mariadb.sock\n\
         pid-file={dir}/mariadb.pid\n\
         log-error={dir}/error.log\n\
         port={port}\n\
         bind-address=127.0.0.1\n\
         skip-name-resolve\n\
         performance_schema=OFF\n\
         innodb_buffer_pool_size=32M\n\
         binlog_format=ROW\n\
         default_storage_engine=InnoDB\n\
         innodb_autoinc_lock_mode=2\n\
         innodb_flush_log_at_trx_commit=1\n\
         innodb_lock_wait_timeout=5\n\
         lc_messages=de_DE\n\
         wsrep_on=ON\n\
         wsrep_provider={provider}\n\
         wsrep_cluster_name=diesel_lease_faults\n\
         wsrep_node_name=node{number}\n\
         wsrep_cluster_address=gcomm://{gcomm}\n\
         wsrep_node_address=127.0.0.1:{gcomm_port}\n\
         wsrep_sst_method=rsync\n\
         wsrep_sst_receive_address=127.0.0.1:{sst_port}\n\
         wsrep_provider_options=\"gmcast.listen_addr=tcp://127.0.0.1:{gcomm_port};\
         ist.recv_addr=127.0.0.1:{ist_port};gcache.size=32M;\
         evs.keepalive_period=PT0.5S;evs.suspect_timeout=PT2S;evs.inactive_timeout=PT4S;evs.install_timeout=PT4S\"\n",
        gcomm_port = 4611 + offset,
        ist_port = 4621 + offset,
        sst_port = 4631 + offset,
    )
}
