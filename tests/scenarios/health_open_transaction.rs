// What a transaction left open looks like to the health reading, on a server backend, included
// by tests/health.rs beside health_postgres.rs and health_mysql.rs.

/// Whether `health` names session `session`, in a reading or a warning.
fn names_session(health: &diesel_lease::TableHealth, session: u64) -> bool {
    health.get(Metric::OldestTransactionSession) == Some(&Measure::Id(session))
        || health
            .warnings()
            .iter()
            .any(|warning| warning.to_string().contains(&format!("session {session} ")))
}

/// The health `read` gives while session `session` holds a transaction open (its first read
/// taken), and once `end` has ended it: first a warning naming the session as `described`
/// (`session <id> <described>`), past `threshold`, with an age by the database's clock; then,
/// once ended, no reading or warning naming it. Gives back the health that warned of it.
fn open_transaction_warned_of_until_it_ends(
    session: u64,
    described: &str,
    threshold: &str,
    mut read: impl FnMut() -> diesel_lease::TableHealth,
    end: impl FnOnce(),
) -> diesel_lease::TableHealth {
    let mut warned = None;
    crate::common::eventually(&format!("a warning naming session {session}"), || {
        let health = read();
        let ours = health.get(Metric::OldestTransactionSession) == Some(&Measure::Id(session));
        if ours && health.warning(Metric::OldestTransactionAge).is_some() {
            warned = Some(health);
        }
        warned.is_some()
    });
    let health = warned.unwrap();
    let warning = health
        .warning(Metric::OldestTransactionAge)
        .unwrap()
        .to_string();
    assert!(
        warning.starts_with("oldest_transaction_age is ")
            && warning.contains(&format!("past its threshold ({threshold})"))
            && warning.contains(&format!("session {session} {described}")),
        "{warning}"
    );
    let age = health
        .get(Metric::OldestTransactionAge)
        .and_then(Measure::as_age)
        .unwrap();
    assert!(
        age < std::time::Duration::from_secs(600),
        "open for {age:?}: by the database's clock, not by the reading session's time zone"
    );

    end();
    crate::common::eventually(&format!("session {session} no longer named"), || {
        !names_session(&read(), session)
    });
    health
}
