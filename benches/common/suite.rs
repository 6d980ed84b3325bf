//! What the measurements of one backend share: the constants of the claims, throughput through a pool, and the start-up check
//! that every hand-written statement is the very SQL (and binds) the library sends, as recorded
//! by Diesel's instrumentation.
use std::sync::Barrier;
use std::time::{Duration, Instant};

use diesel_lease::prelude::*;
use diesel_lease_agent::{AgentLocks, TurnRef};

use crate::backend::{self, ConnPool, Ops};
use crate::measure::StatementLog;
use crate::shared::{check, Res};

/// How the results name the throwaway PostgreSQL that own_server.rs starts.
pub const OWN_SERVER: &str = "PostgreSQL (own server)";

/// Who the benchmark's claims are by.
pub const OWNER: &str = "bench-worker";
/// The lease of the cycle's claims: 30 s, in microseconds as the hand-written SQL binds it.
pub const LEASE_MICROS: i64 = 30_000_000;
/// The lease of the agent locks, in microseconds.
pub const AGENT_LEASE_MICROS: i64 = 120_000_000;
/// The row of the contention measurement.
pub const HOT: i64 = 100;
/// The thread counts of measurements 2 and 3.
pub const THREADS: [usize; 3] = [1, 4, 16];

/// A fresh claim token, as a hand-written caller would make one.
pub fn new_token() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// The lease of the cycle's claims.
pub fn lease() -> Res<Lease> {
    Ok(Lease::new(Duration::from_micros(LEASE_MICROS as u64))?)
}

/// The agent locks of the benchmark.
pub fn locks() -> Res<AgentLocks> {
    Ok(AgentLocks::new(
        OWNER,
        Lease::from_secs((AGENT_LEASE_MICROS / 1_000_000) as u64)?,
    )?)
}

/// An agent turn through the library: acquire, then release.
pub fn lib_turn<B: Ops>(
    conn: &mut B::Conn,
    locks: &AgentLocks,
    chat: &str,
    user: &str,
    token: &str,
) -> Res<()> {
    let turn = TurnRef::new(token)?;
    locks.acquire(conn, chat, user, &turn)?;
    check(
        locks.release(conn, chat, user, &turn)?,
        "the library's release found the locks gone",
    )
}

/// An agent turn by hand: acquire, then release, each one transaction.
pub fn hand_turn<B: Ops, const CACHED: bool>(
    conn: &mut B::Conn,
    chat: &str,
    user: &str,
    token: &str,
) -> Res<()> {
    B::hand_acquire::<CACHED>(conn, chat, user, token)?;
    B::hand_release::<CACHED>(conn, chat, user, token)
}

/// Runs `op` on `threads` threads for `slice`, each checking a connection out of `pool` per call
/// (`hold` keeps one per thread instead); calls per second, and every call's latency when
/// `latencies` is given.
pub fn throughput<B: Ops>(
    pool: &ConnPool<B>,
    threads: usize,
    slice: Duration,
    hold: bool,
    latencies: Option<&mut Vec<f64>>,
    op: &(dyn Fn(&mut B::Conn, usize) -> Res<()> + Sync),
) -> Res<f64> {
    let barrier = Barrier::new(threads);
    let record = latencies.is_some();
    let outcomes: Vec<Res<(u64, f64, Vec<f64>)>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|thread| {
                let barrier = &barrier;
                scope.spawn(move || -> Res<(u64, f64, Vec<f64>)> {
                    let mut held = if hold { Some(pool.get()?) } else { None };
                    let mut times = Vec::new();
                    barrier.wait();
                    let start = Instant::now();
                    let mut calls = 0u64;
                    while start.elapsed() < slice {
                        let began = Instant::now();
                        match held.as_mut() {
                            Some(conn) => op(conn, thread)?,
                            None => op(&mut *pool.get()?, thread)?,
                        }
                        if record {
                            times.push(began.elapsed().as_secs_f64() * 1e6);
                        }
                        calls += 1;
                    }
                    Ok((calls, start.elapsed().as_secs_f64(), times))
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|handle| {
                handle
                    .join()
                    .unwrap_or_else(|_| Err("a thread panicked".into()))
            })
            .collect()
    });
    let (mut calls, mut seconds) = (0u64, 0f64);
    let mut all = Vec::new();
    for outcome in outcomes {
        let (c, s, times) = outcome?;
        calls += c;
        seconds = seconds.max(s);
        all.extend(times);
    }
    if let Some(latencies) = latencies {
        latencies.extend(all);
    }
    Ok(calls as f64 / seconds)
}

