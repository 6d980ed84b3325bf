//! Build script: rebuilds the library when an agent migration changes.
// The agent's migrations are embedded into the library, behind its feature.
fn main() {
    if std::env::var_os("CARGO_FEATURE_AGENT").is_some() {
        println!("cargo:rerun-if-changed=migrations");
    } else {
        println!("cargo:rerun-if-changed=build.rs");
    }
}
