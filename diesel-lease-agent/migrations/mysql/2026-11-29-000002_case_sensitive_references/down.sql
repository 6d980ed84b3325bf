ALTER TABLE conversations
    MODIFY id VARCHAR(255) NOT NULL,
    MODIFY user_id VARCHAR(255) NOT NULL,
    MODIFY busy_turn_ref VARCHAR(255);
ALTER TABLE user_settings
    MODIFY user_id VARCHAR(255) NOT NULL,
    MODIFY busy_turn_ref VARCHAR(255);
