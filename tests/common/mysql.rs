//! MySQL/MariaDB, at `MYSQL_DATABASE_URL`.
server_backend!(
    diesel::MysqlConnection,
    "MySQL/MariaDB",
    "MYSQL_DATABASE_URL",
    super::jobs::MYSQL_DDL,
    "SET time_zone = '+05:45'"
);

native_jobs!(
    Datetime,
    "CREATE TABLE native_jobs (id VARCHAR(64) PRIMARY KEY, owner VARCHAR(255), \
     claim_token VARCHAR(255) COLLATE utf8mb4_bin, claimed_at DATETIME(6))"
);

/// `column`, moved `secs` seconds back: time passing for a row, in SQL.
pub fn earlier(column: &str, secs: u32) -> String {
    format!("{column} - INTERVAL {secs} SECOND")
}

/// How many statements the server has run for this session, by its own count (this one
/// included).
pub fn questions(conn: &mut Conn) -> i64 {
    #[derive(QueryableByName)]
    struct Status {
        #[diesel(sql_type = diesel::sql_types::Text)]
        #[diesel(column_name = Value)]
        value: String,
    }
    let status: Status = diesel::sql_query("SHOW SESSION STATUS LIKE 'Questions'")
        .get_result(conn)
        .expect("the session's statement count");
    status.value.parse().expect("a count")
}
