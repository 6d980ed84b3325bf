//! A table keyed by a composite primary key, `(tenant, item_no)`, whose lease columns have names
//! of its own: the scenarios of tests/scenarios/composite*.rs claim its rows.
use chrono::{DateTime, Utc};
use diesel::prelude::*;

diesel::table! {
    use diesel::sql_types::*;
    use diesel_lease::sql_types::UtcTimestamp;

    lease_items (tenant, item_no) {
        tenant -> Text,
        item_no -> BigInt,
        state -> Text,
        holder -> Nullable<Text>,
        holder_token -> Nullable<Text>,
        held_since -> Nullable<UtcTimestamp>,
        generation -> BigInt,
    }
}

diesel_lease::claim_lease!(lease_items {
    owner: holder,
    claim_token: holder_token,
    claimed_at: held_since,
    fence: generation,
});

/// A row of `lease_items`: every column, so that a claim's default selection loads as one.
#[derive(Debug, Clone, PartialEq, Queryable, Selectable)]
#[diesel(table_name = lease_items)]
pub struct Item {
    pub tenant: String,
    pub item_no: i64,
    pub state: String,
    pub holder: Option<String>,
    pub holder_token: Option<String>,
    pub held_since: Option<DateTime<Utc>>,
    pub generation: i64,
}

pub const POSTGRES_DDL: &str = "CREATE TABLE lease_items (
    tenant VARCHAR(64) NOT NULL,
    item_no BIGINT NOT NULL,
    state VARCHAR(16) NOT NULL,
    holder VARCHAR(255),
    holder_token VARCHAR(255),
    held_since TIMESTAMPTZ,
    generation BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (tenant, item_no))";
pub const MYSQL_DDL: &str = "CREATE TABLE lease_items (
    tenant VARCHAR(64) NOT NULL,
    item_no BIGINT NOT NULL,
    state VARCHAR(16) NOT NULL,
    holder VARCHAR(255),
    holder_token VARCHAR(255) COLLATE utf8mb4_bin,
    held_since DATETIME(6),
    generation BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (tenant, item_no),
    INDEX lease_items_token (holder_token))";
pub const SQLITE_DDL: &str = "CREATE TABLE lease_items (
    tenant TEXT NOT NULL,
    item_no BIGINT NOT NULL,
    state TEXT NOT NULL,
    holder TEXT,
    holder_token TEXT,
    held_since TEXT,
    generation BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (tenant, item_no))";
