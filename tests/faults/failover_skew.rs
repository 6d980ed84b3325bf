//! The failover scenario's third run (failover.rs): a new primary whose clock is 5 s ahead
//! (libfaketime, a little below the keeper's margin of 6 s). Rows are claimed on the old
//! primary, some kept by a keeper and some not (a lease of 20 s); the primary's postmaster is
//! SIGKILLed, Patroni promotes the skewed node (the synchronous standby, the one node it may
//! promote in `synchronous_mode`), and a rival claims every row it can. By the new primary's
//! clock every live lease is 5 s older: the rows nobody renews are taken that much early, by
//! the machine's clock (the witness's), and no more (the bound docs/reliability.md states: a
//! lease moves by the skew); the kept rows, renewed on the new primary, are not taken while the
//! keeper says they are held.
use std::collections::BTreeMap;
use std::time::Duration;

use diesel::PgConnection;
use diesel_lease::{Holds, Keeper, KeeperSettings, Lease};

use crate::db::{self, FaultConn, Kind, Witness};
use crate::failover_load::{EVERY, MARGIN};
use crate::patroni_cluster::{wait_for, Cluster, WHOLE};
use crate::report::{ahead_by, micros, millis, Outcome};

const SKEW: &str = "+5";
const SKEW_US: i64 = 5_000_000;
/// How far a measured shortening may pass the skew: the rival's polling and a statement's time.
const SLACK_US: i64 = 300_000;
const ROWS: usize = 5;
/// The lease of every claim of this run, the rival's too (a claim judges a lease by its own):
/// long enough that the failover (2 to 4 s here) is over well before it runs out by the
/// skewed clock.
const LEASE: Duration = Duration::from_secs(20);
/// How much less than the skew a lease may be shortened before the measure is void: the
/// rival's polling, a statement's time on a busy machine.
const LATE_US: i64 = 1_000_000;

fn lease() -> Lease {
    Lease::new(LEASE).expect("a valid lease")
}

