// A lease table's health on SQLite, included by tests/health.rs: a read transaction left open
// keeps the frames written after its snapshot from being checkpointed, and is warned of until it
// ends; a table of an attached database is read by its qualified name.
use diesel::connection::SimpleConnection;
use diesel::prelude::*;

/// How many of the write-ahead log's frames a passive checkpoint leaves, read through the
/// health call with `thresholds`.
fn frames_left(
    conn: &mut backend::Conn,
    thresholds: HealthThresholds,
) -> (u64, diesel_lease::TableHealth) {
    let health = lease_jobs::table
        .health()
        .thresholds(thresholds)
        .run(conn)
        .unwrap();
    let left = health
        .get(Metric::WalFramesLeft)
        .and_then(Measure::as_count)
        .unwrap();
    (left, health)
}

#[test]
fn a_read_transaction_left_open_keeps_frames_in_the_log_and_is_warned_of_until_it_ends() {
    let thresholds = HealthThresholds::default().max_wal_frames_left(10);
    let reader = &mut backend::connect();
    reader.batch_execute("BEGIN").unwrap();
    // Its snapshot is taken by its first read, and kept until it ends.
    let _: i64 = lease_jobs::table.count().get_result(reader).unwrap();

    // Another connection writes: each job queued commits frames newer than the snapshot. (A
    // renewal within the millisecond of the one before writes the same bytes, and no frame.)
    let writer = &mut connection();
    for _ in 0..30 {
        queued_jobs(writer, 1, "queued");
    }
    let health_conn = &mut backend::connect();
    let (left, health) = frames_left(health_conn, thresholds);
    assert!(left > 10, "the frames after the snapshot stay:\n{health}");
    let warning = health
        .warning(Metric::WalFramesLeft)
        .map(ToString::to_string);
    assert!(
        warning
            .as_deref()
            .is_some_and(|warning| warning.starts_with(&format!(
                "wal_frames_left is {left}, past its threshold (at most 10)"
            )) && warning.contains("read transaction left open")),
        "{warning:?}"
    );

    reader.batch_execute("COMMIT").unwrap();
    // Other scenarios of this binary read and write the same file meanwhile: their readers may
    // hold a frame or two for a moment.
    crate::common::eventually("the log checkpointed once the reader ended", || {
        let (left, health) = frames_left(health_conn, thresholds);
        left <= 10 && health.warning(Metric::WalFramesLeft).is_none()
    });
}

#[test]
fn inside_a_transaction_the_log_goes_unread_and_the_rest_is_read() {
    let conn = &mut connection();
    conn.transaction::<_, Error, _>(|conn| {
        let health = lease_jobs::table.health().run(conn)?;
        assert_eq!(health.get(Metric::WalFrames), None, "{health}");
        assert!(health.get(Metric::Pages).is_some(), "{health}");
        Ok(())
    })
    .unwrap();
}

diesel::table! {
    /// A table of a database attached to the connection as `health_attached`.
    health_attached.attached_jobs (id) {
        id -> BigInt,
    }
}

#[test]
fn a_table_of_an_attached_database_is_read_by_its_qualified_name() {
    let conn = &mut backend::connect();
    let file = std::env::temp_dir().join(format!(
        "{}.db",
        crate::common::unique_id("health-attached")
    ));
    diesel::sql_query("ATTACH DATABASE ? AS health_attached")
        .bind::<diesel::sql_types::Text, _>(file.to_string_lossy())
        .execute(conn)
        .unwrap();
    conn.batch_execute(
        "CREATE TABLE health_attached.attached_jobs (id BIGINT PRIMARY KEY);
         INSERT INTO health_attached.attached_jobs (id) VALUES (1), (2);",
    )
    .unwrap();
    let health = attached_jobs::table.health().run(conn).unwrap();
    assert_eq!(health.table(), "health_attached.attached_jobs");
    assert!(
        matches!(health.get(Metric::Pages), Some(Measure::Count(pages)) if *pages > 0),
        "{health}"
    );
    assert_eq!(
        health.get(Metric::WalFrames),
        None,
        "an attached database in rollback-journal mode has no log:\n{health}"
    );
    let elsewhere = attached_jobs::table.health().run(&mut connection());
    assert!(
        matches!(elsewhere, Err(Error::TableNotFound(_))),
        "a connection without the attachment has no such table: {elsewhere:?}"
    );
    conn.batch_execute("DETACH DATABASE health_attached")
        .unwrap();
    std::fs::remove_file(file).unwrap();
}
