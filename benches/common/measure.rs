//! Timing, statistics and counting: interleaved A/B rounds, a round-trip counting TCP proxy and a
//! statement counter on Diesel's instrumentation.
use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use diesel::connection::{Connection, Instrumentation, InstrumentationEvent};

use crate::shared::Res;

/// One variant of an interleaved measurement: each call measures one sample.
pub struct Variant<'a> {
    pub name: &'static str,
    pub sample: Box<dyn FnMut() -> Res<f64> + 'a>,
}

impl<'a> Variant<'a> {
    pub fn new(name: &'static str, sample: impl FnMut() -> Res<f64> + 'a) -> Self {
        Self {
            name,
            sample: Box::new(sample),
        }
    }
}

/// Runs every variant once per round, rotating which goes first, so that whatever else the
/// machine does hits all variants alike. Returns the samples of each variant, in round order.
pub fn interleave(rounds: usize, variants: &mut [Variant<'_>]) -> Res<Vec<Vec<f64>>> {
    let mut samples = vec![Vec::with_capacity(rounds); variants.len()];
    for round in 0..rounds {
        for k in 0..variants.len() {
            let v = (round + k) % variants.len();
            let sample = (variants[v].sample)()?;
            samples[v].push(sample);
        }
    }
    for (variant, samples) in variants.iter().zip(&samples) {
        let shown: Vec<String> = samples
            .iter()
            .map(|sample| format!("{sample:.1}"))
            .collect();
        println!("    {:<32} {}", variant.name, shown.join(" "));
    }
    Ok(samples)
}

/// Runs every variant once, its sample thrown away: whatever is prepared, cached or connected
/// on first use is so before the rounds.
pub fn warm_up(variants: &mut [Variant<'_>]) -> Res<()> {
    for variant in variants.iter_mut() {
        (variant.sample)()?;
    }
    Ok(())
}

/// Runs `op` over and over for `slice`; the mean time of one call in microseconds.
pub fn micros_per_op(slice: Duration, mut op: impl FnMut() -> Res<()>) -> Res<f64> {
    // One call first, untimed: the first call of a round may find cold caches.
    op()?;
    let start = Instant::now();
    let mut calls = 0u64;
    while start.elapsed() < slice {
        op()?;
        calls += 1;
    }
    Ok(start.elapsed().as_secs_f64() * 1e6 / calls as f64)
}

pub fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    match sorted.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => sorted[n / 2],
        n => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
    }
}

/// The `p`-th percentile (0..=100) of `values`, nearest rank.
pub fn percentile(values: &mut [f64], p: f64) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    values.sort_by(f64::total_cmp);
    let rank = ((p / 100.0) * values.len() as f64).ceil() as usize;
    values[rank.clamp(1, values.len()) - 1]
}

/// The ratio of two paired series: the median of the per-round ratios `a[i] / b[i]`, and their
/// smallest and largest. Pairing by round cancels what the machine did during that round.
pub fn paired_ratio(a: &[f64], b: &[f64]) -> (f64, f64, f64) {
    let ratios: Vec<f64> = a.iter().zip(b).map(|(a, b)| a / b).collect();
    let min = ratios.iter().copied().fold(f64::INFINITY, f64::min);
    let max = ratios.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (median(&ratios), min, max)
}

/// Counts the statements a connection sends (every `StartQuery` event: Diesel sends BEGIN and
/// COMMIT through `batch_execute`, which reports them as queries too), and the transaction
/// events beside them, and can record the SQL text of each statement.
#[derive(Debug, Clone, Default)]
pub struct StatementLog {
    pub statements: Arc<AtomicU64>,
    pub transaction_events: Arc<AtomicU64>,
    pub texts: Arc<Mutex<Option<Vec<String>>>>,
}

