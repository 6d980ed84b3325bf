//! The lease columns' DDL on MySQL/MariaDB.
use diesel::mysql::Mysql;

use crate::backend::LeaseDdl;

/// `VARCHAR(255)` owner and token in utf8mb4 with a binary collation, a `DATETIME(6)` claimed_at;
/// several columns per `ALTER TABLE`, and `DROP INDEX .. ON` its table.
impl LeaseDdl for Mysql {
    const OWNER_TYPE: &'static str = "VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin";
    const CLAIM_TOKEN_TYPE: &'static str = "VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin";
    const CLAIMED_AT_TYPE: &'static str = "DATETIME(6)";
    const QUOTE: char = '`';
    const ONE_COLUMN_PER_ALTER: bool = false;
    const DROP_INDEX_NAMES_TABLE: bool = true;

    /// No partial indexes: the column leads, so that its rows of the value are one range in
    /// the key's order.
    fn claim_index(index: &str, table: &str, key: &str, column: &str, _value: &str) -> String {
        format!("CREATE INDEX {index} ON {table} ({column}, {key});\n")
    }

    fn advice(_table: &str, claimed_at: &str) -> String {
        format!(
            "-- MySQL/MariaDB: owner and token have a binary collation, so that their indexes tell\n\
             -- case variants apart (diesel-lease compares them exactly whatever the collation).\n\
             -- {claimed_at} is DATETIME(6) holding UTC: a TIMESTAMP would shift with the session's time_zone.\n"
        )
    }
}
