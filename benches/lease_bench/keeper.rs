//! Measurement 9, the keeper (`Keeper`, `KeeperSettings`, `keep`, `Kept`), through its public
//! API only:
//!
//! * the cost of one round of renewals for 1, 100 and 1,000 rows held by one claim: the keeper
//!   renewing back to back (`every` 1 µs), its time per round from its own count of rounds,
//!   against one guarded renewal per row (`diesel_lease::update(t.find(id).filter(t.held_by(token)))
//!   .set(t.renewed())`, prepared once), both on connections from the same pool; statements per
//!   round counted by Diesel's instrumentation on every connection of that pool;
//! * the keeper's round of 10,000 and 100,000 held rows against its round of 1,000, per row;
//! * a claim of a free row (`claim_row`, then its renewal and release) while 10,000 and 100,000
//!   rows are held, against the same while 1,000 are;
//! * a kept claim cycle (`claim_row`, `Keeper::keep`, `Kept::release`) against a bare one
//!   (`claim_row`, then a renewal and a release through `diesel_lease::update`).
use std::cell::RefCell;
use std::marker::PhantomData;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use diesel::r2d2::{ConnectionManager, CustomizeConnection, Pool};
use diesel_lease::{Claim, Holds, Keeper, KeeperSettings};

use crate::backend::{self, Backend, ConnPool, Ops};
use crate::measure::{interleave, median, micros_per_op, paired_ratio, StatementLog, Variant};
use crate::results::{Better, Goal, Results, Row};
use crate::shared::Plan;
use crate::shared::{check, Res};
use crate::suite::{lease, OWNER};

/// The measurement's number, in `--only` and in docs/benchmarks.md.
pub const SECTION: u32 = crate::measurements::KEEPER;
/// Rows held by the one claim a keeper keeps.
pub const HELD: [i64; 3] = [1, 100, 1_000];
/// Rows held in the rounds timed against the keeper's round of the most of [`HELD`] (one
/// statement per row would take minutes a round here).
const MANY_HELD: [i64; 2] = [10_000, 100_000];
/// The row no claim of this measurement holds: the table's last, past every held row.
const FREE_ROW: i64 = MANY_HELD[MANY_HELD.len() - 1] + 1;
/// The goal: a kept claim cycle at most this many times the time of a bare one.
const GOAL: f64 = 1.05;

pub const KEEPER: &str = "keeper";
pub const PER_ROW: &str = "one UPDATE per row, prepared once";
pub const KEPT: &str = "claim, keep, release (Keeper)";
pub const BARE: &str = "claim, renew, release (bare)";

/// Sets a connection up as the backend does, and counts its statements.
struct Counting<B> {
    log: StatementLog,
    backend: PhantomData<fn() -> B>,
}

impl<B> std::fmt::Debug for Counting<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Counting").finish_non_exhaustive()
    }
}

impl<B: Backend> CustomizeConnection<B::Conn, diesel::r2d2::Error> for Counting<B> {
    fn on_acquire(&self, conn: &mut B::Conn) -> Result<(), diesel::r2d2::Error> {
        if let Some(customizer) = B::customizer() {
            customizer.on_acquire(conn)?;
        }
        self.log.attach(conn);
        Ok(())
    }
}

/// A pool of two connections (the keeper's and the caller's), whose statements `log` counts.
fn counting_pool<B: Ops>(url: &str, log: &StatementLog) -> Res<ConnPool<B>> {
    Ok(Pool::builder()
        .max_size(2)
        .min_idle(Some(2))
        .test_on_check_out(false)
        .connection_timeout(Duration::from_secs(30))
        .connection_customizer(Box::new(Counting::<B> {
            log: log.clone(),
            backend: PhantomData,
        }))
        .build(ConnectionManager::new(url))?)
}

/// Waits (polling every 50 µs) until the keeper has finished another round: that round's count,
/// and when it was seen.
fn next_round<C: diesel::r2d2::R2D2Connection>(keeper: &Keeper<C>) -> (u64, Instant) {
    let last = keeper.rounds();
    loop {
        let now = keeper.rounds();
        if now != last {
            return (now, Instant::now());
        }
        std::thread::sleep(Duration::from_micros(50));
    }
}

