//! Primary keys: the Rust value of a table's key, for any key Diesel supports, composite too.
use std::fmt::Debug;

use diesel::backend::Backend;
use diesel::query_builder::AstPass;
use diesel::serialize::ToSql;
use diesel::sql_types::{BigInt, Binary, HasSqlType, Integer, SmallInt, Text};
use diesel::QueryResult;

/// The SQL type of a primary key that diesel-lease can name rows by, and its Rust value: what a
/// claim gives back, what a release or renewal names its rows with.
///
/// Implemented for `BigInt`, `Integer`, `SmallInt`, `Text` and `Binary`, PostgreSQL's `Uuid`
/// and MySQL's unsigned integers, and for composite keys of up to four of them: a table keyed
/// `(tenant, item_no)` of `(Text, BigInt)` has the key `(String, i64)`. A SQL type of your own
/// implements it, and [`BindKey`] for each backend.
///
/// ```
/// use diesel::sql_types::{BigInt, Text};
/// use diesel_lease::KeyType;
///
/// fn key<ST: KeyType>(value: ST::Value) -> ST::Value {
///     value
/// }
/// assert_eq!(key::<BigInt>(7), 7_i64);
/// assert_eq!(key::<(Text, BigInt)>(("acme".to_owned(), 7)), ("acme".to_owned(), 7));
/// ```
#[diagnostic::on_unimplemented(
    message = "diesel-lease cannot name rows by a primary key of SQL type `{Self}`",
    label = "the primary key's SQL type",
    note = "keys of BigInt, Integer, SmallInt, Text and Binary columns (and Uuid on PostgreSQL), alone or up to four in a composite key, are supported; implement `diesel_lease::KeyType` and `diesel_lease::BindKey` for a SQL type of your own"
)]
pub trait KeyType {
    /// The key's Rust value.
    type Value: Clone + Debug + Eq + std::hash::Hash + Send + Sync + 'static;
    /// How many columns the key has.
    const COLUMNS: usize;
}

/// Binding a key of SQL type `Self` on backend `DB`: its values as bound parameters, in the
/// order of its columns, comma-separated.
///
/// ```
/// # include!("../doctest_setup.rs");
/// use diesel_lease::BindKey;
///
/// fn binds<DB: diesel::backend::Backend, ST: BindKey<DB>>() {}
/// # fn main() {
/// binds::<DocBackend, (diesel::sql_types::Text, diesel::sql_types::BigInt)>();
/// # }
/// ```
#[diagnostic::on_unimplemented(
    message = "diesel-lease cannot bind a key of SQL type `{Self}` on `{DB}`",
    note = "its Rust value must be `ToSql` of that type on the backend"
)]
pub trait BindKey<DB: Backend>: KeyType {
    /// Writes `value` as bound parameters.
    fn walk_values<'b>(value: &'b Self::Value, out: AstPass<'_, 'b, DB>) -> QueryResult<()>;
}

/// A key type of one column: its Rust value, bound as itself.
macro_rules! single_column_keys {
    ($($sql:ty => $value:ty),+ $(,)?) => {$(
        impl $crate::KeyType for $sql {
            type Value = $value;
            const COLUMNS: usize = 1;
        }

        impl<DB> $crate::BindKey<DB> for $sql
        where
            DB: diesel::backend::Backend + diesel::sql_types::HasSqlType<$sql>,
            $value: diesel::serialize::ToSql<$sql, DB>,
        {
            fn walk_values<'b>(
                value: &'b $value,
                mut out: diesel::query_builder::AstPass<'_, 'b, DB>,
            ) -> diesel::QueryResult<()> {
                out.push_bind_param::<$sql, $value>(value)
            }
        }
    )+};
}
#[cfg(any(feature = "postgres", feature = "mysql"))]
pub(crate) use single_column_keys;

single_column_keys!(
    BigInt => i64,
    Integer => i32,
    SmallInt => i16,
    Text => String,
    Binary => Vec<u8>,
);

/// A composite key: a tuple of key types, its value the tuple of their values.
macro_rules! composite_keys {
    ($(($($part:ident),+)),+ $(,)?) => {$(
        impl<$($part: KeyType),+> KeyType for ($($part,)+) {
            type Value = ($($part::Value,)+);
            const COLUMNS: usize = 0 $(+ $part::COLUMNS)+;
        }

        #[allow(non_snake_case)]
        impl<DB: Backend, $($part: BindKey<DB>),+> BindKey<DB> for ($($part,)+) {
            fn walk_values<'b>(
                value: &'b Self::Value,
                mut out: AstPass<'_, 'b, DB>,
            ) -> QueryResult<()> {
                let ($($part,)+) = value;
                let mut first = true;
                $(
                    if !std::mem::take(&mut first) {
                        out.push_sql(", ");
                    }
                    <$part as BindKey<DB>>::walk_values($part, out.reborrow())?;
                )+
                Ok(())
            }
        }
    )+};
}

composite_keys!((A, B), (A, B, C), (A, B, C, D));

/// A key and a claim's token, bound together as one row value: how a keeper names the rows it
/// renews, each under its own claim's token.
pub(crate) fn walk_key_and_token<'b, DB, ST>(
    key: &'b ST::Value,
    token: &'b String,
    mut out: AstPass<'_, 'b, DB>,
) -> QueryResult<()>
where
    DB: Backend + HasSqlType<Text>,
    ST: BindKey<DB>,
    String: ToSql<Text, DB>,
{
    ST::walk_values(key, out.reborrow())?;
    out.push_sql(", ");
    out.push_bind_param::<Text, String>(token)
}
