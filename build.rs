//! Build script: rebuilds the library when an embedded migration changes.
fn main() {
    // The ready-made locks' migrations are embedded into the library, each behind its feature.
    let mut watched = false;
    for (feature, migrations) in [
        ("CARGO_FEATURE_AGENT", "migrations/agent"),
        ("CARGO_FEATURE_TASKS", "migrations/tasks"),
    ] {
        if std::env::var_os(feature).is_some() {
            println!("cargo:rerun-if-changed={migrations}");
            watched = true;
        }
    }
    if !watched {
        println!("cargo:rerun-if-changed=build.rs");
    }
}
