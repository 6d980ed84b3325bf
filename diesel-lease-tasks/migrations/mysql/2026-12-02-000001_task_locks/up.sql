-- The locks of scheduled tasks, one row per task name, created by the first run of the task.
-- locked_at is DATETIME(6) holding UTC, written only from UTC_TIMESTAMP(6): a TIMESTAMP column
-- would shift with the session time_zone. Names and tokens compare byte for byte, as on
-- PostgreSQL and SQLite: the default collations ignore case (and task `Report` would be task
-- `report`).
CREATE TABLE task_locks (
    name VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL PRIMARY KEY,
    locked_by VARCHAR(255),
    lock_token VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin,
    locked_at DATETIME(6)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;
