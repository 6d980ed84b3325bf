//! A network partition on loopback: every packet to or from one TCP port dropped, as a
//! firewall or a dead link would, while the server's processes run on. Made with `tc` (an HTB
//! root on `lo` whose second class ends in a `blackhole` qdisc, and two `u32` filters that send
//! the port's packets there), because this machine's kernel has no `netem` and no `gact`
//! action; iptables is not installed. Needs root (`CAP_NET_ADMIN`).
use std::process::Command;

use crate::server::succeed;

/// The partition of some ports, healed when dropped (on a panic too).
pub struct Partition {
    ports: Vec<u16>,
    healed: bool,
}

impl Partition {
    /// Drops every packet to or from `port` from now on.
    pub fn cut(port: u16) -> Result<Partition, String> {
        Partition::cut_all(&[port])
    }

    /// Drops every packet to or from any of `ports` from now on (a server's port, or the
    /// ephemeral ports of some connections).
    pub fn cut_all(ports: &[u16]) -> Result<Partition, String> {
        let partition = Partition {
            ports: ports.to_vec(),
            healed: false,
        };
        // A root left by an earlier run that died is replaced, not added to.
        tc(&[
            "qdisc", "replace", "dev", "lo", "root", "handle", "1:", "htb", "default", "1",
        ])?;
        for class in ["1:1", "1:2"] {
            tc(&[
                "class", "add", "dev", "lo", "parent", "1:", "classid", class, "htb", "rate",
                "100gbit",
            ])?;
        }
        tc(&[
            "qdisc",
            "add",
            "dev",
            "lo",
            "parent",
            "1:2",
            "handle",
            "20:",
            "blackhole",
        ])?;
        for port in ports {
            let port_text = port.to_string();
            for direction in ["dport", "sport"] {
                tc(&[
                    "filter", "add", "dev", "lo", "parent", "1:", "protocol", "ip", "prio", "1",
                    "u32", "match", "ip", direction, &port_text, "0xffff", "flowid", "1:2",
                ])?;
            }
        }
        Ok(partition)
    }

    /// Lets the port's packets through again.
    pub fn heal(&mut self) -> Result<(), String> {
        if !self.healed {
            self.healed = true;
            tc(&["qdisc", "del", "dev", "lo", "root"])
                .map_err(|e| format!("healing the partition of ports {:?}: {e}", self.ports))?;
        }
        Ok(())
    }
}

impl Drop for Partition {
    fn drop(&mut self) {
        let _ = self.heal();
    }
}

fn tc(args: &[&str]) -> Result<(), String> {
    succeed(Command::new("tc").args(args))
}

/// The kernel's TCP settings for this machine's network namespace, set for a while and put
/// back when dropped: MariaDB's client library turns TCP keepalives on but takes no timeout
/// that Diesel can set, so on MySQL/MariaDB these are what end a wait on a silent server.
pub struct KernelTcp {
    saved: Vec<(&'static str, String)>,
}

impl KernelTcp {
    /// The settings docs/operations.md gives for MySQL/MariaDB: a keepalive after 1 s idle, the connection
    /// given up when it is not answered within 1 s; unacknowledged data given up after 2
    /// retransmissions. They apply to connections opened afterwards.
    pub const MYSQL: [(&'static str, &'static str); 4] = [
        ("tcp_keepalive_time", "1"),
        ("tcp_keepalive_intvl", "1"),
        ("tcp_keepalive_probes", "1"),
        ("tcp_retries2", "2"),
    ];

    pub fn set(settings: &[(&'static str, &str)]) -> Result<KernelTcp, String> {
        let mut kernel = KernelTcp { saved: Vec::new() };
        for (name, value) in settings {
            let path = format!("/proc/sys/net/ipv4/{name}");
            let old = std::fs::read_to_string(&path).map_err(|e| format!("{path}: {e}"))?;
            std::fs::write(&path, value).map_err(|e| format!("{path}: {e}"))?;
            kernel.saved.push((name, old.trim().to_owned()));
        }
        Ok(kernel)
    }
}

impl Drop for KernelTcp {
    fn drop(&mut self) {
        for (name, old) in &self.saved {
            let _ = std::fs::write(format!("/proc/sys/net/ipv4/{name}"), old);
        }
    }
}
