//! The generic lease layer, on every configured backend.
mod common;

#[test]
fn every_backend_that_ci_requires_is_compiled_in() {
    let compiled = [
        cfg!(feature = "postgres"),
        cfg!(feature = "mysql"),
        cfg!(feature = "sqlite"),
    ];
    if std::env::var_os(common::REQUIRE_ALL_BACKENDS).is_some() {
        assert!(
            compiled.iter().all(|&on| on),
            "{} requires every backend: run with --all-features",
            common::REQUIRE_ALL_BACKENDS
        );
    }
}

#[test]
fn lease_updates_are_cached_by_type_and_updates_whose_sql_varies_are_not() {
    use common::jobs::lease_jobs;
    use diesel::prelude::*;
    use diesel::query_builder::QueryId;
    use diesel_lease::{Claim, ClaimLease, Lease};

    fn cached<Q: QueryId>(_: &Q) -> bool {
        Q::HAS_STATIC_QUERY_ID
    }
    let (claim, lease) = (Claim::new("worker").unwrap(), Lease::from_secs(1).unwrap());
    let claiming = diesel_lease::update(
        lease_jobs::table
            .find("a")
            .filter(lease_jobs::table.claimable(lease)),
    )
    .set((
        lease_jobs::table.taken(&claim),
        lease_jobs::status.eq("running"),
    ));
    let releasing =
        diesel_lease::update(lease_jobs::table.filter(lease_jobs::table.held_by(claim.token())))
            .set(lease_jobs::table.released());
    let listed =
        diesel_lease::update(lease_jobs::table.filter(lease_jobs::id.eq_any(vec!["a", "b"])))
            .set(lease_jobs::status.eq("done"));

    assert!(
        cached(&claiming) && cached(&releasing),
        "the SQL of a lease update is fixed by its type"
    );
    assert!(
        !cached(&listed),
        "an IN list varies with its values: prepared at every execution"
    );
}

#[cfg(feature = "postgres")]
mod postgres {
    use crate::common::postgres as backend;
    include!("scenarios/lease.rs");
    include!("scenarios/lease_postgres.rs");
}

#[cfg(feature = "mysql")]
mod mysql {
    use crate::common::mysql as backend;
    include!("scenarios/lease.rs");
    include!("scenarios/lease_mysql.rs");
}

#[cfg(feature = "sqlite")]
mod sqlite {
    use crate::common::sqlite as backend;
    include!("scenarios/lease.rs");
}
