// Runs under holds computed at run time (from a cron interval, a config), included once per
// backend by tests/tasks.rs: one keeper keeps them all, however many holds there are.

#[test]
fn a_hundred_runs_under_a_hundred_holds_are_kept_by_one_keeper() {
    let node = locks(&unique_id("node"));
    for minutes in 10..110 {
        let hold = Hold::at_most(Duration::from_secs(60 * minutes));
        assert!(ran(node.run(&task(), hold, |_| Ok(()))));
    }
    // Each run's first renewal, as it was kept, all by the one keeper of these locks: a keeper a
    // hold would count its own runs alone, and start a thread each.
    assert_eq!(node.stats().renewal_statements, 100, "{}", node.stats());
}
