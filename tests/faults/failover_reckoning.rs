//! What a failover did to what the holders were told (failover_load.rs's `Acks`), held against
//! what the new primary has: the claims log and the log of finishing writes, both written by
//! triggers in the transactions they record. With synchronous replication every count of loss
//! is asserted to be 0; with asynchronous replication they are measured, and what the token
//! still guarantees is asserted.
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use diesel::prelude::*;
use diesel::sql_types::{BigInt, Nullable, Text};
use diesel::PgConnection;

use crate::db::{FaultConn, Kind, Pool};
use crate::failover_load::{Acks, LEASE};
use crate::report::{ahead_by, micros, millis, Outcome};
use crate::shared::errors_text;

#[derive(QueryableByName)]
struct Logged {
    #[diesel(sql_type = Nullable<Text>)]
    token: Option<String>,
    /// When, for a claim: its last renewal, in µs since the epoch, by the primary's clock.
    #[diesel(sql_type = Nullable<BigInt>)]
    at: Option<i64>,
}

/// A finishing write: the row, the token it had, the holder whose write it was.
#[derive(QueryableByName)]
struct Write {
    #[diesel(sql_type = BigInt)]
    row_id: i64,
    #[diesel(sql_type = Nullable<Text>)]
    token: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    writer: Option<String>,
}

#[derive(QueryableByName)]
struct Fenced {
    #[diesel(sql_type = BigInt)]
    id: i64,
    #[diesel(sql_type = BigInt)]
    fence: i64,
}

/// The claims log (each token's last renewal) and the finishing writes by token.
fn logs(conn: &mut PgConnection) -> QueryResult<(Vec<Logged>, Vec<Write>)> {
    let claims = diesel::sql_query(format!(
        "SELECT token, {} AS at FROM fault_claims WHERE tbl = 'fault_jobs' GROUP BY token",
        Kind::Postgres.epoch_micros("MAX(at)")
    ))
    .load(conn)?;
    let writes =
        diesel::sql_query("SELECT row_id, token, writer FROM failover_writes").load(conn)?;
    Ok((claims, writes))
}

