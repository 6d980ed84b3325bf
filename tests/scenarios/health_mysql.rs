// A lease table's health on MySQL/MariaDB, included by tests/health.rs: a consistent snapshot
// left open is warned of by its session, with its age by the database's clock whatever the
// reading session's time zone, until it ends; a table of another database is read by its
// qualified name.
use std::time::Duration;

use diesel::connection::SimpleConnection;
use diesel::prelude::*;

use crate::common::mysql::session_id;

/// How long `information_schema.INNODB_TRX` must go unread before the server reads its
/// transactions anew (`CACHE_MIN_IDLE_TIME_US` in InnoDB, 0.1 s), and a little more.
const INNODB_TRX_REFRESH: Duration = Duration::from_millis(150);

/// The health of `lease_jobs`, read once the list of transactions has gone unread long enough
/// to be read anew: read more often, it would show the same transactions for ever.
fn unhurried_health(
    reader: &mut backend::Conn,
    thresholds: HealthThresholds,
) -> diesel_lease::TableHealth {
    std::thread::sleep(INNODB_TRX_REFRESH);
    lease_jobs::table
        .health()
        .thresholds(thresholds)
        .run(reader)
        .unwrap()
}

#[test]
fn a_consistent_snapshot_left_open_is_warned_of_by_its_session_until_it_ends() {
    let holder = &mut backend::connect();
    let session = session_id(holder);
    holder
        .batch_execute(
            "SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ;
             START TRANSACTION WITH CONSISTENT SNAPSHOT;",
        )
        .unwrap();
    let _: i64 = lease_jobs::table.count().get_result(holder).unwrap();

    // `trx_started` counts whole seconds: over one, the snapshot is past the threshold.
    let thresholds = HealthThresholds::default().max_transaction_age(Duration::from_secs(1));
    // Read from a session 5 h 45 min east of UTC: an age read through the session's time zone
    // would be hours off.
    let reader = &mut backend::connect_in_far_time_zone();
    let health = open_transaction_warned_of_until_it_ends(
        session,
        "(REPEATABLE READ, RUNNING;",
        "at most 1.0 s",
        || unhurried_health(reader, thresholds),
        || holder.batch_execute("COMMIT").unwrap(),
    );
    assert!(health.get(Metric::HistoryListLength).is_some(), "{health}");
}

diesel::table! {
    /// A table of the server's own `mysql` database, which every server has: InnoDB's
    /// persistent statistics.
    mysql.innodb_table_stats (database_name, table_name) {
        database_name -> Text,
        table_name -> Text,
    }
}

diesel::table! {
    /// The same table's name, unqualified: the connection's database has none.
    #[sql_name = "innodb_table_stats"]
    unqualified_stats (database_name, table_name) {
        database_name -> Text,
        table_name -> Text,
    }
}

#[test]
fn a_table_of_another_database_is_read_by_its_qualified_name() {
    let conn = &mut connection();
    let health = unqualified_stats::table.health().run(conn);
    assert!(matches!(health, Err(Error::TableNotFound(_))), "{health:?}");
    let health = innodb_table_stats::table.health().run(conn).unwrap();
    assert_eq!(health.table(), "mysql.innodb_table_stats");
    assert!(
        matches!(health.get(Metric::Pages), Some(Measure::Count(pages)) if *pages > 0),
        "{health}"
    );
}
