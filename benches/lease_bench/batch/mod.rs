//! Measurement 8, batch claims: workers claim up to n queued jobs with `claim_batch` and finish
//! the whole batch with one `release_rows`, against the same SQL by hand, prepared once (the
//! like-for-like baseline), and against selecting the candidates and then claiming each by id;
//! and one row's `claim_row` against the bare changesets composed by hand.
//!
//! As in `suite.rs`, every hand-written statement is checked at start-up to be the very SQL (and
//! binds) the library sends, as recorded by Diesel's instrumentation.
//!
//! Its files: `common.rs` (what they share), `keyed.rs` (hand-written SQL with a list of keys),
//! `hand_pg.rs`, `hand_sqlite.rs` and `hand_mysql.rs` (each backend's hand-written statements,
//! `returning.rs` the part PostgreSQL and SQLite share), `workers.rs`, `verify.rs` and `cells.rs`
//! (the measurement, stamped into a module for each backend here). Its headline in
//! docs/benchmarks.md is the page writer's: `report/batch_claims.rs`.
mod cells;
pub mod common;
mod hand_mysql;
mod hand_pg;
mod hand_sqlite;
mod keyed;
mod returning;
mod verify;
mod workers;

pub use common::SECTION;

/// What the files of hand-written statements use.
mod prelude {
    pub use diesel::connection::SimpleConnection;
    pub use diesel::prelude::*;
    pub use diesel::result::Error as DieselError;
    pub use diesel_lease::__private::backend::read;
    pub use diesel_lease::prelude::*;

    pub use crate::batch::common::*;
    pub(crate) use crate::batch::keyed::keyed_statement;
    pub use crate::batch::keyed::{ByText, KeyedSql};
    pub(crate) use crate::hand_sql::hand_statement;
    pub use crate::hand_sql::{read_one, Bind, PreparedSql};
    pub use crate::suite::LEASE_MICROS;
    pub use crate::tables::no_fence;
}

macro_rules! batch_suite {
    ($module:ident, $sql:ident, $suite:ident) => {
        pub mod $module {
            use std::cell::RefCell;
            use std::sync::Barrier;
            use std::time::{Duration, Instant};

            use diesel::result::DatabaseErrorKind;

            use crate::batch::prelude::*;
            use crate::batch::$sql as sql;
            use crate::measure::{interleave, median, paired_ratio, StatementLog, Variant};
            use crate::results::{Better, Goal, Results, Row};
            use crate::shared::Plan;
            use crate::shared::{check, Options, Res};
            use crate::suite::{new_token, OWNER};
            use crate::text::number;
            type B = crate::backend::$suite;
            type Conn = <B as crate::backend::Backend>::Conn;
            type ConnPool = crate::backend::ConnPool<B>;
            use crate::backend::{connect, pool};

            fn same_statements(what: &str, library: Vec<String>, hand: Vec<String>) -> Res<()> {
                crate::suite::same_statements(sql::NAME, what, library, hand)
            }

            crate::batch::workers::workers!();
            crate::batch::verify::verify!();
            crate::batch::cells::cells!();
        }
    };
}

batch_suite!(pg, hand_pg, Pg);
batch_suite!(mysql, hand_mysql, Mysql);
batch_suite!(sqlite, hand_sqlite, Sqlite);
