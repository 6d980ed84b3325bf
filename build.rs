//! Build script of the suite: tells the integration tests which database servers are configured.
fn main() {
    // A server backend's tests are compiled only when its URL is set (tests/common/mod.rs): an
    // unconfigured backend is reported as ignored, with the reason, never as passed.
    for (cfg, variable) in [
        ("lease_test_postgres", "PG_DATABASE_URL"),
        ("lease_test_mysql", "MYSQL_DATABASE_URL"),
        ("lease_test_pgbouncer", "PGBOUNCER_DATABASE_URL"),
    ] {
        println!("cargo::rustc-check-cfg=cfg({cfg})");
        println!("cargo::rerun-if-env-changed={variable}");
        let configured = std::env::var(variable).is_ok_and(|url| !url.trim().is_empty());
        if configured {
            println!("cargo::rustc-cfg={cfg}");
        }
    }
}
