-- Ids and lock references compare exactly, as on PostgreSQL and SQLite: MariaDB's and MySQL's
-- default collations ignore case, so turn `T1` would hold a lock taken by turn `t1`.
ALTER TABLE conversations
    MODIFY id VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
    MODIFY user_id VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
    MODIFY busy_turn_ref VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;
ALTER TABLE user_settings
    MODIFY user_id VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
    MODIFY busy_turn_ref VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;
