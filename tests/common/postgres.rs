//! PostgreSQL, at `PG_DATABASE_URL`.
server_backend!(
    diesel::PgConnection,
    "PostgreSQL",
    "PG_DATABASE_URL",
    super::jobs::POSTGRES_DDL,
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
