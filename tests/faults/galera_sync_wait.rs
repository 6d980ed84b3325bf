//! Galera's `wsrep_sync_wait` (scenario 5, galera.rs): a claim made on one node, read at once
//! on another, with and without it.
use diesel::connection::SimpleConnection;
use diesel::prelude::*;
use diesel::r2d2::CustomizeConnection;
use diesel::sql_types::Text;
use diesel::MysqlConnection;
use diesel_lease::prelude::*;

use crate::db::fault_jobs;
use crate::galera_cluster::{Cluster, SyncWait};
use crate::galera_contention::{CONTENDED_ROWS, LONG_LEASE};
use crate::report::Outcome;

const SYNC_WAIT_ROUNDS: usize = 100;

#[derive(QueryableByName)]
struct Token {
    #[diesel(sql_type = diesel::sql_types::Nullable<Text>)]
    lease_token: Option<String>,
}

/// A claim on node 1, read at once on node 2 by two sessions: one as it comes, one with
/// `wsrep_sync_wait = 1`, which must always see it.
pub(crate) fn sync_wait(cluster: &Cluster, outcome: &mut Outcome) -> Result<(), String> {
    let claimer = &mut MysqlConnection::establish(&cluster.url(0)).map_err(|e| e.to_string())?;
    let plain = &mut MysqlConnection::establish(&cluster.url(1)).map_err(|e| e.to_string())?;
    let waiting = &mut MysqlConnection::establish(&cluster.url(1)).map_err(|e| e.to_string())?;
    SyncWait
        .on_acquire(waiting)
        .map_err(|e| format!("wsrep_sync_wait: {e}"))?;
    // Each claim follows a large write of node 1's, which node 2 applies first: as a busy
    // cluster would, it gives node 2's applier something to be behind on.
    claimer
        .batch_execute(
            "DROP TABLE IF EXISTS fault_filler; \
             CREATE TABLE fault_filler (id INT PRIMARY KEY, n INT NOT NULL); \
             INSERT INTO fault_filler (id, n) SELECT seq, 0 FROM seq_1_to_2000",
        )
        .map_err(|e| format!("the filler table: {e}"))?;
    let lease = Lease::new(LONG_LEASE).map_err(|e| e.to_string())?;
    let (mut rounds, mut missed_plain, mut missed_waiting) = (0, 0, 0);
    for round in 0..SYNC_WAIT_ROUNDS {
        claimer
            .batch_execute("UPDATE fault_filler SET n = n + 1")
            .map_err(|e| format!("the filler: {e}"))?;
        let row = 1 + (round as i64 % CONTENDED_ROWS);
        let claim = Claim::new("sync-wait").map_err(|e| e.to_string())?;
        let claimed = fault_jobs::table
            .claim_row(row, lease)
            .by(&claim)
            .returning(fault_jobs::id)
            .run::<i64>(claimer)
            .map_err(|e| format!("a claim on node 1: {e}"))?;
        let won = claimed.won();
        let Some(won) = won else { continue };
        rounds += 1;
        let read = |conn: &mut MysqlConnection| -> Result<bool, String> {
            let token: Token = diesel::sql_query("SELECT lease_token FROM fault_jobs WHERE id = ?")
                .bind::<diesel::sql_types::BigInt, _>(row)
                .get_result(conn)
                .map_err(|e| e.to_string())?;
            Ok(token.lease_token.as_deref() == Some(won.claim().token()))
        };
        if !read(plain)? {
            missed_plain += 1;
        }
        if !read(waiting)? {
            missed_waiting += 1;
        }
        won.release()
            .run(claimer)
            .map_err(|e| format!("a release on node 1: {e}"))?;
    }
    outcome.figure(
        "wsrep_sync_wait: claims on node 1 read at once on node 2",
        rounds,
    );
    outcome.figure(
        "wsrep_sync_wait: reads that missed the claim, wsrep_sync_wait = 0 (observed)",
        missed_plain,
    );
    outcome.figure(
        "wsrep_sync_wait: reads that missed the claim, wsrep_sync_wait = 1",
        missed_waiting,
    );
    outcome.check(rounds > 0, || "no claim on node 1 won".into());
    outcome.check(missed_waiting == 0, || {
        format!(
            "{missed_waiting} reads with wsrep_sync_wait = 1 missed a claim made on another node"
        )
    });
    Ok(())
}