pub(crate) fn skewed(cluster: &Cluster, outcome: &mut Outcome) -> Result<(), String> {
    let run = "skewed new primary: ";
    let label = |text: &str| format!("{run}{text}");
    let mut witness = Witness::connect()?;
    let leader = cluster.healthy(true, WHOLE)?;
    let candidate = cluster
        .sync_standby(leader)
        .ok_or("no synchronous standby to skew")?;
    cluster.skew(candidate, SKEW)?;
    std::thread::sleep(Duration::from_millis(1_500));
    let clock = Kind::Postgres.epoch_micros("clock_timestamp()");
    // The node may still be settling after the run before (a rewind, a restart): asked again.
    let read = wait_for(Duration::from_secs(20), || {
        cluster.number(candidate, &format!("SELECT {clock} AS n"))
    })
    .ok_or_else(|| {
        format!(
            "the clock of {}, to be skewed",
            cluster.nodes[candidate].name
        )
    })?;
    let skew = read - witness.micros()?;

    let url = cluster.url();
    let pool = db::pool::<PgConnection>(&url, 4);
    let conn = &mut *pool.get().map_err(|e| format!("the cluster: {e}"))?;
    db::execute(conn, &Kind::Postgres.schema()).map_err(|e| format!("the schema: {e}"))?;
    conn.insert_jobs(2 * ROWS as i64)
        .map_err(|e| format!("the jobs: {e}"))?;
    let settings = KeeperSettings::new(lease()).every(EVERY).margin(MARGIN);
    let keeper =
        Keeper::start(db::pool::<PgConnection>(&url, 2), settings).map_err(|e| e.to_string())?;
    let alone = conn
        .claim_jobs(ROWS, lease(), "alone")
        .map_err(|e| format!("a claim: {e}"))?;
    let kept_batch = conn
        .claim_jobs(ROWS, lease(), "kept")
        .map_err(|e| format!("a claim: {e}"))?;
    let kept = keeper
        .keep(kept_batch.held())
        .map_err(|e| format!("keeping: {e}"))?;
    // When the unkept claim runs out by the old primary's clock (this machine's).
    let claimed_at = conn
        .number(&format!(
            "SELECT {} AS n FROM fault_jobs WHERE lease_token = '{}'",
            Kind::Postgres.epoch_micros("MIN(leased_at)"),
            alone.claim().token()
        ))
        .map_err(|e| format!("the claim's time: {e}"))?
        .ok_or("the claim's time: none")?;
    std::thread::sleep(Duration::from_secs(1));
    let killed = crate::timer();
    cluster.signal(leader, "KILL", false)?;
    let promoted = wait_for(Duration::from_secs(60), || {
        cluster.writable(&[0, 1, 2].map(|n| (leader + n) % 3)[1..])
    });
    let promoted_in = killed.elapsed();
    if promoted != Some(candidate) {
        return Err(format!(
            "{run}Patroni promoted {:?}, not the skewed synchronous standby {}",
            promoted.map(|n| &cluster.nodes[n].name),
            cluster.nodes[candidate].name
        ));
    }

    // The rival: every 50 ms, a claim of whatever is free, until the unkept rows are won or
    // the lease has passed by this machine's clock.
    let mut won: BTreeMap<i64, i64> = BTreeMap::new();
    let mut kept_lost_at = None;
    let deadline = claimed_at + micros(LEASE) + 2_000_000;
    while witness.micros()? < deadline && alone.keys().iter().any(|key| !won.contains_key(key)) {
        if kept_lost_at.is_none() && !kept.is_held() {
            kept_lost_at = Some(witness.micros()?);
        }
        if let Ok(batch) = pool
            .get()
            .map_err(diesel_lease::Error::from)
            .and_then(|mut conn| conn.claim_jobs(2 * ROWS, lease(), "rival"))
        {
            let at = witness.micros()?;
            for key in batch.keys() {
                won.entry(*key).or_insert(at);
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let held_at_end = kept.is_held();
    drop(kept);
    drop(keeper);
    // The runs after this one read the machine's clock again.
    cluster.skew(candidate, "+0")?;
    std::thread::sleep(Duration::from_millis(1_500));

    let runs_out = claimed_at + micros(LEASE);
    let shortened: Vec<i64> = alone
        .keys()
        .iter()
        .filter_map(|key| Some(runs_out - won.get(key)?))
        .collect();
    let kept_won: Vec<i64> = kept_batch
        .keys()
        .iter()
        .filter_map(|key| won.get(key).copied())
        .collect();
    outcome.figure(
        &label("the new primary's clock, ahead of the machine's; writable after the kill"),
        format!("{}; {}", ahead_by(skew), millis(promoted_in)),
    );
    outcome.figure(
        &label("rows nobody renewed: taken by the rival; ahead of their lease's end by the machine's clock, from .. to"),
        format!(
            "{} of {ROWS}; {} .. {}",
            shortened.len(),
            shortened.iter().min().map_or("—".into(), |us| ahead_by(*us)),
            shortened.iter().max().map_or("—".into(), |us| ahead_by(*us)),
        ),
    );
    outcome.figure(
        &label("kept rows: taken by the rival; held at the end"),
        format!(
            "{} of {ROWS}; {}",
            kept_won.len(),
            if held_at_end { "yes" } else { "no" }
        ),
    );
    outcome.check(shortened.len() == ROWS, || {
        format!(
            "{run}the rival took {} of the {ROWS} rows nobody renewed",
            shortened.len()
        )
    });
    outcome.check(
        shortened
            .iter()
            .all(|us| *us <= skew.max(SKEW_US) + SLACK_US),
        || {
            format!(
                "{run}a lease was shortened by more than the skew ({})",
                ahead_by(skew)
            )
        },
    );
    // Taken much later than the skew allows, the rows say nothing of it.
    outcome.check(
        shortened
            .iter()
            .all(|us| *us >= skew.min(SKEW_US) - LATE_US),
        || format!("{run}the rows were taken later than the skew allows: nothing measured"),
    );
    // A kept row taken is a second holder, unless the keeper told its loss first.
    outcome.check(
        kept_won
            .iter()
            .all(|at| kept_lost_at.is_some_and(|told| told < *at)),
        || {
            format!(
                "{run}the rival took {} kept rows while the keeper said held",
                kept_won.len()
            )
        },
    );
    Ok(())
}
