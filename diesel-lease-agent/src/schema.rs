//! The two lock tables of an agent chat application, one `table!` for every backend.
//!
//! `busy_since` is [`UtcTimestamp`](diesel_lease::sql_types::UtcTimestamp): `TIMESTAMPTZ` on PostgreSQL,
//! `DATETIME(6)` holding UTC on MySQL/MariaDB, TEXT on SQLite; migrations create both tables.
//!
//! ```
//! use diesel_lease_agent::schema::{conversations, user_settings};
//! use diesel_lease::ClaimLease;
//!
//! let _busy = conversations::table.unclaimed();
//! let _click_or_turn = user_settings::table.unclaimed();
//! ```
#![allow(missing_docs)] // the items table! generates for each column; the columns are documented

diesel::table! {
    use diesel::sql_types::*;
    use diesel_lease::sql_types::UtcTimestamp;

    /// A chat. Its lock: one turn per conversation.
    conversations (id) {
        /// The conversation's id.
        id -> Text,
        /// The user the conversation belongs to.
        user_id -> Text,
        /// What the user calls it.
        title -> Text,
        /// When it was created.
        created_at -> UtcTimestamp,
        /// The node running the conversation's turn.
        busy_owner -> Nullable<Text>,
        /// The turn that holds the conversation.
        busy_turn_ref -> Nullable<Text>,
        /// Since when, by the database's clock.
        busy_since -> Nullable<UtcTimestamp>,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use diesel_lease::sql_types::UtcTimestamp;

    /// A user's settings. Its lock: one turn or confirmation click in flight per user.
    user_settings (user_id) {
        /// The user's id.
        user_id -> Text,
        /// The language the agent answers in.
        language -> Text,
        /// The model the user chose, if any.
        model -> Nullable<Text>,
        /// Whether tool calls ask for a confirmation click.
        confirm_tool_calls -> Bool,
        /// When the settings last changed; no lock statement touches it.
        updated_at -> UtcTimestamp,
        /// The node running the user's turn or click.
        busy_owner -> Nullable<Text>,
        /// The turn or click that holds the user.
        busy_turn_ref -> Nullable<Text>,
        /// Since when, by the database's clock (a click's is dated back; see `acquire_user`).
        busy_since -> Nullable<UtcTimestamp>,
    }
}

diesel_lease::claim_lease!(conversations {
    owner: busy_owner,
    claim_token: busy_turn_ref,
    claimed_at: busy_since,
});

diesel_lease::claim_lease!(user_settings {
    owner: busy_owner,
    claim_token: busy_turn_ref,
    claimed_at: busy_since,
});
