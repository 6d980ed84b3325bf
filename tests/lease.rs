//! The generic layer, on every configured backend.
#[macro_use]
mod common;
#[path = "scenarios/generic.rs"]
mod generic;

use std::time::Duration;

use diesel_lease::{Age, Claim, Error, Lease, OutOfRange};

#[test]
fn every_backend_that_ci_requires_is_compiled_in() {
    let compiled = [
        cfg!(feature = "postgres"),
        cfg!(feature = "mysql"),
        cfg!(feature = "sqlite"),
    ];
    if std::env::var_os(common::REQUIRE_ALL_BACKENDS).is_some() {
        assert!(
            compiled.iter().all(|&on| on),
            "{} requires every backend: run with --all-features",
            common::REQUIRE_ALL_BACKENDS
        );
    }
}

/// Leases, ages and claims are checked when they are made, so that no statement is built of a
/// value out of range: nothing can be sent with one.
#[test]
fn a_lease_an_age_or_a_claim_out_of_range_is_refused_when_made() {
    let refused = |made: Result<Lease, OutOfRange>| {
        matches!(made.map_err(Error::from), Err(Error::InvalidLease(_)))
    };
    assert!(refused(Lease::from_secs(0)));
    assert!(refused(Lease::from_millis(0)));
    assert!(refused(Lease::new(Lease::MIN - Duration::from_micros(1))));
    assert!(refused(Lease::new(Lease::MAX + Duration::from_micros(1))));
    assert!(
        !refused(Lease::new(Lease::MIN)),
        "the shortest lease is taken"
    );
    assert!(
        !refused(Lease::new(Lease::MAX)),
        "the longest lease is taken"
    );
    assert_eq!(Lease::MIN, Duration::from_millis(1));
    assert_eq!(Lease::MAX, Duration::from_secs(30 * 24 * 3600));
    assert!(matches!(
        Age::new(Duration::MAX).map_err(Error::from),
        Err(Error::InvalidLease(_))
    ));

    assert!(matches!(Claim::new(""), Err(Error::InvalidOwner(_))));
    assert!(matches!(Claim::new("   "), Err(Error::InvalidOwner(_))));
    assert!(matches!(
        Claim::new(&"n".repeat(256)),
        Err(Error::InvalidOwner(_))
    ));
    assert!(matches!(Claim::new("node\0"), Err(Error::InvalidOwner(_))));
    assert!(matches!(Claim::new(" node"), Err(Error::InvalidOwner(_))));
    assert!(matches!(
        Claim::with_token("node", ""),
        Err(Error::InvalidToken(_))
    ));
    assert!(
        matches!(
            Claim::with_token("node", "t1 "),
            Err(Error::InvalidToken(_))
        ),
        "MySQL would pad it"
    );
    assert!(matches!(
        Claim::with_token("node", &"t".repeat(256)),
        Err(Error::InvalidToken(_))
    ));
    assert!(
        Claim::with_token(&"n".repeat(255), &"é".repeat(255)).is_ok(),
        "255 characters fit"
    );
}

on_every_backend! {
    all: {
        #[allow(dead_code)]
        mod support {
            use super::backend;
            include!("scenarios/support.rs");
        }
        use support::*;

        include!("scenarios/lease.rs");
        include!("scenarios/lease_holder.rs");
        include!("scenarios/lease_clock.rs");
        include!("scenarios/lease_changes.rs");
        include!("scenarios/lease_refusals.rs");
        include!("scenarios/lease_batch.rs");
        include!("scenarios/lease_cursor.rs");
        include!("scenarios/lease_reap.rs");
        include!("scenarios/lease_fence.rs");

        mod composite {
            use super::backend;
            include!("scenarios/composite.rs");
            include!("scenarios/composite_held.rs");
            include!("scenarios/composite_races.rs");
        }

        mod large {
            use super::backend;
            include!("scenarios/large.rs");
        }

        mod contention {
            use super::backend;
            include!("scenarios/contention.rs");
        }

        mod exact {
            use super::backend;
            include!("scenarios/exact.rs");
        }

        #[cfg(all(feature = "postgres", feature = "mysql", feature = "sqlite"))]
        mod multi_connection {
            use super::backend;
            include!("scenarios/multi_connection.rs");
        }
    }
    postgres: {
        include!("scenarios/lease_postgres.rs");
    }
    mysql: {
        include!("scenarios/lease_mysql.rs");
        include!("scenarios/lease_mysql_failed_reads.rs");
        include!("scenarios/lease_mysql_locks.rs");
    }
    sqlite: {
        include!("scenarios/lease_sqlite.rs");
    }
}

// The scenario files this binary includes, declared for rustfmt alone and never compiled: rustfmt
// does not follow `include!`, so `cargo fmt` formats and checks them through this declaration.
#[cfg(any())]
mod scenarios {
    mod composite;
    mod composite_held;
    mod composite_races;
    mod contention;
    mod exact;
    mod large;
    mod lease;
    mod lease_batch;
    mod lease_changes;
    mod lease_clock;
    mod lease_cursor;
    mod lease_fence;
    mod lease_holder;
    mod lease_mysql;
    mod lease_mysql_failed_reads;
    mod lease_mysql_locks;
    mod lease_postgres;
    mod lease_reap;
    mod lease_refusals;
    mod lease_sqlite;
    mod multi_connection;
    mod support;
}
