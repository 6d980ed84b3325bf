//! Build script: rebuilds the library when a migration changes.
// Rebuild when a migration changes: they are embedded into the library.
fn main() {
    println!("cargo:rerun-if-changed=migrations");
}