pub fn run<B: Ops>(url: &str, plan: &Plan, results: &mut Results) -> Res<()> {
    let mut conn = backend::connect::<B>(url)?;
    B::kept_setup(&mut conn, FREE_ROW)?;
    let outcome = (|| -> Res<()> {
        let log = StatementLog::default();
        let pool = counting_pool::<B>(url, &log)?;
        rounds::<B>(&mut conn, &pool, &log, plan, results)?;
        many_held::<B>(&mut conn, &pool, &log, plan, results)?;
        claims_beside_held::<B>(&mut conn, &pool, plan, results)?;
        cycles::<B>(&pool, &log, plan, results)
    })();
    let cleaned = B::kept_teardown(&mut conn);
    outcome.and(cleaned)
}

/// One sample of a keeper renewing `held` rows back to back: µs per round, statements sent on
/// the pool per round, and the keeper's own count of renewal statements per round.
fn keeper_round<B: Ops>(
    conn: &mut B::Conn,
    pool: &ConnPool<B>,
    statements: &dyn Fn() -> u64,
    held: i64,
    lease: diesel_lease::Lease,
    slice: Duration,
) -> Res<(f64, f64, f64)> {
    let claim = Claim::new(OWNER)?;
    B::kept_take(conn, held, &claim)?;
    let settings = KeeperSettings::new(lease).every(Duration::from_micros(1));
    let keeper = Keeper::start(pool.clone(), settings)?;
    let kept = B::keep(&keeper, claim, (1..=held).collect())?;
    next_round(&keeper); // a round that started before the timing is not counted
    let (r0, t0) = next_round(&keeper);
    let (s0, k0) = (statements(), keeper.renewal_statements());
    std::thread::sleep(slice);
    let (r1, t1) = next_round(&keeper);
    let (s1, k1) = (statements(), keeper.renewal_statements());
    check(kept.is_held(), "the keeper lost its rows")?;
    check(
        kept.held().keys().len() == held as usize,
        "the keeper holds fewer rows",
    )?;
    let rounds = (r1 - r0) as f64;
    check(
        B::kept_release(&mut *pool.get()?, &kept)?.len() == held as usize,
        "the keeper's release freed fewer rows",
    )?;
    drop(keeper);
    B::kept_free(conn)?;
    Ok((
        (t1 - t0).as_secs_f64() * 1e6 / rounds,
        (s1 - s0) as f64 / rounds,
        (k1 - k0) as f64 / rounds,
    ))
}

/// The keeper's rounds of [`MANY_HELD`] rows against its round of the most of [`HELD`], per row.
fn many_held<B: Ops>(
    conn: &mut B::Conn,
    pool: &ConnPool<B>,
    log: &StatementLog,
    plan: &Plan,
    results: &mut Results,
) -> Res<()> {
    let lease = lease()?;
    let statements = || log.statements.load(Ordering::SeqCst);
    let conn = RefCell::new(conn);
    let per_row = |rows: i64| -> Res<f64> {
        let (micros, _, _) = keeper_round::<B>(
            &mut conn.borrow_mut(),
            pool,
            &statements,
            rows,
            lease,
            plan.keeper_slice,
        )?;
        Ok(micros / rows as f64)
    };
    against_base_held::<B>(
        plan,
        results,
        ("time per held row of a renewal round", "µs/row"),
        &|rows| format!("keeper, {rows} held rows"),
        &per_row,
    )
}

