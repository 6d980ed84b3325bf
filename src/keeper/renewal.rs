//! One statement renews every claim a keeper keeps on one table: the rows are named by their
//! (key, token) pairs, so each claim's rows are renewed under its own token and no other.
use diesel::backend::Backend;
use diesel::connection::Connection;
use diesel::expression::{is_aggregate, AppearsOnTable, Expression, ValidGrouping};
use diesel::query_builder::{AstPass, QueryFragment, QueryId};
use diesel::serialize::ToSql;
use diesel::sql_types::{Bool, HasSqlType, Text};
use diesel::{Column, QueryResult, Table};

use crate::release_rows::walk_membership;
use crate::strategy::NoLock;
use crate::{ClaimLease, Error, Renewed, SelectWhere, Update, Where};

/// The key and token columns of `T`, as a renewal reads them back.
#[doc(hidden)]
pub type KeyAndToken<T> = (<T as Table>::PrimaryKey, <T as ClaimLease>::ClaimToken);

/// The rows of `T` that these claims hold, pair by pair.
type HeldByPairs<T, K> = PairsIn<<T as Table>::PrimaryKey, <T as ClaimLease>::ClaimToken, K>;

/// The `UPDATE` that renews every kept claim on `T` at once.
#[doc(hidden)]
pub type Renewal<T, K> = Update<T, Where<HeldByPairs<T, K>>, Renewed<T>>;

/// How MySQL/MariaDB learn which rows a renewal changed: they read them back by their pairs.
#[doc(hidden)]
pub type ReadRenewed<T, K> = SelectWhere<T, KeyAndToken<T>, HeldByPairs<T, K>, NoLock>;

/// A row a renewal changed: its key, and the token that holds it.
pub(crate) type RenewedRow<K> = (K, Option<String>);

/// Renews the rows named by `pairs` (a key, and the token of the claim that should hold it), in
/// one `UPDATE` of `table`; gives back the rows it changed, with their tokens.
pub(crate) fn renew_together<T, K, C>(
    table: T,
    pairs: Vec<(K, String)>,
    conn: &mut C,
) -> Result<Vec<RenewedRow<K>>, Error>
where
    T: ClaimLease,
    T::PrimaryKey: Column,
    K: Clone,
    C: Connection,
    C::Backend: RenewsRows<Renewal<T, K>, KeyAndToken<T>, ReadRenewed<T, K>, C, RenewedRow<K>>,
{
    if pairs.is_empty() {
        return Ok(Vec::new());
    }
    let held = |pairs| PairsIn {
        key: table.primary_key(),
        token: T::ClaimToken::default(),
        pairs,
    };
    let key_and_token = || (table.primary_key(), T::ClaimToken::default());
    let read_back = SelectWhere::new(table, key_and_token(), held(pairs.clone()));
    let statement = Update::new(table, Where::new(held(pairs)), table.renewed());
    Ok(C::Backend::renewed(
        statement,
        key_and_token(),
        read_back,
        conn,
    )?)
}

/// How a backend runs a renewal and learns which rows it changed: `RETURNING`, or (MySQL/MariaDB)
/// a plain read of the same pairs right after, which finds exactly the rows renewed: a renewal
/// changes no key or token, and no other claim can put its token on a row of the pairs.
///
/// ```
/// # include!("../doctest_setup.rs");
/// # #[cfg(feature = "sqlite")]
/// fn renews<U, K, R, C, Row>()
/// where
///     diesel::sqlite::Sqlite: diesel_lease::RenewsRows<U, K, R, C, Row>,
/// {
/// }
/// # fn main() {}
/// ```
pub trait RenewsRows<Statement, KeyAndToken, ReadBack, C, Row>: Backend {
    /// Runs `statement` and gives back the key and token of each row it changed.
    #[doc(hidden)]
    fn renewed(
        statement: Statement,
        key_and_token: KeyAndToken,
        read_back: ReadBack,
        conn: &mut C,
    ) -> QueryResult<Vec<Row>>;
}

/// How a backend writes a list of row values after `IN`.
///
/// ```
/// use diesel_lease::ListsRowValues;
///
/// # #[cfg(feature = "sqlite")]
/// assert_eq!(<diesel::sqlite::Sqlite as ListsRowValues>::ROW_LIST_OPEN, "(VALUES ");
/// ```
pub trait ListsRowValues: Backend {
    /// What opens the list: `(VALUES ` on PostgreSQL and SQLite (which takes row values only
    /// from a subquery), `(` on MySQL/MariaDB (whose MySQL side spells `VALUES` differently).
    const ROW_LIST_OPEN: &'static str;
}

/// `(key, token) IN ((?, ?), ..)`, the pairs padded and split as [`KeyIn`](crate::KeyIn)'s keys
/// are: a few fixed SQL lengths, and no list long enough for MariaDB to scan with.
#[doc(hidden)]
#[derive(Debug, Clone)]
pub struct PairsIn<Key, Token, K> {
    key: Key,
    token: Token,
    pairs: Vec<(K, String)>,
}

impl<Key, Token, K> Expression for PairsIn<Key, Token, K> {
    type SqlType = Bool;
}

impl<Key, Token, K, QS> AppearsOnTable<QS> for PairsIn<Key, Token, K>
where
    Key: AppearsOnTable<QS>,
    Token: AppearsOnTable<QS>,
{
}

impl<Key, Token, K, GroupBy> ValidGrouping<GroupBy> for PairsIn<Key, Token, K> {
    type IsAggregate = is_aggregate::Never;
}

/// Cached by its SQL text, which the padded length of its list fixes.
impl<Key, Token, K> QueryId for PairsIn<Key, Token, K> {
    type QueryId = ();
    const HAS_STATIC_QUERY_ID: bool = false;
}

impl<Key, Token, K, DB> QueryFragment<DB> for PairsIn<Key, Token, K>
where
    DB: ListsRowValues + HasSqlType<Key::SqlType>,
    Key: Expression + QueryFragment<DB>,
    Token: QueryFragment<DB>,
    K: ToSql<Key::SqlType, DB>,
    String: ToSql<Text, DB>,
{
    fn walk_ast<'b>(&'b self, out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        walk_membership(
            &self.pairs,
            out,
            |(key, token), mut out| {
                out.push_sql("(");
                self.key.walk_ast(out.reborrow())?;
                out.push_sql(" = ");
                out.push_bind_param::<Key::SqlType, K>(key)?;
                out.push_sql(") AND (");
                self.token.walk_ast(out.reborrow())?;
                out.push_sql(" = ");
                out.push_bind_param::<Text, String>(token)?;
                out.push_sql(")");
                Ok(())
            },
            |pairs, mut out| {
                out.push_sql("(");
                self.key.walk_ast(out.reborrow())?;
                out.push_sql(", ");
                self.token.walk_ast(out.reborrow())?;
                out.push_sql(") IN ");
                out.push_sql(DB::ROW_LIST_OPEN);
                for (index, (key, token)) in pairs.iter().enumerate() {
                    out.push_sql(if index > 0 { ", (" } else { "(" });
                    out.push_bind_param::<Key::SqlType, K>(key)?;
                    out.push_sql(", ");
                    out.push_bind_param::<Text, String>(token)?;
                    out.push_sql(")");
                }
                out.push_sql(")");
                Ok(())
            },
        )
    }
}