/// Fails, printing both, unless the hand-written statements are the library's.
pub fn same_statements(
    backend: &str,
    what: &str,
    library: Vec<String>,
    hand: Vec<String>,
) -> Res<()> {
    if library == hand {
        return Ok(());
    }
    eprintln!("{backend}: the hand-written {what} differs from the library's:");
    for n in 0..library.len().max(hand.len()) {
        let (l, h) = (library.get(n), hand.get(n));
        if l != h {
            eprintln!(
                "  library: {}\n  hand:    {}",
                l.map_or("(none)", |s| s),
                h.map_or("(none)", |s| s)
            );
        }
    }
    Err(format!("{backend}: the hand-written {what} is not the library's SQL").into())
}

/// Checks that every hand-written statement is the library's, binds included.
pub fn verify<B: Ops>(conn: &mut B::Conn) -> Res<()> {
    let lease = lease()?;
    let token = "bench-verify-token";
    let claim = Claim::with_token(OWNER, token)?;
    let library = StatementLog::texts_of(conn, |c| B::lib_cycle(c, 1, &claim, lease))?;
    let hand = StatementLog::texts_of(conn, |c| {
        B::hand_cycle::<false>(c, 1, OWNER, token, LEASE_MICROS)
    })?;
    same_statements(B::NAME, "claim cycle", library.clone(), hand)?;
    // diesel::update writes SQLite's RETURNING columns unqualified, diesel_lease::update
    // qualifies them; the statements are otherwise the same.
    let unqualified = |texts: Vec<String>| -> Vec<String> {
        texts
            .into_iter()
            .map(|text| match text.split_once(" RETURNING ") {
                Some((head, tail)) => {
                    format!("{head} RETURNING {}", tail.replace("`bench_leases`.", ""))
                }
                None => text,
            })
            .collect()
    };
    let through_diesel =
        StatementLog::texts_of(conn, |c| B::lib_cycle_diesel_update(c, 1, &claim, lease))?;
    same_statements(
        B::NAME,
        "claim cycle (through diesel::update)",
        unqualified(library.clone()),
        unqualified(through_diesel),
    )?;
    let hand_cached = StatementLog::texts_of(conn, |c| {
        B::hand_cycle::<true>(c, 1, OWNER, token, LEASE_MICROS)
    })?;
    same_statements(B::NAME, "claim cycle (prepared once)", library, hand_cached)?;

    let ids = B::agent_rows(conn, "bench-verify", 1)?;
    let (chat, user) = &ids[0];
    let locks = locks()?;
    let turn = TurnRef::new(token)?;
    let library = StatementLog::texts_of(conn, |c| {
        locks.acquire(c, chat, user, &turn)?;
        locks.release(c, chat, user, &turn)?;
        Ok(())
    })?;
    let hand = StatementLog::texts_of(conn, |c| hand_turn::<B, false>(c, chat, user, token))?;
    same_statements(B::NAME, "agent turn", library.clone(), hand)?;
    let hand_cached = StatementLog::texts_of(conn, |c| hand_turn::<B, true>(c, chat, user, token))?;
    same_statements(B::NAME, "agent turn (prepared once)", library, hand_cached)?;
    println!("  the hand-written statements are the library's, binds included");
    Ok(())
}

/// A connection through a round-trip counting proxy (none for SQLite, which has no network).
pub fn proxied<B: Ops>(url: &str) -> Res<(B::Conn, Option<crate::measure::RoundTripProxy>)> {
    use crate::measure;
    let proxy = match measure::reroute(url, 0, B::DEFAULT_PORT) {
        Some((_, upstream)) if B::DEFAULT_PORT != 0 => {
            Some(measure::RoundTripProxy::start(upstream)?)
        }
        _ => None,
    };
    let conn = match &proxy {
        Some(proxy) => {
            let (proxied, _) =
                measure::reroute(url, proxy.port, B::DEFAULT_PORT).ok_or("no TCP URL")?;
            backend::connect::<B>(&proxied)?
        }
        None => backend::connect::<B>(url)?,
    };
    Ok((conn, proxy))
}
