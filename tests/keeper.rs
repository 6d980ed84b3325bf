//! The keeper, on every configured backend.
mod common;

#[cfg(feature = "postgres")]
mod postgres {
    use crate::common::postgres as backend;
    include!("scenarios/keeper.rs");
    include!("scenarios/keeper_postgres.rs");
}

#[cfg(feature = "mysql")]
mod mysql {
    use crate::common::mysql as backend;
    include!("scenarios/keeper.rs");
    include!("scenarios/keeper_mysql.rs");
}

#[cfg(feature = "sqlite")]
mod sqlite {
    use crate::common::sqlite as backend;
    include!("scenarios/keeper.rs");
}

// The scenario files this binary includes, declared for rustfmt alone and never compiled: rustfmt
// does not follow `include!`, so `cargo fmt` formats and checks them through this declaration.
#[cfg(any())]
mod scenarios {
    mod keeper;
    mod keeper_mysql;
    mod keeper_postgres;
}
