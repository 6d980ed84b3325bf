-- The two locks of an agent turn, as rows: the chat's (one turn per conversation) and the
-- user's (one turn or confirmation click in flight per user). busy_since is DATETIME(6) holding
-- UTC, written only from UTC_TIMESTAMP(6): TIMESTAMP columns would shift with the session time_zone.
CREATE TABLE conversations (
    id VARCHAR(255) PRIMARY KEY,
    user_id VARCHAR(255) NOT NULL,
    title VARCHAR(255) NOT NULL DEFAULT '',
    created_at DATETIME(6) NOT NULL DEFAULT (UTC_TIMESTAMP(6)),
    busy_owner VARCHAR(255),
    busy_turn_ref VARCHAR(255),
    busy_since DATETIME(6),
    INDEX conversations_user_id (user_id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;

-- updated_at is when the settings last changed: no lock statement touches it (hence no
-- ON UPDATE clause).
CREATE TABLE user_settings (
    user_id VARCHAR(255) PRIMARY KEY,
    language VARCHAR(16) NOT NULL DEFAULT 'en',
    model VARCHAR(255),
    confirm_tool_calls BOOLEAN NOT NULL DEFAULT TRUE,
    updated_at DATETIME(6) NOT NULL DEFAULT (UTC_TIMESTAMP(6)),
    busy_owner VARCHAR(255),
    busy_turn_ref VARCHAR(255),
    busy_since DATETIME(6)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;
