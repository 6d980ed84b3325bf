//! Measurements 14 and 15, on a server of its own (`own_server.rs`) with autovacuum on:
//!
//! * 14, churn: 16 workers claim batches of 100 jobs and finish them, each finish putting its
//!   jobs back in the queue, for ten minutes on one queue of 100,000 jobs (90% done, with the
//!   claim index); each minute's jobs/s against the first minute's, with the table's dead
//!   tuples, its size and its indexes' size, the share of HOT updates and the autovacuums of
//!   each minute;
//! * 15, a pinned horizon: the same work for a minute, then a minute while a `REPEATABLE READ`
//!   transaction on another connection keeps its snapshot (no dead tuple younger than it can be
//!   removed), then a minute after it ends; the pinned minute's jobs/s against the minute before,
//!   and the dead tuples each leaves; then, after a `VACUUM` of the table, the same three
//!   minutes with the workers claiming from a shared cursor (`ClaimBatch::from_cursor`).
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use diesel::connection::SimpleConnection;
use diesel::prelude::*;
use diesel::sql_types::BigInt;

use crate::backend::{self, Ops, Pg};
use crate::results::{Better, Goal, Results, Row};
use crate::shared::{Options, Res};
use crate::suite::lease;
use crate::suite::OWN_SERVER;

/// The measurement's number, in `--only` and in docs/benchmarks.md.
pub const SECTION: u32 = crate::measurements::CHURN;
/// The pinned horizon's number.
pub const HORIZON: u32 = crate::measurements::HORIZON;
const ROWS: i64 = 100_000;
const DONE: i64 = 90_000;
const WORKERS: usize = 16;
const BATCH: usize = 100;
/// The goals: the last minute of churn, and the pinned minute, at least this share of the
/// minute they are set against.
const CHURN_GOAL: f64 = 0.8;
const PIN_GOAL: f64 = 0.8;

/// What a minute is, in the measurements' sequence.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Minute {
    Churn(usize),
    BeforePin(Start),
    Pinned(Start),
    AfterPin(Start),
}

/// Where the workers' claims start: the queue's head, or a shared cursor.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Start {
    Head,
    Cursor,
}

impl Start {
    fn describe(self) -> &'static str {
        match self {
            Start::Head => "",
            Start::Cursor => ", claims from a cursor",
        }
    }
}

impl Minute {
    fn describe(self) -> String {
        match self {
            Minute::Churn(n) => format!("minute {n} of churn"),
            Minute::BeforePin(s) => format!("the minute before the pin{}", s.describe()),
            Minute::Pinned(s) => format!("the pinned minute{}", s.describe()),
            Minute::AfterPin(s) => format!("the minute after the pin{}", s.describe()),
        }
    }
}

/// The table as `pg_stat_user_tables` and the size functions report it.
#[derive(Debug, Clone, Copy, QueryableByName)]
struct TableStats {
    #[diesel(sql_type = BigInt)]
    live: i64,
    #[diesel(sql_type = BigInt)]
    dead: i64,
    #[diesel(sql_type = BigInt)]
    updates: i64,
    #[diesel(sql_type = BigInt)]
    hot: i64,
    #[diesel(sql_type = BigInt)]
    autovacuums: i64,
    #[diesel(sql_type = BigInt)]
    table_bytes: i64,
    #[diesel(sql_type = BigInt)]
    index_bytes: i64,
}

fn table_stats(conn: &mut PgConnection) -> Res<TableStats> {
    Ok(diesel::sql_query(
        "SELECT n_live_tup AS live, n_dead_tup AS dead, n_tup_upd AS updates, \
         n_tup_hot_upd AS hot, autovacuum_count AS autovacuums, \
         pg_relation_size(relid) AS table_bytes, pg_indexes_size(relid) AS index_bytes \
         FROM pg_stat_user_tables WHERE relname = 'bench_growth'",
    )
    .get_result(conn)?)
}

/// One minute's work and the table at its end.
struct Measured {
    minute: Minute,
    jobs_per_sec: f64,
    end: TableStats,
    /// The share of the minute's updates that were HOT.
    hot_share: f64,
    autovacuums: i64,
}