/// The reckoning of one run, its figures prefixed by `run`; asserts no loss when `synchronous`.
pub(crate) fn reckon(
    pool: &Pool<PgConnection>,
    acks: &Acks,
    synchronous: bool,
    run: &str,
    outcome: &mut Outcome,
) -> Result<(), String> {
    let label = |text: &str| format!("{run}{text}");
    let conn = &mut *pool.get().map_err(|e| format!("the new primary: {e}"))?;
    let (claims, writes) = logs(conn).map_err(|e| format!("the logs: {e}"))?;
    let known: BTreeSet<&str> = claims.iter().filter_map(|c| c.token.as_deref()).collect();
    let last_renewal: BTreeMap<&str, i64> = claims
        .iter()
        .filter_map(|c| Some((c.token.as_deref()?, c.at?)))
        .fold(BTreeMap::new(), |mut last, (token, at)| {
            let entry = last.entry(token).or_insert(at);
            *entry = (*entry).max(at);
            last
        });
    let landed: BTreeSet<(i64, &str)> = writes
        .iter()
        .filter_map(|w| Some((w.row_id, w.token.as_deref()?)))
        .collect();

    // Claims the holder was told of and the new primary never saw: their holders hold nothing.
    let lost_tokens: BTreeSet<&str> = acks
        .claims
        .iter()
        .map(|c| c.token.as_str())
        .filter(|token| !known.contains(token))
        .collect();
    let lost_finishes: usize = acks
        .finishes
        .iter()
        .flat_map(|(token, rows)| rows.iter().map(move |row| (*row, token.as_str())))
        .filter(|write| !landed.contains(write))
        .count();
    // Writes sent by a holder whose claim was lost, or that landed on a row another held.
    let writes_by_lost = writes
        .iter()
        .filter(|w| w.writer.as_deref().is_some_and(|t| lost_tokens.contains(t)))
        .count();
    let writes_on_others = writes.iter().filter(|w| w.writer != w.token).count();

    // Fences: a claim told the fence an earlier holder of the row was told (handed out twice),
    // or a lower one.
    let mut highest: BTreeMap<i64, (i64, &str)> = BTreeMap::new();
    let (mut equal, mut lower) = (0, 0);
    for claim in &acks.claims {
        for (row, fence) in &claim.rows {
            if let Some((top, token)) = highest.get(row) {
                if fence == top && *token != claim.token.as_str() {
                    equal += 1;
                } else if fence < top {
                    lower += 1;
                }
            }
            let top = highest
                .entry(*row)
                .or_insert((*fence, claim.token.as_str()));
            if *fence > top.0 {
                *top = (*fence, claim.token.as_str());
            }
        }
    }
    let fences: BTreeMap<i64, i64> = diesel::sql_query("SELECT id, fence FROM fault_jobs")
        .load::<Fenced>(conn)
        .map_err(|e| format!("the fences: {e}"))?
        .into_iter()
        .map(|row| (row.id, row.fence))
        .collect();
    let below = highest
        .iter()
        .filter(|(row, (top, _))| fences.get(row).is_some_and(|now| now < top))
        .count();

    // The keeper's losses, against the lease by the new primary's record of the last renewal.
    let lease = micros(LEASE);
    let leads: Vec<i64> = acks
        .losses
        .iter()
        .filter_map(|(token, at, _)| Some(last_renewal.get(token.as_str())? + lease - at))
        .collect();
    let late = leads.iter().filter(|lead| **lead <= 0).count();
    let reasons = acks
        .losses
        .iter()
        .fold(BTreeMap::new(), |mut by, (_, _, why)| {
            *by.entry(why.clone()).or_insert(0_u64) += 1;
            by
        });

    let (counts, takeovers) = crate::queue::final_counts(pool, crate::failover_load::lease())?;
    let told_claims: usize = acks.claims.len();
    outcome.figure(
        &label("claims told; of them, the new primary never saw"),
        format!("{told_claims}; {}", lost_tokens.len()),
    );
    outcome.figure(
        &label("jobs told finished; of them, the new primary never saw (done again)"),
        format!(
            "{}; {lost_finishes}",
            acks.finishes
                .iter()
                .map(|(_, rows)| rows.len())
                .sum::<usize>()
        ),
    );
    outcome.figure(
        &label("fences told again to another holder of the row; told below an earlier holder's; rows whose fence is now below one told"),
        format!("{equal}; {lower}; {below}"),
    );
    outcome.figure(
        &label("finishing writes that landed: sent under a claim the new primary never saw; on a row another claim held"),
        format!("{writes_by_lost}; {writes_on_others}"),
    );
    outcome.figure(
        &label("losses the keeper told, by reason; told ahead of the lease's end (by the new primary's record), at least"),
        format!(
            "{}; {}",
            errors_text(&reasons),
            leads.iter().min().map_or("—".into(), |lead| ahead_by(*lead))
        ),
    );
    outcome.figure(
        &label("finishes the token guard refused (said by the workers)"),
        acks.refused,
    );
    outcome.figure(&label("worker errors, by kind"), errors_text(&acks.errors));
    outcome.figure(&label("jobs lost (not done at the end)"), counts.open);
    outcome.figure(&label("jobs done twice (done_count > 1)"), counts.twice);
    outcome.takeovers(&label(""), &takeovers, LEASE);

    // What holds whatever the replication: the token guards the rows, and a fence never goes
    // down (with asynchronous replication it may be handed out again: a lost claim's number).
    outcome.check(writes_by_lost == 0 && writes_on_others == 0, || {
        format!("{run}{writes_by_lost} writes landed under claims the new primary never saw, {writes_on_others} on rows another claim held")
    });
    outcome.check(lower == 0 && below == 0, || {
        format!("{run}{lower} fences told below an earlier holder's, {below} rows' fences now below one told")
    });
    outcome.check(
        counts.jobs == crate::failover_load::JOBS && counts.open == 0,
        || format!("{run}{} jobs, {} not done", counts.jobs, counts.open),
    );
    if synchronous {
        outcome.check(lost_tokens.is_empty() && lost_finishes == 0, || {
            format!(
                "{run}the failover lost {} claims and {lost_finishes} finishes the holders were told of",
                lost_tokens.len()
            )
        });
        outcome.check(counts.twice == 0, || {
            format!("{run}{} jobs done twice", counts.twice)
        });
        outcome.check(equal == 0, || {
            format!("{run}{equal} fences handed out twice")
        });
        // With asynchronous replication a lost renewal leaves the new primary an older lease
        // than the keeper confirmed: measured, not promised.
        outcome.check(late == 0, || {
            format!("{run}{late} losses told after the lease ran out by the new primary's record")
        });
    }
    Ok(())
}

/// When the first claim after `since` (µs since the epoch) was made, by the claims log: a
/// token's first entry.
pub(crate) fn first_claim_after(pool: &Pool<PgConnection>, since: i64) -> Option<Duration> {
    let first = pool
        .get()
        .ok()?
        .number(&format!(
            "SELECT MIN(first) AS n FROM (SELECT {} AS first FROM fault_claims \
             WHERE tbl = 'fault_jobs' GROUP BY token) claims WHERE first > {since}",
            Kind::Postgres.epoch_micros("MIN(at)")
        ))
        .ok()??;
    Some(Duration::from_micros(u64::try_from(first - since).ok()?))
}

/// `duration` in ms, or a dash.
pub(crate) fn took(duration: Option<Duration>) -> String {
    duration.map_or("—".into(), millis)
}
