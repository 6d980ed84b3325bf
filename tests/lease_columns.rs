//! The lease columns' generated migration, applied and reverted on every configured backend.
mod common;

#[cfg(feature = "postgres")]
mod postgres {
    use crate::common::postgres as backend;
    include!("scenarios/lease_columns.rs");
}

#[cfg(feature = "mysql")]
mod mysql {
    use crate::common::mysql as backend;
    include!("scenarios/lease_columns.rs");
}

#[cfg(feature = "sqlite")]
mod sqlite {
    use crate::common::sqlite as backend;
    include!("scenarios/lease_columns.rs");
}

// The scenario files this binary includes, declared for rustfmt alone and never compiled: rustfmt
// does not follow `include!`, so `cargo fmt` formats and checks them through this declaration.
#[cfg(any())]
mod scenarios {
    mod lease_columns;
}
