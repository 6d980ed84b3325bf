//! Measurement 16, the write cost, on a server of its own (`own_server.rs`), on a table whose
//! lease columns the library's migration added (`LeaseColumns`: its index on the token and its
//! fillfactor): the WAL bytes of a claim cycle, of a renewal of one row and of a keeper's round
//! of 1,000 rows, read as the distance the server's WAL insert position moved over many of them
//! (the server does nothing else; autovacuum's own WAL, when it runs, is counted in); and the
//! share of HOT updates among the renewals, whose one written column is in no index.
use std::time::Duration;

use diesel::connection::SimpleConnection;
use diesel::prelude::*;
use diesel::sql_types::BigInt;
use diesel_lease::{Claim, Keeper, KeeperSettings, LeaseColumns};

use crate::backend::{self, Ops, Pg};
use crate::results::{Better, Goal, Results, Row};
use crate::shared::Plan;
use crate::shared::{check, Res};
use crate::suite::OWN_SERVER;
use crate::suite::{lease, OWNER};

/// The measurement's number, in `--only` and in docs/benchmarks.md.
pub const SECTION: u32 = crate::measurements::WRITES;
/// Rows of the table, all held for the renewals and the keeper's rounds.
const ROWS: i64 = 1_000;
/// Claim cycles, and passes of one-row renewals over every row, measured.
const CYCLES: i64 = 2_000;
const RENEWAL_PASSES: i64 = 20;
/// The goal: at least this share of renewals HOT.
const HOT_GOAL: f64 = 0.95;

#[derive(QueryableByName)]
struct Position {
    #[diesel(sql_type = BigInt)]
    bytes: i64,
}

#[derive(Debug, Clone, Copy, QueryableByName)]
struct Updates {
    #[diesel(sql_type = BigInt)]
    updates: i64,
    #[diesel(sql_type = BigInt)]
    hot: i64,
}

fn wal_position(conn: &mut PgConnection) -> Res<i64> {
    Ok(diesel::sql_query(
        "SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0')::bigint AS bytes",
    )
    .get_result::<Position>(conn)?
    .bytes)
}

impl Updates {
    /// The updates made between `earlier` and these counts.
    fn since(self, earlier: Updates) -> Updates {
        Updates {
            updates: self.updates - earlier.updates,
            hot: self.hot - earlier.hot,
        }
    }
}

/// The table's counts of updates and HOT updates, once they count at least `at_least` updates
/// and have stopped changing (a backend sends its counts when it goes idle, at most once a
/// second, and when it exits; this one is made to send its own at once).
fn settled_updates(conn: &mut PgConnection, at_least: i64) -> Res<Updates> {
    conn.batch_execute("SELECT pg_stat_force_next_flush()")?;
    let mut last = None;
    for _ in 0..100 {
        let now = diesel::sql_query(
            "SELECT n_tup_upd AS updates, n_tup_hot_upd AS hot FROM pg_stat_user_tables \
             WHERE relname = 'bench_kept'",
        )
        .get_result::<Updates>(conn)?;
        if now.updates >= at_least && last == Some(now.updates) {
            return Ok(now);
        }
        last = Some(now.updates);
        std::thread::sleep(Duration::from_millis(300));
    }
    Err("the statistics never counted the measured updates".into())
}