pub fn run(url: &str, options: &Options, results: &mut Results) -> Res<()> {
    let plan = &options.plan;
    let mut minutes = Vec::new();
    if options.runs(SECTION) {
        minutes.extend((1..=plan.churn_minutes).map(Minute::Churn));
    }
    if options.runs(HORIZON) {
        for start in [Start::Head, Start::Cursor] {
            minutes.extend([
                Minute::BeforePin(start),
                Minute::Pinned(start),
                Minute::AfterPin(start),
            ]);
        }
    }
    println!(
        "-- {SECTION}, {HORIZON}. churn and a pinned horizon: {} minutes of {} s",
        minutes.len(),
        plan.minute.as_secs()
    );
    let lease = lease()?;
    let pool = backend::pool::<Pg>(url, WORKERS as u32, false)?;
    let mut monitor = PgConnection::establish(url)?;
    Pg::growth_setup(&mut monitor, ROWS, DONE)?;
    let jobs = AtomicU64::new(0);
    let stop = AtomicBool::new(false);
    let from_cursor = AtomicBool::new(false);
    let cursor = diesel_lease::ClaimCursor::<i64>::new();
    let measured = std::thread::scope(|scope| -> Res<Vec<Measured>> {
        let workers: Vec<_> = (0..WORKERS)
            .map(|_| {
                let (pool, jobs, stop) = (&pool, &jobs, &stop);
                let (from_cursor, cursor) = (&from_cursor, cursor.clone());
                scope.spawn(move || -> Res<()> {
                    let mut conn = pool.get()?;
                    while !stop.load(Ordering::Relaxed) {
                        let cursor = from_cursor.load(Ordering::Relaxed).then_some(&cursor);
                        let claimed =
                            Pg::growth_cycle_from(&mut conn, BATCH, lease, "queued", cursor)?;
                        jobs.fetch_add(claimed as u64, Ordering::Relaxed);
                    }
                    Ok(())
                })
            })
            .collect();
        let measured = watch(
            url,
            &mut monitor,
            &minutes,
            plan.minute,
            (&jobs, &from_cursor),
        );
        stop.store(true, Ordering::Relaxed);
        for worker in workers {
            worker
                .join()
                .unwrap_or_else(|_| Err("a worker panicked".into()))?;
        }
        measured
    })?;
    Pg::growth_teardown(&mut monitor)?;
    report(&measured, plan.churn_minutes, results);
    Ok(())
}

/// Reads the table at each minute's end while the workers run; opens the pin's transaction for
/// the pinned minute.
fn watch(
    url: &str,
    monitor: &mut PgConnection,
    minutes: &[Minute],
    minute_length: Duration,
    (jobs, from_cursor): (&AtomicU64, &AtomicBool),
) -> Res<Vec<Measured>> {
    let mut pin = PgConnection::establish(url)?;
    let mut measured = Vec::new();
    let mut last = (
        Instant::now(),
        jobs.load(Ordering::Relaxed),
        table_stats(monitor)?,
    );
    for minute in minutes {
        if *minute == Minute::BeforePin(Start::Cursor) {
            // The cursor's minutes start from a table as clean as the head's did, not from the
            // backlog the head's pin left.
            from_cursor.store(true, Ordering::Relaxed);
            monitor.batch_execute("VACUUM bench_growth")?;
            last = (
                Instant::now(),
                jobs.load(Ordering::Relaxed),
                table_stats(monitor)?,
            );
        }
        if matches!(minute, Minute::Pinned(_)) {
            // The snapshot is taken by the transaction's first read, and kept until COMMIT.
            pin.batch_execute(
                "BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT count(*) FROM bench_growth",
            )?;
        }
        std::thread::sleep(minute_length);
        let now = (
            Instant::now(),
            jobs.load(Ordering::Relaxed),
            table_stats(monitor)?,
        );
        if matches!(minute, Minute::Pinned(_)) {
            pin.batch_execute("COMMIT")?;
        }
        let (updates, hot) = (now.2.updates - last.2.updates, now.2.hot - last.2.hot);
        let this = Measured {
            minute: *minute,
            jobs_per_sec: (now.1 - last.1) as f64 / (now.0 - last.0).as_secs_f64(),
            end: now.2,
            hot_share: if updates > 0 {
                hot as f64 / updates as f64
            } else {
                0.0
            },
            autovacuums: now.2.autovacuums - last.2.autovacuums,
        };
        println!(
            "  {}: {:.0} jobs/s, {} dead tuples",
            minute.describe(),
            this.jobs_per_sec,
            now.2.dead
        );
        measured.push(this);
        last = now;
    }
    Ok(measured)
}

