// The task locks on a connection enum of Diesel's `#[derive(MultiConnection)]`
// (tests/common/any.rs), connected to this backend, included by tests/tasks.rs beside the
// scenarios on the backend's own connection: the lock made by the first run (an INSERT on the
// enum), a second run refused, the shortest hold kept past the lease by a keeper of a pool of
// the enum.
mod on_a_multi_connection_enum {
    use std::time::Duration;

    use diesel_lease::Lease;
    use diesel_lease_tasks::{Hold, TaskLocks, TaskRun};

    use super::backend;
    use crate::common::{any, unique_id};

    #[test]
    fn a_task_runs_once_refuses_another_node_and_keeps_its_shortest_hold() {
        backend::pool(); // the test tables, made once per run
        let pool = any::pool(backend::url(), 4);
        let lease = Lease::from_secs(30).unwrap();
        let node_a = TaskLocks::new(pool.clone(), "node-a", lease).unwrap();
        let node_b = TaskLocks::new(pool, "node-b", lease).unwrap();
        let (name, long) = (unique_id("task"), Duration::from_secs(600));
        let hold = Hold::at_most(long).at_least(long);

        let run = node_a.run(&name, hold, |task| {
            let refused = node_b.run(&name, hold, |_| Ok("ran twice"))?;
            task.check()?;
            Ok(refused)
        });
        let Ok(TaskRun::Ran(TaskRun::HeldBy(holder))) = run else {
            panic!("expected node B refused while node A ran, got {run:?}");
        };
        assert_eq!(holder.owner, "node-a");

        let after = node_b.run(&name, hold, |_| Ok(())).unwrap();
        let Some(holder) = after.held_by() else {
            panic!("the shortest hold let node B run");
        };
        assert!(holder.owner == "node-a" && holder.frees_in > lease.as_duration());
    }
}