pub fn run(url: &str, plan: &Plan, results: &mut Results) -> Res<()> {
    println!("-- {SECTION}. the write cost: WAL bytes, HOT renewals");
    let conn = &mut PgConnection::establish(url)?;
    conn.batch_execute(
        "DROP TABLE IF EXISTS bench_kept; CREATE TABLE bench_kept (id BIGINT PRIMARY KEY)",
    )?;
    conn.batch_execute(&LeaseColumns::new("bench_kept").up_sql::<diesel::pg::Pg>()?)?;
    conn.batch_execute(&format!(
        "INSERT INTO bench_kept (id) SELECT generate_series(1, {ROWS}); CHECKPOINT"
    ))?;
    let mut push = |figure: &str, count: i64, wal: i64, updates: Updates, goal: bool| {
        let share = updates.hot as f64 / updates.updates.max(1) as f64;
        results.note(format!(
            "{OWN_SERVER}: {SECTION}, {figure}: {count} measured, {:.0} WAL bytes \
             each; {} updates, {} of them HOT",
            wal as f64 / count as f64,
            updates.updates,
            updates.hot
        ));
        results.push(Row {
            section: SECTION,
            backend: OWN_SERVER.into(),
            figure: format!("the share of HOT updates among those of {figure}"),
            baseline_name: "every update HOT".into(),
            baseline: 1.0,
            library_name: "HOT".into(),
            library: share,
            unit: "".into(),
            ratio: share,
            range: None,
            better: Better::Higher,
            goal: goal.then_some(Goal::RatioAtLeast(HOT_GOAL)),
        });
    };
    let lease = lease()?;
    let before = settled_updates(conn, 0)?;

    // Claim cycles, across the table's rows.
    let start = wal_position(conn)?;
    for n in 0..CYCLES {
        let claim = Pg::kept_claim(conn, n % ROWS + 1, Claim::new(OWNER)?, lease)?;
        Pg::bare_renew_release(conn, n % ROWS + 1, &claim)?;
    }
    let wal = wal_position(conn)? - start;
    let after = settled_updates(conn, before.updates + 3 * CYCLES)?;
    push(
        "a claim cycle (claim, renew, release)",
        CYCLES,
        wal,
        after.since(before),
        false,
    );

    // One-row renewals of every row, held by one claim.
    let claim = Claim::new(OWNER)?;
    Pg::kept_take(conn, ROWS, &claim)?;
    let ids: Vec<i64> = (1..=ROWS).collect();
    let before = settled_updates(conn, after.updates + ROWS)?;
    let start = wal_position(conn)?;
    for _ in 0..RENEWAL_PASSES {
        Pg::renew_each(conn, &ids, claim.token())?;
    }
    let wal = wal_position(conn)? - start;
    let after = settled_updates(conn, before.updates + RENEWAL_PASSES * ROWS)?;
    push(
        "a renewal of one row",
        RENEWAL_PASSES * ROWS,
        wal,
        after.since(before),
        true,
    );

    // A keeper's rounds of all 1,000 rows, back to back: a first keeper's until the rows have
    // moved to where renewals leave them (the table is new, its pages filled to the fillfactor),
    // then a second's, measured.
    let (warm_up, _) = keeper_rounds(url, conn, claim, lease, plan.keeper_slice * 10)?;
    let claim = Claim::new(OWNER)?;
    Pg::kept_take(conn, ROWS, &claim)?;
    let before = settled_updates(conn, after.updates + warm_up * ROWS + ROWS)?;
    let (rounds, wal) = keeper_rounds(url, conn, claim, lease, plan.keeper_slice * 10)?;
    let after = settled_updates(conn, before.updates + rounds * ROWS)?;
    push(
        "a keeper's round of 1,000 held rows",
        rounds,
        wal,
        after.since(before),
        true,
    );
    conn.batch_execute("DROP TABLE bench_kept")?;
    Ok(())
}

/// A keeper of its own renewing every row of the table, held by `claim`, back to back for
/// `length`: its rounds, and the WAL they wrote. Its connection has closed when this returns,
/// so its counts of updates are on their way to the statistics.
fn keeper_rounds(
    url: &str,
    conn: &mut PgConnection,
    claim: Claim,
    lease: diesel_lease::Lease,
    length: Duration,
) -> Res<(i64, i64)> {
    let pool = backend::pool::<Pg>(url, 1, false)?;
    let keeper = Keeper::start(
        pool.clone(),
        KeeperSettings::new(lease).every(Duration::from_micros(1)),
    )?;
    let kept = Pg::keep(&keeper, claim, (1..=ROWS).collect())?;
    let (rounds, start) = (keeper.rounds(), wal_position(conn)?);
    std::thread::sleep(length);
    let (wal, rounds) = (wal_position(conn)? - start, keeper.rounds() - rounds);
    check(kept.is_held(), "the keeper lost its rows")?;
    drop(kept);
    drop(keeper);
    drop(pool);
    Ok((rounds as i64, wal))
}
