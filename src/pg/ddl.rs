//! The lease columns' DDL on PostgreSQL.
use diesel::pg::Pg;

use crate::backend::LeaseDdl;

/// `TEXT` owner and token, a `TIMESTAMPTZ` claimed_at; several columns per `ALTER TABLE`.
impl LeaseDdl for Pg {
    const OWNER_TYPE: &'static str = "TEXT";
    const CLAIM_TOKEN_TYPE: &'static str = "TEXT";
    const CLAIMED_AT_TYPE: &'static str = "TIMESTAMPTZ";
    const QUOTE: char = '"';
    const ONE_COLUMN_PER_ALTER: bool = false;
    const DROP_INDEX_NAMES_TABLE: bool = false;

    fn advice(table: &str, claimed_at: &str) -> String {
        format!(
            "-- PostgreSQL: keep {claimed_at}, the one column a renewal writes, out of every index, so\n\
             -- that a renewal stays a HOT update, writing no index entry, while the row's page has\n\
             -- room. With frequent renewals, leave room on each page:\n\
             --     ALTER TABLE {table} SET (fillfactor = 90);\n\
             -- On a large table in use, build the index CONCURRENTLY instead, outside a transaction\n\
             -- (run_in_transaction = false in this migration's metadata.toml).\n"
        )
    }
}