impl StatementLog {
    pub fn attach<C: Connection>(&self, conn: &mut C) {
        let log = self.clone();
        conn.set_instrumentation(move |event: InstrumentationEvent<'_>| match event {
            InstrumentationEvent::StartQuery { query, .. } => {
                log.statements.fetch_add(1, Ordering::SeqCst);
                if let Some(texts) = log.texts.lock().unwrap_or_else(|e| e.into_inner()).as_mut() {
                    texts.push(query.to_string());
                }
            }
            InstrumentationEvent::BeginTransaction { .. }
            | InstrumentationEvent::CommitTransaction { .. }
            | InstrumentationEvent::RollbackTransaction { .. } => {
                log.transaction_events.fetch_add(1, Ordering::SeqCst);
            }
            _ => {}
        });
    }

    pub fn detach<C: Connection>(conn: &mut C) {
        conn.set_instrumentation(None::<Box<dyn Instrumentation>>);
    }

    /// The SQL text (with its binds) of every statement `f` sends.
    pub fn texts_of<C: Connection>(
        conn: &mut C,
        f: impl FnOnce(&mut C) -> Res<()>,
    ) -> Res<Vec<String>> {
        let log = StatementLog::default();
        *log.texts.lock().unwrap_or_else(|e| e.into_inner()) = Some(Vec::new());
        log.attach(conn);
        let result = f(conn);
        Self::detach(conn);
        result?;
        let texts = log.texts.lock().unwrap_or_else(|e| e.into_inner()).take();
        Ok(texts.unwrap_or_default())
    }
}

/// A TCP proxy between the benchmark and a database server that counts round trips: the times
/// the client starts sending after it has received something (or for the first time). Two
/// writes without an answer between them (MySQL's COM_STMT_CLOSE before the next statement)
/// are one round trip; a statement prepared and then executed is two.
#[derive(Debug, Clone)]
pub struct RoundTripProxy {
    pub port: u16,
    round_trips: Arc<AtomicU64>,
}

impl RoundTripProxy {
    /// A proxy listening on 127.0.0.1 for `upstream` (`host:port`).
    pub fn start(upstream: String) -> Res<Self> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let port = listener.local_addr()?.port();
        let round_trips = Arc::new(AtomicU64::new(0));
        let counter = round_trips.clone();
        std::thread::spawn(move || {
            for client in listener.incoming().flatten() {
                let Ok(server) = TcpStream::connect(&upstream) else {
                    continue;
                };
                let _ = client.set_nodelay(true);
                let _ = server.set_nodelay(true);
                let answered = Arc::new(AtomicBool::new(true));
                let (Ok(client_out), Ok(server_in)) = (client.try_clone(), server.try_clone())
                else {
                    continue;
                };
                let (answered_c, counter_c) = (answered.clone(), counter.clone());
                std::thread::spawn(move || {
                    pipe(client, server, |_| {
                        if answered_c.swap(false, Ordering::SeqCst) {
                            counter_c.fetch_add(1, Ordering::SeqCst);
                        }
                    })
                });
                // The answer is marked before it is passed on: the client can send its next
                // request only after receiving it.
                std::thread::spawn(move || {
                    pipe(server_in, client_out, move |_| {
                        answered.store(true, Ordering::SeqCst);
                    })
                });
            }
        });
        Ok(Self { port, round_trips })
    }

    pub fn round_trips(&self) -> u64 {
        self.round_trips.load(Ordering::SeqCst)
    }
}

fn pipe(mut from: TcpStream, mut to: TcpStream, mut on_read: impl FnMut(usize)) {
    let mut buffer = vec![0u8; 64 * 1024];
    loop {
        match from.read(&mut buffer) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                on_read(n);
                if to.write_all(&buffer[..n]).is_err() {
                    break;
                }
            }
        }
    }
    let _ = to.shutdown(Shutdown::Write);
}

/// `url` with its host and port replaced by `127.0.0.1:port`, and the `host:port` it named
/// (with `default_port` if it named none); `None` when the URL names no TCP host.
pub fn reroute(url: &str, port: u16, default_port: u16) -> Option<(String, String)> {
    let scheme_end = url.find("://")? + 3;
    let rest = &url[scheme_end..];
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let authority = &rest[..authority_end];
    let (userinfo, hostport) = match authority.rfind('@') {
        Some(at) => (&authority[..=at], &authority[at + 1..]),
        None => ("", authority),
    };
    if hostport.is_empty() || rest[authority_end..].contains("host=") {
        return None;
    }
    let upstream = if hostport.contains(':') {
        hostport.to_owned()
    } else {
        format!("{hostport}:{default_port}")
    };
    let rerouted = format!(
        "{}{userinfo}127.0.0.1:{port}{}",
        &url[..scheme_end],
        &rest[authority_end..]
    );
    Some((rerouted, upstream))
}
