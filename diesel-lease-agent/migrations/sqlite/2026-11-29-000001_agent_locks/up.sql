-- The two locks of an agent turn, as rows: the chat's (one turn per conversation) and the
-- user's (one turn or confirmation click in flight per user). Timestamps are TEXT in the one
-- format the library writes, YYYY-MM-DD HH:MM:SS.SSS in UTC, so that they compare as text.
CREATE TABLE conversations (
    id TEXT PRIMARY KEY NOT NULL,
    user_id TEXT NOT NULL,
    title TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')),
    busy_owner TEXT,
    busy_turn_ref TEXT,
    busy_since TEXT
);
CREATE INDEX conversations_user_id ON conversations (user_id);

-- updated_at is when the settings last changed: no lock statement touches it.
CREATE TABLE user_settings (
    user_id TEXT PRIMARY KEY NOT NULL,
    language TEXT NOT NULL DEFAULT 'en',
    model TEXT,
    confirm_tool_calls BOOLEAN NOT NULL DEFAULT 1,
    updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')),
    busy_owner TEXT,
    busy_turn_ref TEXT,
    busy_since TEXT
);
