-- The locks of scheduled tasks, one row per task name, created by the first run of the task.
-- locked_at is TEXT in the one format the library writes, YYYY-MM-DD HH:MM:SS.SSS in UTC, so
-- that it compares as text.
CREATE TABLE task_locks (
    name TEXT PRIMARY KEY NOT NULL,
    locked_by TEXT,
    lock_token TEXT,
    locked_at TEXT
);