/// A claim cycle of the free row while [`MANY_HELD`] rows are held, against the same while the
/// most of [`HELD`] are.
fn claims_beside_held<B: Ops>(
    conn: &mut B::Conn,
    pool: &ConnPool<B>,
    plan: &Plan,
    results: &mut Results,
) -> Res<()> {
    let lease = lease()?;
    let conn = RefCell::new(conn);
    let cycles_beside = |rows: i64| -> Res<f64> {
        B::kept_take(&mut conn.borrow_mut(), rows, &Claim::new(OWNER)?)?;
        let micros = micros_per_op(plan.slice, || {
            let mut free = pool.get()?;
            let claim = B::kept_claim(&mut free, FREE_ROW, Claim::new(OWNER)?, lease)?;
            B::bare_renew_release(&mut free, FREE_ROW, &claim)
        })?;
        B::kept_free(&mut conn.borrow_mut())?;
        Ok(micros)
    };
    against_base_held::<B>(
        plan,
        results,
        ("a claim, renewal and release of a free row", "µs/cycle"),
        &|rows| format!("{rows} rows held"),
        &cycles_beside,
    )
}

/// Samples of `sample(rows held)` with each of [`MANY_HELD`] against the most of [`HELD`],
/// interleaved; a row of results each, lower is better.
fn against_base_held<B: Ops>(
    plan: &Plan,
    results: &mut Results,
    (figure, unit): (&str, &'static str),
    name: &dyn Fn(i64) -> String,
    sample: &dyn Fn(i64) -> Res<f64>,
) -> Res<()> {
    let base = HELD[HELD.len() - 1];
    for held in MANY_HELD {
        let mut variants = [
            Variant::new("base", || sample(base)),
            Variant::new("held", || sample(held)),
        ];
        let samples = interleave(plan.keeper_rounds, &mut variants)?;
        let (ratio, min, max) = paired_ratio(&samples[1], &samples[0]);
        results.push(Row {
            section: SECTION,
            backend: B::NAME.into(),
            figure: format!("{figure}, {held} held rows against {base}"),
            baseline_name: name(base),
            baseline: median(&samples[0]),
            library_name: name(held),
            library: median(&samples[1]),
            unit: unit.into(),
            ratio,
            range: Some((min, max)),
            better: Better::Lower,
            goal: None,
        });
    }
    Ok(())
}

/// The renewal rounds of 1, 100 and 1,000 held rows.
fn rounds<B: Ops>(
    conn: &mut B::Conn,
    pool: &ConnPool<B>,
    log: &StatementLog,
    plan: &Plan,
    results: &mut Results,
) -> Res<()> {
    let lease = lease()?;
    let statements = || log.statements.load(Ordering::SeqCst);
    for held in HELD {
        let ids: Vec<i64> = (1..=held).collect();
        let conn = RefCell::new(&mut *conn);
        // Statements per round, of the keeper over each of its samples.
        let keeper_statements = RefCell::new(Vec::new());
        let keeper_counted = RefCell::new(Vec::new());
        let slice = plan.keeper_slice;
        let mut variants = [
            Variant::new(PER_ROW, || {
                let claim = Claim::new(OWNER)?;
                B::kept_take(&mut conn.borrow_mut(), held, &claim)?;
                let per_round = micros_per_op(slice, || {
                    B::renew_each(&mut *pool.get()?, &ids, claim.token())
                })?;
                B::kept_free(&mut conn.borrow_mut())?;
                Ok(per_round)
            }),
            Variant::new(KEEPER, || {
                let (micros, sent, counted) = keeper_round::<B>(
                    &mut conn.borrow_mut(),
                    pool,
                    &statements,
                    held,
                    lease,
                    slice,
                )?;
                keeper_statements.borrow_mut().push(sent);
                keeper_counted.borrow_mut().push(counted);
                Ok(micros)
            }),
        ];
        let samples = interleave(plan.keeper_rounds, &mut variants)?;
        let (ratio, min, max) = paired_ratio(&samples[1], &samples[0]);
        results.push(Row {
            section: SECTION,
            backend: B::NAME.into(),
            figure: format!("time per renewal round, {held} held row(s)"),
            baseline_name: PER_ROW.into(),
            baseline: median(&samples[0]),
            library_name: KEEPER.into(),
            library: median(&samples[1]),
            unit: "µs/round".into(),
            ratio,
            range: Some((min, max)),
            better: Better::Lower,
            goal: None,
        });
        // The statements of one round of each, counted: one renewal of every row one by one,
        // and the keeper's renewal that `keep` makes before it returns (the code of a round,
        // for the one claim), with a keeper whose next round is seconds away.
        let claim = Claim::new(OWNER)?;
        B::kept_take(&mut conn.borrow_mut(), held, &claim)?;
        let before = statements();
        B::renew_each(&mut *pool.get()?, &ids, claim.token())?;
        let per_row = (statements() - before) as f64;
        let keeper = Keeper::start(pool.clone(), KeeperSettings::new(lease))?;
        let before = statements();
        let kept = B::keep(&keeper, claim, ids.clone())?;
        let keeper_per_round = (statements() - before) as f64;
        drop(kept);
        drop(keeper);
        B::kept_free(&mut conn.borrow_mut())?;
        results.push(Row {
            section: SECTION,
            backend: B::NAME.into(),
            figure: format!("statements per renewal round, {held} held row(s)"),
            baseline_name: PER_ROW.into(),
            baseline: per_row,
            library_name: KEEPER.into(),
            library: keeper_per_round,
            unit: "".into(),
            ratio: keeper_per_round / per_row,
            range: None,
            better: Better::Lower,
            goal: None,
        });
        results.note(format!(
            "{}: 9, {held} held row(s): renewal statements per round by the keeper's own count \
             (Keeper::renewal_statements over its rounds): {:.2}; statements sent on its pool's \
             connections per round of back-to-back renewals: {:.2} (medians of the samples; \
             the count at the rounds' edges is approximate)",
            B::NAME,
            median(&keeper_counted.borrow()),
            median(&keeper_statements.borrow()),
        ));
    }
    Ok(())
}

/// A kept claim cycle against a bare one.
fn cycles<B: Ops>(
    pool: &ConnPool<B>,
    log: &StatementLog,
    plan: &Plan,
    results: &mut Results,
) -> Res<()> {
    let lease = lease()?;
    let keeper = Keeper::start(pool.clone(), KeeperSettings::new(lease))?;
    let bare = || -> Res<()> {
        let mut conn = pool.get()?;
        let claim = B::kept_claim(&mut conn, 1, Claim::new(OWNER)?, lease)?;
        B::bare_renew_release(&mut conn, 1, &claim)
    };
    let kept = || -> Res<()> {
        let claim = B::kept_claim(&mut *pool.get()?, 1, Claim::new(OWNER)?, lease)?;
        let kept = B::keep(&keeper, claim, vec![1])?;
        check(
            B::kept_release(&mut *pool.get()?, &kept)? == [1],
            "the kept claim's release freed nothing",
        )
    };
    let slice = plan.slice;
    let mut variants = [
        Variant::new(BARE, || micros_per_op(slice, bare)),
        Variant::new(KEPT, || micros_per_op(slice, kept)),
    ];
    let samples = interleave(plan.rounds, &mut variants)?;
    let (ratio, min, max) = paired_ratio(&samples[1], &samples[0]);
    results.push(Row {
        section: SECTION,
        backend: B::NAME.into(),
        figure: "a claim cycle of one row".into(),
        baseline_name: BARE.into(),
        baseline: median(&samples[0]),
        library_name: KEPT.into(),
        library: median(&samples[1]),
        unit: "µs/cycle".into(),
        ratio,
        range: Some((min, max)),
        better: Better::Lower,
        goal: Some(Goal::RatioAtMost(GOAL)),
    });
    let count = |cycle: &dyn Fn() -> Res<()>| -> Res<f64> {
        let before = log.statements.load(Ordering::SeqCst);
        cycle()?;
        Ok((log.statements.load(Ordering::SeqCst) - before) as f64)
    };
    let (bare_statements, kept_statements) = (count(&bare)?, count(&kept)?);
    results.push(Row {
        section: SECTION,
        backend: B::NAME.into(),
        figure: "statements per claim cycle".into(),
        baseline_name: BARE.into(),
        baseline: bare_statements,
        library_name: KEPT.into(),
        library: kept_statements,
        unit: "".into(),
        ratio: kept_statements / bare_statements,
        range: None,
        better: Better::Lower,
        goal: None,
    });
    Ok(())
}
