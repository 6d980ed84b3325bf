//! agent
#[derive(Debug)] pub struct Holder;
impl std::fmt::Display for Holder { fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result { write!(f, "x") } }
