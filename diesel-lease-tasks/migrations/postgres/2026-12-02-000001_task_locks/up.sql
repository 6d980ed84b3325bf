-- The locks of scheduled tasks, one row per task name, created by the first run of the task.
-- locked_at is written only from the database's clock, statement_timestamp(); a run that ended
-- before its shortest hold leaves it dated to come, so that the lock frees when the hold ends.
CREATE TABLE task_locks (
    name VARCHAR(255) PRIMARY KEY,
    locked_by VARCHAR(255),
    lock_token VARCHAR(255),
    locked_at TIMESTAMPTZ
);
