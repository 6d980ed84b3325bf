DROP TABLE task_locks;
