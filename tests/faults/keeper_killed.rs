//! The keeper under faults (scenario 6, keeper.rs), part (a): its own connection killed by
//! another session, the sessions its pool opens remembered so that they can be killed, and the
//! renewals the triggers logged meanwhile.
use crate::shared::lock;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use diesel::r2d2::{ConnectionManager, CustomizeConnection};
use diesel_lease::{Keepable, Keeper};

use crate::db::{fault_jobs, FaultConn, Kind, Pool};
use crate::keeper_setup::{keep, lease, settings, LEASE};
use crate::report::{millis, Outcome};

const KILLS: usize = 5;

/// Remembers the session id of every connection its pool opens.
#[derive(Debug, Clone, Default)]
struct Sessions(Arc<Mutex<Vec<i64>>>);

fn session_sql(kind: Kind) -> &'static str {
    match kind {
        Kind::Postgres => "SELECT CAST(pg_backend_pid() AS BIGINT) AS n",
        Kind::Mysql => "SELECT CAST(CONNECTION_ID() AS SIGNED) AS n",
        Kind::Sqlite => "SELECT NULL AS n",
    }
}

impl<C: FaultConn> CustomizeConnection<C, diesel::r2d2::Error> for Sessions {
    fn on_acquire(&self, conn: &mut C) -> Result<(), diesel::r2d2::Error> {
        let id = conn
            .number(session_sql(C::KIND))
            .map_err(diesel::r2d2::Error::QueryError)?;
        lock(&self.0).extend(id);
        Ok(())
    }
}

/// The renewals the triggers logged for `token` on row `row`: the largest gap between two, by
/// the database's clock, and how many there were.
fn renewal_gaps<C: FaultConn>(
    conn: &mut C,
    token: &str,
    row: i64,
) -> Result<(Duration, usize), String> {
    let ages = conn
        .numbers(&format!(
            "SELECT {} AS n FROM fault_claims WHERE tbl = 'fault_jobs' AND row_id = '{row}' \
             AND token = '{token}' ORDER BY id",
            C::KIND.micros_since("at")
        ))
        .map_err(|e| format!("the renewals' log: {e}"))?;
    let ages: Vec<i64> = ages.into_iter().flatten().collect();
    let gap = ages
        .windows(2)
        .map(|pair| pair[0] - pair[1])
        .max()
        .unwrap_or(0);
    Ok((Duration::from_micros(gap.max(0).unsigned_abs()), ages.len()))
}

/// (a) The keeper's own connection killed by another session, 5 times, 400 ms apart.
pub(crate) fn connection_killed<C: FaultConn>(
    url: &str,
    pool: &Pool<C>,
    outcome: &mut Outcome,
) -> Result<(), String>
where
    fault_jobs::table: Keepable<C>,
{
    let sessions = Sessions::default();
    // No test on checkout: a killed connection then reaches a renewal as its error, rather than
    // being replaced unseen by r2d2's test query, and the keeper must give it back as broken
    // (Diesel alone does not see a MariaDB connection the server killed as broken).
    let keeper_pool = Pool::builder()
        .max_size(1)
        .min_idle(Some(0))
        .test_on_check_out(false)
        .connection_timeout(Duration::from_secs(1))
        .connection_customizer(Box::new(sessions.clone()))
        .build_unchecked(ConnectionManager::<C>::new(url));
    let keeper = Keeper::start(keeper_pool, settings()).map_err(|e| e.to_string())?;
    let (ids, token, kept) = keep(&keeper, pool, 10, "kept-a")?;
    let conn = &mut *pool.get().map_err(|e| e.to_string())?;
    let (mut checks, mut not_held) = (0_u64, 0_u64);
    let mut sample = |for_: Duration| {
        let started = crate::timer();
        while started.elapsed() < for_ {
            checks += 1;
            if !kept.is_held() {
                not_held += 1;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    };
    let mut killed = Vec::new();
    for _ in 0..KILLS {
        sample(Duration::from_millis(400));
        // The connection the keeper opened after the last kill: under load its round after
        // the failed one may come later than 400 ms, and a kill of the dead session would
        // miss (the keeper reconnects at its next round after a failed one).
        let waited = crate::timer();
        while lock(&sessions.0).len() <= killed.len() {
            if waited.elapsed() > LEASE {
                return Err(format!(
                    "the keeper opened no connection within {} of a kill",
                    millis(LEASE)
                ));
            }
            sample(Duration::from_millis(20));
        }
        let Some(&session) = lock(&sessions.0).last() else {
            return Err("the keeper never opened a connection".into());
        };
        let kill = match C::KIND {
            Kind::Postgres => format!("SELECT pg_terminate_backend({session})"),
            _ => format!("KILL CONNECTION {session}"),
        };
        conn.batch_execute(&kill)
            .map_err(|e| format!("{kill}: {e}"))?;
        killed.push(session);
    }
    sample(Duration::from_secs(1));
    let fresh = conn
        .guarded_write(&token, &ids, Some(lease()))
        .map_err(|e| e.to_string())?;
    let (gap, renewals) = renewal_gaps(conn, &token, ids[0])?;
    let opened = lock(&sessions.0).len();
    let loss = kept.check().err();
    outcome.figure(
        "(a) connection killed: kills; connections the keeper's pool opened",
        format!("{}; {opened}", killed.len()),
    );
    outcome.figure(
        "(a) renewals of a row logged; the longest gap between two, by the database's clock",
        format!("{renewals}; {}", millis(gap)),
    );
    outcome.figure(
        "(a) checks of the work that found the lease not held",
        format!("{not_held} of {checks}"),
    );
    outcome.figure(
        "(a) rows still held and fresh at the end, by the database",
        format!("{fresh} of {}", ids.len()),
    );
    outcome.check(opened > KILLS, || {
        format!(
            "the keeper's pool opened {opened} connections for {KILLS} kills: the kills missed it"
        )
    });
    outcome.check(not_held == 0 && loss.is_none(), || {
        format!("the lease was reported lost ({not_held} checks; {loss:?}) though only a connection died")
    });
    outcome.check(fresh == ids.len(), || {
        format!("{fresh} of {} rows still held and fresh", ids.len())
    });
    outcome.check(gap < LEASE, || {
        format!(
            "a gap of {} between renewals: the lease ran out by the database's clock",
            millis(gap)
        )
    });
    Ok(())
}
