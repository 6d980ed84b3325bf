// A lease table's health on one backend (`backend`), included by tests/health.rs for each
// backend and by tests/pooler.rs through PgBouncer: the readings each backend has, a table it
// does not have, thresholds out of range.
use diesel_lease::health::{Measure, Metric};
use diesel_lease::prelude::*;
use diesel_lease::{Error, HealthThresholds};

use crate::common::jobs::lease_jobs;

diesel::table! {
    /// `lease_jobs` under another name in Rust: the health reading names the SQL table.
    #[sql_name = "lease_jobs"]
    renamed_jobs (id) {
        id -> Text,
    }
}

diesel::table! {
    /// A table no test makes.
    never_made_jobs (id) {
        id -> BigInt,
    }
}

/// Every share is a share, and every reading the backend always has is there.
fn assert_sane(health: &diesel_lease::TableHealth) {
    for metric in backend::HEALTH_READINGS {
        assert!(health.get(*metric).is_some(), "{metric} read:\n{health}");
    }
    for (metric, value) in health.readings() {
        if let Measure::Share(share) = value {
            assert!(
                (0.0..=1.0).contains(share),
                "{metric} is a share:\n{health}",
            );
        }
    }
    assert!(
        matches!(health.get(Metric::Pages), Some(Measure::Count(pages)) if *pages > 0),
        "a table with rows has pages:\n{health}"
    );
    assert!(
        matches!(health.get(Metric::PageSize), Some(Measure::Bytes(size)) if *size >= 512),
        "a page has a size:\n{health}"
    );
}

#[test]
fn the_health_of_a_lease_table_reads_what_its_backend_has_of_it() {
    let conn = &mut connection();
    let ids = queued_jobs(conn, 20, "queued");
    let held = claim_all(conn, &ids, &Claim::new("health-1").unwrap(), minute());
    for _ in 0..5 {
        assert_eq!(held.renew().run(conn).unwrap().len(), ids.len());
    }

    // Read in a session whose time zone is far from UTC: the readings are the database's.
    let health = renamed_jobs::table
        .health()
        .run(&mut backend::connect_in_far_time_zone())
        .unwrap();
    assert_eq!(health.table(), "lease_jobs");
    assert_sane(&health);
    let report = health.to_string();
    assert!(
        report.starts_with(&format!("health of lease_jobs on {}", health.backend())),
        "{report}"
    );
    for (metric, _) in health.readings() {
        assert!(report.contains(metric.name()), "{report}");
    }
    assert_eq!(held.release().run(conn).unwrap().len(), ids.len());
}

#[test]
fn a_table_the_database_does_not_have_is_not_found() {
    let refused = never_made_jobs::table.health().run(&mut connection());
    assert!(
        matches!(&refused, Err(Error::TableNotFound(message)) if message.starts_with("never_made_jobs:")),
        "{refused:?}"
    );
}

#[test]
fn a_share_threshold_outside_zero_to_one_is_refused() {
    let conn = &mut connection();
    for thresholds in [
        HealthThresholds::default().min_hot_update_share(1.5),
        HealthThresholds::default().max_dead_row_share(-0.1),
        HealthThresholds::default().max_free_space_share(f64::NAN),
    ] {
        let refused = lease_jobs::table.health().thresholds(thresholds).run(conn);
        assert!(
            matches!(refused, Err(Error::InvalidThreshold(_))),
            "{refused:?}"
        );
    }
    // Even of a table that does not exist: nothing was sent.
    let refused = never_made_jobs::table
        .health()
        .thresholds(HealthThresholds::default().min_hot_update_share(2.0))
        .run(conn);
    assert!(matches!(refused, Err(Error::InvalidThreshold(_))));
}

#[cfg(all(feature = "postgres", feature = "mysql", feature = "sqlite"))]
#[test]
fn the_health_is_read_on_a_multi_connection_enum_connected_to_this_backend() {
    queued_jobs(&mut connection(), 1, "queued");
    let pool = crate::common::any::pool(backend::url(), 1);
    let on_enum = lease_jobs::table
        .health()
        .run(&mut *pool.get().unwrap())
        .unwrap();
    let direct = lease_jobs::table.health().run(&mut connection()).unwrap();
    assert_eq!(on_enum.backend(), direct.backend());
    assert_sane(&on_enum);
}
