//! Build script: rebuilds the library when an agent migration changes.
fn main() {
    // The agent's migrations are embedded into the library, behind its feature.
    if std::env::var_os("CARGO_FEATURE_AGENT").is_some() {
        println!("cargo:rerun-if-changed=migrations");
    } else {
        println!("cargo:rerun-if-changed=build.rs");
    }
}
