//! Events for operators (feature `tracing`), on every configured backend.
#![cfg(feature = "tracing")]
#[macro_use]
mod common;

use std::io::Write;
use std::sync::{Mutex, OnceLock};

/// Every event of the test binary, formatted, from every thread (the keeper's included).
fn events() -> &'static Mutex<Vec<u8>> {
    static EVENTS: OnceLock<&'static Mutex<Vec<u8>>> = OnceLock::new();
    EVENTS.get_or_init(|| {
        let events: &'static Mutex<Vec<u8>> = Box::leak(Box::new(Mutex::new(Vec::new())));
        tracing::subscriber::set_global_default(collector(events)).expect("the only subscriber");
        events
    })
}

/// A subscriber that formats every event, `DEBUG` and up, into `events`.
fn collector(events: &'static Mutex<Vec<u8>>) -> impl tracing::Subscriber + Send + Sync {
    tracing_subscriber::fmt()
        .with_max_level(tracing::Level::DEBUG)
        .with_ansi(false)
        .with_writer(move || EventWriter(events))
        .finish()
}

struct EventWriter(&'static Mutex<Vec<u8>>);

impl Write for EventWriter {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// What `work` gives back, and the events it emitted on this thread, formatted.
fn events_during<R>(work: impl FnOnce() -> R) -> (R, String) {
    let events: &'static Mutex<Vec<u8>> = Box::leak(Box::new(Mutex::new(Vec::new())));
    let done = tracing::subscriber::with_default(collector(events), work);
    let all = events
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    (done, String::from_utf8_lossy(&all).into_owned())
}

/// The events that name `owner`.
fn events_of(owner: &str) -> Vec<String> {
    let all = events()
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    String::from_utf8_lossy(&all)
        .lines()
        .filter(|line| line.contains(owner))
        .map(str::to_owned)
        .collect()
}

on_every_backend! {
    all: {
        #[allow(dead_code)]
        mod support {
            use super::backend;
            include!("scenarios/support.rs");
        }
        use support::*;

        include!("scenarios/events.rs");
    }
    postgres: {
        include!("scenarios/events_postgres.rs");
    }
    mysql: {
        include!("scenarios/events_mysql.rs");
    }
}

// The scenario files this binary includes, declared for rustfmt alone and never compiled: rustfmt
// does not follow `include!`, so `cargo fmt` formats and checks them through this declaration.
#[cfg(any())]
mod scenarios {
    mod events;
    mod events_mysql;
    mod events_postgres;
}
