-- The two locks of an agent turn, as rows: the chat's (one turn per conversation) and the
-- user's (one turn or confirmation click in flight per user). busy_since is written only from
-- the database's clock, statement_timestamp().
CREATE TABLE conversations (
    id VARCHAR(255) PRIMARY KEY,
    user_id VARCHAR(255) NOT NULL,
    title TEXT NOT NULL DEFAULT '',
    created_at TIMESTAMPTZ NOT NULL DEFAULT statement_timestamp(),
    busy_owner VARCHAR(255),
    busy_turn_ref VARCHAR(255),
    busy_since TIMESTAMPTZ
);
CREATE INDEX conversations_user_id ON conversations (user_id);

-- updated_at is when the settings last changed: no lock statement touches it.
CREATE TABLE user_settings (
    user_id VARCHAR(255) PRIMARY KEY,
    language VARCHAR(16) NOT NULL DEFAULT 'en',
    model VARCHAR(255),
    confirm_tool_calls BOOLEAN NOT NULL DEFAULT TRUE,
    updated_at TIMESTAMPTZ NOT NULL DEFAULT statement_timestamp(),
    busy_owner VARCHAR(255),
    busy_turn_ref VARCHAR(255),
    busy_since TIMESTAMPTZ
);
