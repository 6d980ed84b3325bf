//! The lease columns' DDL on SQLite.
use diesel::sqlite::Sqlite;

use crate::backend::LeaseDdl;

/// `TEXT` for all three, claimed_at in the one format the library writes; one column per
/// `ALTER TABLE`, as SQLite allows.
impl LeaseDdl for Sqlite {
    const OWNER_TYPE: &'static str = "TEXT";
    const CLAIM_TOKEN_TYPE: &'static str = "TEXT";
    const CLAIMED_AT_TYPE: &'static str = "TEXT";
    const QUOTE: char = '"';
    const ONE_COLUMN_PER_ALTER: bool = true;
    const DROP_INDEX_NAMES_TABLE: bool = false;

    fn advice(_table: &str, claimed_at: &str) -> String {
        format!(
            "-- SQLite: {claimed_at} is TEXT as the library writes it, YYYY-MM-DD HH:MM:SS.SSS in UTC, so\n\
             -- that timestamps compare as text.\n"
        )
    }
}
