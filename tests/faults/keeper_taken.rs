//! The keeper under faults (scenario 6, keeper.rs), part (c): the kept rows taken by another
//! token written by SQL, and what the work saw meanwhile.
use std::time::Duration;

use diesel::connection::SimpleConnection;
use diesel_lease::{Keepable, Keeper, LeaseLost, LossReason};

use crate::db::{self, fault_jobs, FaultConn, Pool};
use crate::keeper_setup::{keep, settings};
use crate::report::Outcome;

/// The token an operator's SQL writes over the kept rows.
const INTRUDER: &str = "intruder";

/// What the work saw in (c).
#[derive(Debug, Default)]
struct Work {
    /// Guarded writes that changed the rows, and those the guard refused (0 rows).
    landed: u64,
    refused: u64,
    effects: u64,
    errors: u64,
    loss: Option<LeaseLost<i64>>,
    learned_at_round: u64,
}

/// (c) The kept rows taken by another token, written by SQL: the work learns of it, and no
/// write guarded by its token lands after it.
pub(crate) fn taken_out_of_band<C: FaultConn>(
    url: &str,
    pool: &Pool<C>,
    outcome: &mut Outcome,
) -> Result<(), String>
where
    fault_jobs::table: Keepable<C>,
{
    let keeper = Keeper::start(db::pool::<C>(url, 2), settings()).map_err(|e| e.to_string())?;
    let (ids, token, kept) = keep(&keeper, pool, 5, "kept-c")?;
    let list = ids
        .iter()
        .map(i64::to_string)
        .collect::<Vec<_>>()
        .join(", ");
    let (work, takeover_round) = std::thread::scope(|scope| {
        let work = scope.spawn(|| {
            let mut work = Work::default();
            let pool = db::pool::<C>(url, 1);
            let started = crate::timer();
            while started.elapsed() < Duration::from_secs(10) {
                if let Err(lost) = kept.check() {
                    work.learned_at_round = keeper.rounds();
                    work.loss = Some(lost);
                    break;
                }
                let Ok(mut conn) = pool.get() else {
                    work.errors += 1;
                    continue;
                };
                match conn.guarded_write(&token, &ids, None) {
                    Ok(0) => work.refused += 1,
                    Ok(_) => work.landed += 1,
                    Err(_) => work.errors += 1,
                }
                // An effect outside the rows, which only `check` stands guard over.
                match conn.batch_execute(&format!(
                    "INSERT INTO fault_effects (token, at) VALUES ('{token}', {})",
                    C::KIND.now()
                )) {
                    Ok(()) => work.effects += 1,
                    Err(_) => work.errors += 1,
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            work
        });
        std::thread::sleep(Duration::from_millis(500));
        let taken = pool.get().map_err(|e| e.to_string()).and_then(|mut conn| {
            conn.batch_execute(&format!(
                "UPDATE fault_jobs SET worker = 'operator', lease_token = '{INTRUDER}', \
                 leased_at = {} WHERE id IN ({list})",
                C::KIND.now()
            ))
            .map_err(|e| format!("the takeover: {e}"))
        });
        let round = keeper.rounds();
        (work.join(), taken.map(|()| round))
    });
    let work = work.map_err(|_| "the work's thread panicked".to_owned())?;
    let takeover_round = takeover_round?;
    let conn = &mut *pool.get().map_err(|e| e.to_string())?;
    let count = |conn: &mut C, sql: String| -> Result<i64, String> {
        conn.number(&sql)
            .map(|n| n.unwrap_or(0))
            .map_err(|e| format!("{sql}: {e}"))
    };
    let takeover_at = format!(
        "(SELECT MIN(at) FROM fault_claims WHERE tbl = 'fault_jobs' AND token = '{INTRUDER}')"
    );
    let writes_before = count(
        conn,
        format!("SELECT COUNT(*) AS n FROM fault_writes WHERE token = '{token}'"),
    )?;
    let writes_after = count(
        conn,
        format!("SELECT COUNT(*) AS n FROM fault_writes WHERE token = '{INTRUDER}'"),
    )?;
    let effects_after = count(
        conn,
        format!(
            "SELECT COUNT(*) AS n FROM fault_effects WHERE token = '{token}' AND at >= {takeover_at}"
        ),
    )?;
    let taken_over = count(
        conn,
        "SELECT COUNT(*) AS n FROM fault_takeovers WHERE tbl = 'fault_jobs'".into(),
    )?;
    drop(kept);
    let still_intruders = count(
        conn,
        format!("SELECT COUNT(*) AS n FROM fault_jobs WHERE lease_token = '{INTRUDER}'"),
    )?;
    let rounds = work.learned_at_round.saturating_sub(takeover_round);
    outcome.figure(
        "(c) taken out of band: the loss the work was told",
        work.loss.as_ref().map_or("none".into(), |lost| {
            format!("{:?} of {} rows", lost.reason, lost.rows.len())
        }),
    );
    outcome.figure(
        "(c) keeper rounds from the takeover to the work learning of it",
        rounds,
    );
    outcome.figure(
        "(c) guarded writes that landed, logged by the database: before the takeover; after it",
        format!("{writes_before}; {writes_after}"),
    );
    outcome.figure(
        "(c) guarded writes refused by the token (said by the work)",
        work.refused,
    );
    outcome.figure(
        "(c) unguarded effects after the takeover, before the work learned of it (by the database's clock)",
        effects_after,
    );
    outcome.figure(
        "(c) rows the takeover left with the intruder after the keeper's release",
        format!("{still_intruders} of {}", ids.len()),
    );
    let mut expected = ids.clone();
    expected.sort_unstable();
    let told = work.loss.as_ref().map(|lost| {
        let mut rows = lost.rows.clone();
        rows.sort_unstable();
        (lost.reason, rows)
    });
    outcome.check(told == Some((LossReason::TakenOver, expected)), || {
        format!(
            "the work was told {:?}, not that its rows were taken over",
            work.loss
        )
    });
    outcome.check(rounds <= 2, || {
        format!("the work learned of the takeover {rounds} rounds after it")
    });
    outcome.check(writes_after == 0, || {
        format!("{writes_after} guarded writes landed after the takeover")
    });
    outcome.check(writes_before > 0 && taken_over > 0, || {
        format!("{writes_before} writes before the takeover, {taken_over} takeovers logged: nothing tested")
    });
    outcome.check(still_intruders == ids.len() as i64, || {
        format!(
            "the keeper's release took {} rows back from the intruder",
            ids.len() as i64 - still_intruders
        )
    });
    outcome.check(work.errors == 0, || {
        format!("{} errors in the work", work.errors)
    });
    Ok(())
}
