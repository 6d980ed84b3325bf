//! Primary keys: the Rust value of a table's key, for any key Diesel supports, composite too.
use std::fmt::Debug;

use diesel::backend::Backend;
use diesel::query_builder::AstPass;
use diesel::sql_types::{BigInt, Binary, Integer, SmallInt, Text};
use diesel::QueryResult;

/// The SQL type of a primary key that diesel-lease can name rows by, and its Rust value: what a
/// claim gives back, what a release or renewal names its rows with.
///
/// Implemented for `BigInt`, `Integer`, `SmallInt`, `Text` and `Binary`, PostgreSQL's `Uuid`
/// and MySQL's unsigned integers, and for composite keys of up to four of them: a table keyed
/// `(tenant, item_no)` of `(Text, BigInt)` has the key `(String, i64)`. A SQL type of your own
/// implements it, [`BindKey`] for each backend, and [`IntoKey`] for its value.
///
/// ```
/// use diesel::sql_types::{BigInt, Text};
/// use diesel_lease::__private::KeyType;
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
    note = "keys of BigInt, Integer, SmallInt, Text and Binary columns (and Uuid on PostgreSQL), alone or up to four in a composite key, are supported; implement `diesel_lease::KeyType`, `diesel_lease::BindKey` and `diesel_lease::IntoKey` for a SQL type of your own"
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
/// use diesel_lease::__private::BindKey;
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
/// What converts into a key of SQL type `ST`, as users write keys: for a one-column key anything
/// that converts into its value (`7` or `7_i32` for a `BigInt` key, `"acme"` for `Text`), for a
/// composite key a tuple of what converts into each part, in the key's column order
/// (`("acme", 7)` for `(Text, BigInt)`). What [`claim_row`](crate::LeaseDsl::claim_row) and
/// [`held_rows`](crate::LeaseDsl::held_rows) take. A key SQL type of your own implements it for
/// its value.
///
/// ```
/// use diesel::sql_types::{BigInt, Text};
/// use diesel_lease::__private::IntoKey;
///
/// fn key<ST: diesel_lease::__private::KeyType>(key: impl IntoKey<ST>) -> ST::Value {
///     key.into_key()
/// }
/// assert_eq!(key::<BigInt>(7), 7_i64);
/// assert_eq!(key::<(Text, BigInt)>(("acme", 7)), ("acme".to_owned(), 7));
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a key (or a part of a composite key) of SQL type `{ST}`",
    label = "not a key of SQL type `{ST}`",
    note = "a key is its value or what converts into it (`i64`, `i32`.. for BigInt, `String`, `&str`.. for Text, `Vec<u8>`, `&[u8]` for Binary), and a composite key a tuple of such, in the key's column order"
)]
pub trait IntoKey<ST: KeyType> {
    /// The key's value.
    fn into_key(self) -> ST::Value;
}

macro_rules! single_column_keys {
    ($($sql:ty => $value:ty: [$($given:ty),+]),+ $(,)?) => {$(
        impl $crate::__private::KeyType for $sql {
            type Value = $value;
            const COLUMNS: usize = 1;
        }

        $(
            impl<'k> $crate::__private::IntoKey<$sql> for $given {
                fn into_key(self) -> $value {
                    self.into()
                }
            }
        )+

        impl<DB> $crate::__private::BindKey<DB> for $sql
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

// Each key type with what its users write for it: the value, and what converts into it without
// loss. Listed rather than any `Into` of the value, so that a key that does not fit is told in
// the words of `IntoKey`, naming the key's SQL type.
single_column_keys!(
    BigInt => i64: [i64, i32, i16, i8, u32, u16, u8],
    Integer => i32: [i32, i16, i8, u16, u8],
    SmallInt => i16: [i16, i8, u8],
    Text => String: [String, &'k str, &'k String, Box<str>, std::borrow::Cow<'k, str>],
    Binary => Vec<u8>: [Vec<u8>, &'k [u8]],
);

/// A composite key: a tuple of key types, its value the tuple of their values.
macro_rules! composite_keys {
    ($(($($part:ident $given:ident),+)),+ $(,)?) => {$(
        impl<$($part: KeyType),+> KeyType for ($($part,)+) {
            type Value = ($($part::Value,)+);
            const COLUMNS: usize = 0 $(+ $part::COLUMNS)+;
        }

        #[allow(non_snake_case)]
        impl<$($part: KeyType, $given: IntoKey<$part>),+> IntoKey<($($part,)+)> for ($($given,)+) {
            fn into_key(self) -> ($($part::Value,)+) {
                let ($($given,)+) = self;
                ($($given.into_key(),)+)
            }
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

composite_keys!((A GA, B GB), (A GA, B GB, C GC), (A GA, B GB, C GC, D GD));
