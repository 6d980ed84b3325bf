//! Hand-written SQL as the baselines send it: its text cut at the placeholders, its binds, prepared
//! once per connection, and its reads recovered after an error as the library's are.
use std::marker::PhantomData;

use diesel::backend::Backend;
use diesel::prelude::*;
use diesel::query_builder::{AstPass, Query, QueryFragment, QueryId};
use diesel_lease::backend::LeaseBackend;

/// A bound value of hand-written SQL.
#[derive(Debug, Clone, Copy)]
pub enum Bind<'a> {
    Text(&'a str),
    BigInt(i64),
}

/// Hand-written SQL known by its marker type: its text cut at the placeholders (`$n` or `?`).
pub trait HandSql: 'static {
    fn fragments() -> &'static [&'static str];
}

/// `sql` cut at each placeholder: n placeholders give n + 1 fragments.
pub fn split_placeholders(sql: &'static str) -> Vec<&'static str> {
    let mut fragments = Vec::new();
    let (bytes, mut start, mut at) = (sql.as_bytes(), 0, 0);
    while at < bytes.len() {
        let length = match bytes[at] {
            b'?' => 1,
            b'$' => {
                1 + bytes[at + 1..]
                    .iter()
                    .take_while(|b| b.is_ascii_digit())
                    .count()
            }
            _ => 0,
        };
        if length > 0 {
            fragments.push(&sql[start..at]);
            at += length;
            start = at;
        } else {
            at += 1;
        }
    }
    fragments.push(&sql[start..]);
    fragments
}

/// Hand-written SQL with its binds, prepared once per connection (unlike `sql_query`, which
/// Diesel never caches).
pub struct PreparedSql<'a, M, const N: usize> {
    binds: [Bind<'a>; N],
    marker: PhantomData<M>,
}

impl<'a, M: HandSql, const N: usize> PreparedSql<'a, M, N> {
    pub fn new(binds: [Bind<'a>; N]) -> Self {
        debug_assert_eq!(M::fragments().len(), N + 1, "one bind per placeholder");
        Self {
            binds,
            marker: PhantomData,
        }
    }
}

impl<M: 'static, const N: usize> QueryId for PreparedSql<'_, M, N> {
    type QueryId = M;
    const HAS_STATIC_QUERY_ID: bool = true;
}

impl<M, const N: usize> Query for PreparedSql<'_, M, N> {
    type SqlType = diesel::sql_types::Untyped;
}

impl<'a, M, const N: usize, DB> QueryFragment<DB> for PreparedSql<'a, M, N>
where
    M: HandSql,
    DB: Backend,
    str: diesel::serialize::ToSql<diesel::sql_types::Text, DB>,
    i64: diesel::serialize::ToSql<diesel::sql_types::BigInt, DB>,
    DB: diesel::sql_types::HasSqlType<diesel::sql_types::Text>
        + diesel::sql_types::HasSqlType<diesel::sql_types::BigInt>,
{
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        let fragments = M::fragments();
        for (n, fragment) in fragments.iter().enumerate() {
            out.push_sql(fragment);
            match self.binds.get(n) {
                Some(Bind::Text(text)) => {
                    out.push_bind_param::<diesel::sql_types::Text, _>(*text)?
                }
                Some(Bind::BigInt(value)) => {
                    out.push_bind_param::<diesel::sql_types::BigInt, _>(value)?
                }
                None => {}
            }
        }
        Ok(())
    }
}

impl<M, const N: usize, C> RunQueryDsl<C> for PreparedSql<'_, M, N> {}

/// `query`'s first row, as Diesel's `get_result` reads it; after a database error, the connection
/// given what its backend needs before the statement may run again, as the library does after
/// each of its reads (`read`, which collects every row): on MySQL/MariaDB
/// its prepared statements dropped, since Connector/C leaves a cached statement whose result
/// failed past its header unable to run again, and its next execution would never return (issue
/// 15 item 1). Every hand-written read the harness caches on MySQL/MariaDB goes through here or
/// through `read`.
pub fn read_one<'q, C, Q, U>(query: Q, conn: &mut C) -> QueryResult<U>
where
    C: Connection,
    C::Backend: LeaseBackend,
    Q: RunQueryDsl<C> + diesel::query_dsl::LoadQuery<'q, C, U>,
{
    let row = query.get_result(conn);
    if let Err(diesel::result::Error::DatabaseError(..)) = row {
        <C::Backend as LeaseBackend>::after_failed_read(conn);
    }
    row
}

/// Declares the marker of a hand-written statement and where its SQL is.
macro_rules! hand_statement {
    ($marker:ident, $sql:expr) => {
        pub struct $marker;

        impl $crate::hand_sql::HandSql for $marker {
            fn fragments() -> &'static [&'static str] {
                static FRAGMENTS: std::sync::OnceLock<Vec<&'static str>> =
                    std::sync::OnceLock::new();
                FRAGMENTS.get_or_init(|| $crate::hand_sql::split_placeholders($sql))
            }
        }
    };
}
pub(crate) use hand_statement;
