//! Hand-written SQL with a list of keys, written as the library writes key lists, and a
//! statement Diesel caches by its text.
use std::marker::PhantomData;

use diesel::backend::Backend;
use diesel::prelude::*;
use diesel::query_builder::{AstPass, Query, QueryFragment, QueryId};
use diesel::sql_types::BigInt;

use crate::hand_sql::{split_placeholders, Bind};

/// Hand-written SQL where its text says `{keys}`: whether a row's key is among a list, written as
/// the library writes it (`diesel_lease::__private::sql::KeysIn`), known by its marker type.
pub trait KeyedHandSql: 'static {
    fn parts() -> &'static KeyedParts;
}

/// A statement with a list of keys: the key column, and the fragments before `{keys}` and after
/// it, each cut at its placeholders.
pub struct KeyedParts {
    key: &'static str,
    head: Vec<&'static str>,
    tail: Vec<&'static str>,
}

/// `sql` cut at `{keys}`, each side cut at its placeholders; `key` is the key column.
pub fn keyed_parts(key: &'static str, sql: &'static str) -> KeyedParts {
    let (head, tail) = sql.split_once("{keys}").unwrap_or((sql, ""));
    KeyedParts {
        key,
        head: split_placeholders(head),
        tail: split_placeholders(tail),
    }
}

/// Declares the marker of a hand-written statement with a list of keys of column `$key`.
macro_rules! keyed_statement {
    ($marker:ident, $key:expr, $sql:expr) => {
        pub struct $marker;

        impl $crate::batch::keyed::KeyedHandSql for $marker {
            fn parts() -> &'static $crate::batch::keyed::KeyedParts {
                static PARTS: std::sync::OnceLock<$crate::batch::keyed::KeyedParts> =
                    std::sync::OnceLock::new();
                PARTS.get_or_init(|| $crate::batch::keyed::keyed_parts($key, $sql))
            }
        }
    };
}
pub(crate) use keyed_statement;

/// The most keys in one `IN` list, as the library writes them: longer lists are joined by `OR`.
const MOST_KEYS_IN_ONE_LIST: usize = 512;

/// Hand-written SQL with `B` binds, then the list of keys, then `A` binds. The keys are written as
/// the library writes a key list: one key as Diesel's equality, `((key = ?))`; several as
/// `((key) IN (?, ?, ..))`, padded to a power of two with the last key so that the text comes in a
/// few lengths, in lists of at most 512 joined by `OR`. It has no static query id: Diesel prepares
/// it once per connection and text, as it does the library's key lists.
pub struct KeyedSql<'a, M, const B: usize, const A: usize> {
    before: [Bind<'a>; B],
    keys: &'a [i64],
    after: [Bind<'a>; A],
    marker: PhantomData<M>,
}

impl<'a, M: KeyedHandSql, const B: usize, const A: usize> KeyedSql<'a, M, B, A> {
    pub fn new(before: [Bind<'a>; B], keys: &'a [i64], after: [Bind<'a>; A]) -> Self {
        debug_assert_eq!(M::parts().head.len(), B + 1, "one bind per placeholder");
        debug_assert_eq!(M::parts().tail.len(), A + 1, "one bind per placeholder");
        Self {
            before,
            keys,
            after,
            marker: PhantomData,
        }
    }
}

/// Cached by its SQL text, which varies with the number of keys.
impl<M, const B: usize, const A: usize> QueryId for KeyedSql<'_, M, B, A> {
    type QueryId = ();
    const HAS_STATIC_QUERY_ID: bool = false;
}

impl<M, const B: usize, const A: usize> Query for KeyedSql<'_, M, B, A> {
    type SqlType = diesel::sql_types::Untyped;
}

/// Pushes `fragments` with `binds` between them.
fn walk_fragments<'b, DB>(
    fragments: &[&'static str],
    binds: &'b [Bind<'_>],
    mut out: AstPass<'_, 'b, DB>,
) -> QueryResult<()>
where
    DB: Backend
        + diesel::sql_types::HasSqlType<diesel::sql_types::Text>
        + diesel::sql_types::HasSqlType<BigInt>,
    str: diesel::serialize::ToSql<diesel::sql_types::Text, DB>,
    i64: diesel::serialize::ToSql<BigInt, DB>,
{
    for (n, fragment) in fragments.iter().enumerate() {
        out.push_sql(fragment);
        match binds.get(n) {
            Some(Bind::Text(text)) => out.push_bind_param::<diesel::sql_types::Text, _>(*text)?,
            Some(Bind::BigInt(value)) => out.push_bind_param::<BigInt, _>(value)?,
            None => {}
        }
    }
    Ok(())
}

impl<M, const B: usize, const A: usize, DB> QueryFragment<DB> for KeyedSql<'_, M, B, A>
where
    M: KeyedHandSql,
    DB: Backend
        + diesel::sql_types::HasSqlType<diesel::sql_types::Text>
        + diesel::sql_types::HasSqlType<BigInt>,
    str: diesel::serialize::ToSql<diesel::sql_types::Text, DB>,
    i64: diesel::serialize::ToSql<BigInt, DB>,
{
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        let KeyedParts { key, head, tail } = M::parts();
        walk_fragments(head, &self.before, out.reborrow())?;
        out.push_sql("(");
        match self.keys {
            [] => out.push_sql("1 = 0"),
            [only] => {
                out.push_sql("(");
                out.push_sql(key);
                out.push_sql(" = ");
                out.push_bind_param::<BigInt, _>(only)?;
                out.push_sql(")");
            }
            keys => {
                let padded = keys.len().next_power_of_two();
                let last = keys.last().into_iter().cycle();
                for (n, key_value) in keys.iter().chain(last).take(padded).enumerate() {
                    let within = n % MOST_KEYS_IN_ONE_LIST;
                    if within == 0 {
                        if n > 0 {
                            out.push_sql(") OR ");
                        }
                        out.push_sql("(");
                        out.push_sql(key);
                        out.push_sql(") IN (");
                    } else {
                        out.push_sql(", ");
                    }
                    out.push_bind_param::<BigInt, _>(key_value)?;
                }
                out.push_sql(")");
            }
        }
        out.push_sql(")");
        walk_fragments(tail, &self.after, out.reborrow())
    }
}

impl<M, const B: usize, const A: usize, C> RunQueryDsl<C> for KeyedSql<'_, M, B, A> {}

/// A hand-written statement cached by its SQL text rather than by its marker type, as the
/// library caches a statement without a static query id (MariaDB's batch candidates).
pub struct ByText<Q>(pub Q);

impl<Q> QueryId for ByText<Q> {
    type QueryId = ();
    const HAS_STATIC_QUERY_ID: bool = false;
}

impl<Q: Query> Query for ByText<Q> {
    type SqlType = Q::SqlType;
}

impl<Q: QueryFragment<DB>, DB: Backend> QueryFragment<DB> for ByText<Q> {
    fn walk_ast<'b>(&'b self, out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        self.0.walk_ast(out)
    }
}

impl<Q, C> RunQueryDsl<C> for ByText<Q> {}
