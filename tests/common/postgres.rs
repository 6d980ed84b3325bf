//! PostgreSQL, at `PG_DATABASE_URL`.
server_backend!(
    diesel::PgConnection,
    "PostgreSQL",
    "PG_DATABASE_URL",
    [
        ("lease_jobs", super::jobs::POSTGRES_DDL),
        ("indexed_jobs", super::jobs::POSTGRES_INDEXED_DDL),
        ("native_jobs", native::DDL),
        ("lease_items", super::items::POSTGRES_DDL),
        ("case_jobs", super::jobs::POSTGRES_CASE_DDL),
    ],
    "SET TIME ZONE 'Asia/Kathmandu'"
);

native_jobs!(
    Timestamptz,
    "CREATE TABLE native_jobs (id VARCHAR(64) PRIMARY KEY, owner VARCHAR(255), \
     claim_token VARCHAR(255), claimed_at TIMESTAMPTZ)"
);

/// `column`, moved `secs` seconds back: time passing for a row, in SQL.
pub fn earlier(column: &str, secs: u32) -> String {
    format!("{column} - make_interval(secs => {secs})")
}

#[derive(QueryableByName)]
struct Waiting {
    #[diesel(sql_type = diesel::sql_types::Bool)]
    waiting: bool,
}

/// Waits until the session of backend `pid` waits for a lock (a row another session holds).
pub fn waits_for_a_lock(conn: &mut Conn, pid: i32) {
    let waits = format!(
        "SELECT coalesce(bool_or(wait_event_type = 'Lock'), false) AS waiting \
         FROM pg_stat_activity WHERE pid = {pid}"
    );
    super::waits::eventually(&format!("backend {pid} waiting for a lock"), || {
        diesel::sql_query(&waits)
            .get_result::<Waiting>(conn)
            .expect("the session's state")
            .waiting
    });
}

/// A statement's plan: the prefix that asks for it, and the text columns of its answer that
/// name the indexes it reads.
pub const EXPLAIN: &str = "EXPLAIN";
pub const PLAN_COLUMNS: &[&str] = &["QUERY PLAN"];

/// Fresh statistics of a table, its name after the prefix.
pub const ANALYZE: &str = "ANALYZE";

/// What the catalog says an index covers, by the index's name (bound): its definition.
pub const INDEX_DEFINITION: &str =
    "SELECT indexdef AS definition FROM pg_indexes WHERE indexname = $1";

/// What a health reading of a lease table reads on PostgreSQL, always (the others when they
/// apply: a share of no updates, a vacuum that never ran, a transaction holding the horizon).
pub const HEALTH_READINGS: &[diesel_lease::health::Metric] = {
    use diesel_lease::health::Metric::*;
    &[
        Updates, HotUpdates, LiveRows, DeadRows, Autovacuum, Fillfactor, PageSize, Pages,
    ]
};