fn report(measured: &[Measured], churn_minutes: usize, results: &mut Results) {
    let mb = |bytes: i64| bytes as f64 / (1024.0 * 1024.0);
    for m in measured {
        results.note(format!(
            "{OWN_SERVER}: {} {}: {:.0} jobs/s; at its end {} dead and {} live \
             tuples, the table {:.1} MiB, its indexes {:.1} MiB; {:.0}% of its updates HOT; {} \
             autovacuum(s) in it",
            match m.minute {
                Minute::Churn(_) => SECTION,
                _ => HORIZON,
            },
            m.minute.describe(),
            m.jobs_per_sec,
            m.end.dead,
            m.end.live,
            mb(m.end.table_bytes),
            mb(m.end.index_bytes),
            m.hot_share * 100.0,
            m.autovacuums
        ));
    }
    let find = |wanted: Minute| measured.iter().find(|m| m.minute == wanted);
    if let Some(first) = find(Minute::Churn(1)) {
        for m in measured.iter().skip(1) {
            let Minute::Churn(n) = m.minute else { continue };
            results.push(row(
                SECTION,
                format!("jobs/s, {WORKERS} workers, batch {BATCH}, minute {n} against minute 1"),
                ("minute 1", first),
                (format!("minute {n}"), m),
                (n == churn_minutes).then_some(Goal::RatioAtLeast(CHURN_GOAL)),
            ));
        }
    }
    if let (Some(head), Some(cursor)) = (
        find(Minute::BeforePin(Start::Head)),
        find(Minute::BeforePin(Start::Cursor)),
    ) {
        // Nothing pins the horizon in either: what claiming from a cursor costs by itself.
        results.push(row(
            HORIZON,
            format!(
                "jobs/s, {WORKERS} workers, batch {BATCH}, nothing pinned: claims from a cursor \
                 against claims from the head"
            ),
            ("claims from the head", head),
            ("claims from a cursor".to_owned(), cursor),
            None,
        ));
    }
    for start in [Start::Head, Start::Cursor] {
        let (Some(before), Some(pinned), Some(after)) = (
            find(Minute::BeforePin(start)),
            find(Minute::Pinned(start)),
            find(Minute::AfterPin(start)),
        ) else {
            continue;
        };
        for (name, m, goal) in [
            (
                "the pinned minute",
                pinned,
                Some(Goal::RatioAtLeast(PIN_GOAL)),
            ),
            ("the minute after the pin", after, None),
        ] {
            results.push(row(
                HORIZON,
                format!(
                    "jobs/s, {WORKERS} workers, batch {BATCH}{}, {name} against the minute before",
                    start.describe()
                ),
                ("the minute before", before),
                (name.to_owned(), m),
                goal,
            ));
        }
    }
}

fn row(
    section: u32,
    figure: String,
    (baseline_name, baseline): (&str, &Measured),
    (library_name, library): (String, &Measured),
    goal: Option<Goal>,
) -> Row {
    Row {
        section,
        backend: OWN_SERVER.into(),
        figure,
        baseline_name: baseline_name.into(),
        baseline: baseline.jobs_per_sec,
        library_name,
        library: library.jobs_per_sec,
        unit: "/s".into(),
        ratio: library.jobs_per_sec / baseline.jobs_per_sec,
        range: None,
        better: Better::Higher,
        goal,
    }
}
