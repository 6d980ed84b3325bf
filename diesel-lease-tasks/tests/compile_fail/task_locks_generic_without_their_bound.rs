use diesel_lease_tasks::TaskLocks;

// Code generic over the connection names the task locks' one bound, `TaskConnection`.
fn node<C>(locks: &TaskLocks<C>) -> &str {
    locks.node()
}

fn main() {}
