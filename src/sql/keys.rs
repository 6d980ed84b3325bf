//! Whether a row is among a list of keys, or of (key, token) pairs: for any primary key, composite
//! keys included, in SQL whose text is fixed by the list's padded length.
use diesel::expression::{is_aggregate, AppearsOnTable, Expression, ValidGrouping};
use diesel::expression_methods::EqAll;
use diesel::query_builder::{AstPass, QueryFragment, QueryId};
use diesel::serialize::ToSql;
use diesel::sql_types::{Bool, Text};
use diesel::{QueryResult, Table};

use crate::backend::LeaseBackend;
use crate::sql::walk_text_is;
use crate::table::TokenOf;
use crate::{BindKey, ClaimLease, KeyType};

/// The rows of a table whose primary key is among `keys`. One key is written as Diesel writes a
/// key's equality (`a = ? AND b = ?`: the plainest plan on every server, where MariaDB scans the
/// whole index for a row-value list of one); several as `key IN (?, ..)`, or
/// `(a, b) IN ((?, ?), ..)` for a composite key, padded by repeating the last (the same rows) to
/// a power of two, or past 512 to whole lists of 512 joined by `OR`, so that the SQL comes in a
/// few fixed lengths; none as `1 = 0`.
///
/// ```
/// # include!("../doctest_setup.rs");
/// # use diesel::prelude::*;
/// use diesel_lease::__private::sql::{KeysIn, NoLock, SelectWhere};
///
/// # fn main() -> Result<(), diesel_lease::Error> {
/// # let conn = &mut jobs_connection()?;
/// let jobs_1_and_2 = KeysIn::of(jobs::table, vec![1, 2]);
/// let read: SelectWhere<jobs::table, jobs::id, _, NoLock> = SelectWhere::new(jobs::table, jobs::id, jobs_1_and_2);
/// let found: Vec<i64> = read.load(conn)?;
/// assert_eq!(found, [1]);
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct KeysIn<Key, One, ST: KeyType> {
    columns: Key,
    only: Option<One>,
    keys: Vec<ST::Value>,
}

/// The [`KeysIn`] of table `T`.
pub type KeysOf<T> = KeysIn<
    <T as Table>::PrimaryKey,
    <<T as Table>::PrimaryKey as EqAll<<T as ClaimLease>::Key>>::Output,
    <T as ClaimLease>::KeySqlType,
>;

impl<Key, One, ST: KeyType> KeysIn<Key, One, ST> {
    /// The rows of `table` whose primary key is among `keys`.
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # fn main() {
    /// let _job_7 = diesel_lease::__private::sql::KeysIn::of(jobs::table, vec![7]);
    /// # }
    /// ```
    pub fn of<T>(table: T, keys: Vec<T::Key>) -> KeysOf<T>
    where
        T: ClaimLease<PrimaryKey = Key, KeySqlType = ST>,
        ST: KeyType<Value = T::Key>,
        Key: EqAll<T::Key, Output = One>,
    {
        let only = match keys.as_slice() {
            [key] => Some(table.primary_key().eq_all(key.clone())),
            _ => None,
        };
        KeysIn {
            columns: table.primary_key(),
            only,
            keys,
        }
    }
}

impl<Key, One, ST: KeyType> Expression for KeysIn<Key, One, ST> {
    type SqlType = Bool;
}

impl<Key: AppearsOnTable<QS>, One, ST: KeyType, QS> AppearsOnTable<QS> for KeysIn<Key, One, ST> {}

impl<Key, One, ST: KeyType, GroupBy> ValidGrouping<GroupBy> for KeysIn<Key, One, ST> {
    type IsAggregate = is_aggregate::Never;
}

/// Cached by its SQL text, which the padded length of its list fixes.
impl<Key, One, ST: KeyType> QueryId for KeysIn<Key, One, ST> {
    type QueryId = ();
    const HAS_STATIC_QUERY_ID: bool = false;
}

impl<Key, One, ST, DB> QueryFragment<DB> for KeysIn<Key, One, ST>
where
    DB: LeaseBackend,
    Key: QueryFragment<DB>,
    One: QueryFragment<DB>,
    ST: BindKey<DB>,
{
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        if let Some(only) = &self.only {
            out.push_sql("(");
            only.walk_ast(out.reborrow())?;
            out.push_sql(")");
            return Ok(());
        }
        walk_key_lists::<DB, ST, Key>(&self.columns, &self.keys, out)
    }
}

/// `columns IN (..)` for each of the padded lists of `keys`, joined by `OR`, parenthesised.
fn walk_key_lists<'b, DB, ST, Key>(
    columns: &'b Key,
    keys: &'b [ST::Value],
    out: AstPass<'_, 'b, DB>,
) -> QueryResult<()>
where
    DB: LeaseBackend,
    ST: BindKey<DB>,
    Key: QueryFragment<DB>,
{
    walk_lists(keys, out, |keys, mut out| {
        let composite = ST::COLUMNS > 1;
        out.push_sql("(");
        columns.walk_ast(out.reborrow())?;
        out.push_sql(") IN ");
        out.push_sql(if composite { DB::ROW_LIST_OPEN } else { "(" });
        for (index, key) in keys.iter().enumerate() {
            out.push_sql(match (index, composite) {
                (0, true) => "(",
                (_, true) => ", (",
                (0, false) => "",
                (_, false) => ", ",
            });
            ST::walk_values(key, out.reborrow())?;
            if composite {
                out.push_sql(")");
            }
        }
        out.push_sql(")");
        Ok(())
    })
}

/// The rows of a table named by (key, token) pairs: each row under the token of the claim that
/// should hold it, so that one statement renews many claims' rows, each under its own token.
/// `(a = ? AND <token is ?>)` for one pair; for several, the keys of each token as [`KeysIn`]
/// writes them, beside that token: `((<token is ?> AND (a) IN (?, ..)) OR ..)`, each token
/// compared exactly as [`TextIs`](crate::dsl::TextIs) compares it, which a server reads through
/// its primary key as one list (a list of `(a, token)` rows, on PostgreSQL, was
/// an index probe per row, or a scan of the table: 36 ms for 1,000 rows of 100,000, against 11).
///
/// ```
/// # include!("../doctest_setup.rs");
/// # fn main() {
/// let _held = diesel_lease::__private::sql::PairsIn::of(jobs::table, vec![(1, "a-token".to_owned())]);
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct PairsIn<Key, One, Token, ST: KeyType> {
    columns: Key,
    token: Token,
    only: Option<One>,
    /// The keys of each run of one token, in the order they come.
    by_token: Vec<(String, Vec<ST::Value>)>,
}

/// The [`PairsIn`] of table `T`.
pub type PairsOf<T> = PairsIn<
    <T as Table>::PrimaryKey,
    <<T as Table>::PrimaryKey as EqAll<<T as ClaimLease>::Key>>::Output,
    TokenOf<T>,
    <T as ClaimLease>::KeySqlType,
>;

impl<Key, One, Token, ST: KeyType> PairsIn<Key, One, Token, ST> {
    /// The rows of `table` named by `pairs` of a key and the token that should hold it.
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # fn main() {
    /// let _none = diesel_lease::__private::sql::PairsIn::of(jobs::table, Vec::new());
    /// # }
    /// ```
    pub fn of<T>(table: T, pairs: Vec<(T::Key, String)>) -> PairsOf<T>
    where
        T: ClaimLease<PrimaryKey = Key, KeySqlType = ST, ClaimToken = Token>,
        ST: KeyType<Value = T::Key>,
        Token: Default,
        Key: EqAll<T::Key, Output = One>,
    {
        let only = match pairs.as_slice() {
            [(key, _)] => Some(table.primary_key().eq_all(key.clone())),
            _ => None,
        };
        // A claim's pairs come together (a keeper names them claim by claim): each run of one
        // token is a group, in one pass; a token that comes again starts another group.
        let mut by_token: Vec<(String, Vec<T::Key>)> = Vec::new();
        for (key, token) in pairs {
            match by_token.last_mut() {
                Some((held_by, keys)) if *held_by == token => keys.push(key),
                _ => by_token.push((token, vec![key])),
            }
        }
        PairsIn {
            columns: table.primary_key(),
            token: Token::default(),
            only,
            by_token,
        }
    }
}

impl<Key, One, Token, ST: KeyType> Expression for PairsIn<Key, One, Token, ST> {
    type SqlType = Bool;
}

impl<Key, One, Token, ST, QS> AppearsOnTable<QS> for PairsIn<Key, One, Token, ST>
where
    Key: AppearsOnTable<QS>,
    Token: AppearsOnTable<QS>,
    ST: KeyType,
{
}

impl<Key, One, Token, ST: KeyType, GroupBy> ValidGrouping<GroupBy>
    for PairsIn<Key, One, Token, ST>
{
    type IsAggregate = is_aggregate::Never;
}

/// Cached by its SQL text, which the padded length of its list fixes.
impl<Key, One, Token, ST: KeyType> QueryId for PairsIn<Key, One, Token, ST> {
    type QueryId = ();
    const HAS_STATIC_QUERY_ID: bool = false;
}

impl<Key, One, Token, ST, DB> QueryFragment<DB> for PairsIn<Key, One, Token, ST>
where
    DB: LeaseBackend,
    Key: QueryFragment<DB>,
    One: QueryFragment<DB>,
    Token: QueryFragment<DB>,
    ST: BindKey<DB>,
    String: ToSql<Text, DB>,
{
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        if let (Some(key_is), [(token, _)]) = (&self.only, self.by_token.as_slice()) {
            out.push_sql("((");
            key_is.walk_ast(out.reborrow())?;
            out.push_sql(") AND ");
            walk_text_is(&self.token, token, out.reborrow())?;
            out.push_sql(")");
            return Ok(());
        }
        out.push_sql("(");
        if self.by_token.is_empty() {
            out.push_sql("1 = 0");
        }
        for (index, (token, keys)) in self.by_token.iter().enumerate() {
            out.push_sql(if index > 0 { " OR (" } else { "(" });
            walk_text_is(&self.token, token, out.reborrow())?;
            out.push_sql(" AND ");
            walk_key_lists::<DB, ST, Key>(&self.columns, keys, out.reborrow())?;
            out.push_sql(")");
        }
        out.push_sql(")");
        Ok(())
    }
}

/// Writes `list` for each of the padded lists of `values`, joined by `OR`, parenthesised; `1 = 0`
/// for none.
fn walk_lists<'b, V, DB: LeaseBackend>(
    values: &'b [V],
    mut out: AstPass<'_, 'b, DB>,
    mut list: impl FnMut(&[&'b V], AstPass<'_, 'b, DB>) -> QueryResult<()>,
) -> QueryResult<()> {
    out.push_sql("(");
    if values.is_empty() {
        out.push_sql("1 = 0");
    }
    for (index, values) in padded_lists(values).enumerate() {
        if index > 0 {
            out.push_sql(" OR ");
        }
        list(&values, out.reborrow())?;
    }
    out.push_sql(")");
    Ok(())
}

/// `values` padded by repeating the last, in lists of at most [`MOST_VALUES_IN_ONE_LIST`]: to a
/// power of two up to one list, to whole lists past it, so that the SQL comes in a few lengths
/// and binds fewer than 512 values more than it names (a power of two would nearly double
/// 10,000 keys, past SQLite's limit of 32,766 values for wider keys).
fn padded_lists<T>(values: &[T]) -> impl Iterator<Item = Vec<&T>> {
    let length = if values.len() <= MOST_VALUES_IN_ONE_LIST {
        values.len().next_power_of_two()
    } else {
        values.len().next_multiple_of(MOST_VALUES_IN_ONE_LIST)
    };
    let padded: Vec<&T> = values
        .iter()
        .chain(values.last().into_iter().cycle())
        .take(length)
        .collect();
    let lists: Vec<Vec<&T>> = padded
        .chunks(MOST_VALUES_IN_ONE_LIST)
        .map(<[&T]>::to_vec)
        .collect();
    lists.into_iter()
}

/// The most keys of `columns` columns that one statement binding at most `most_bound` values,
/// and naming at most `most_key_values` in its key list, names there: room is left for the token
/// and the caller's changes, and a part is whole padded lists, so that padding never takes it
/// past either limit.
pub(crate) fn most_keys_in_one_statement(
    most_bound: usize,
    most_key_values: usize,
    columns: usize,
) -> usize {
    let room = most_bound
        .saturating_sub(BOUND_BESIDE_THE_KEYS)
        .min(most_key_values)
        / columns.max(1);
    (room / MOST_VALUES_IN_ONE_LIST).max(1) * MOST_VALUES_IN_ONE_LIST
}

/// The values a holder's write binds beside its keys: the token, the lease columns' and the
/// caller's changes (a changeset of over a thousand bound values is not one we plan for).
const BOUND_BESIDE_THE_KEYS: usize = 1_024;

/// MariaDB turns an `IN` list of 1,000 values or more into a join with a derived table
/// (`in_predicate_conversion_threshold`), and a locking read then keeps every row it scanned
/// locked until the commit, not only the rows it matched: concurrent claims would pass them by.
/// Shorter lists, joined by `OR`, are evaluated row by row.
const MOST_VALUES_IN_ONE_LIST: usize = 512;

#[cfg(test)]
mod tests {
    use super::padded_lists;

    #[test]
    fn a_statement_names_as_many_keys_as_whole_lists_fit_beside_what_else_it_binds() {
        use super::most_keys_in_one_statement;
        assert_eq!(most_keys_in_one_statement(65_535, usize::MAX, 1), 64_000);
        assert_eq!(most_keys_in_one_statement(65_535, usize::MAX, 2), 31_744);
        assert_eq!(most_keys_in_one_statement(32_766, usize::MAX, 1), 31_232);
        assert_eq!(most_keys_in_one_statement(32_766, usize::MAX, 2), 15_360);
        assert_eq!(most_keys_in_one_statement(32_766, usize::MAX, 4), 7_680);
        assert_eq!(most_keys_in_one_statement(65_535, 16_384, 1), 16_384);
        assert_eq!(most_keys_in_one_statement(65_535, 16_384, 3), 5_120);
        for (most, columns) in [(65_535, 1), (65_535, 3), (32_766, 2), (32_766, 4)] {
            let keys = most_keys_in_one_statement(most, usize::MAX, columns);
            assert_eq!(keys % 512, 0, "whole lists: padding stays within the part");
            assert!(
                keys * columns + 1_024 <= most,
                "{keys} keys of {columns} columns"
            );
        }
    }

    #[test]
    fn lists_are_padded_to_a_power_of_two_up_to_512_and_to_whole_lists_of_512_past_it() {
        let lengths = |count: usize| -> Vec<usize> {
            let values: Vec<usize> = (0..count).collect();
            padded_lists(&values).map(|list| list.len()).collect()
        };
        assert_eq!(lengths(0), Vec::<usize>::new());
        assert_eq!(lengths(3), [4]);
        assert_eq!(lengths(512), [512]);
        assert_eq!(lengths(513), [512, 512]);
        assert_eq!(lengths(1_025), [512, 512, 512]);
        assert_eq!(lengths(10_000).iter().sum::<usize>(), 10_240);
        let values = [1, 2, 3];
        let padded: Vec<Vec<&i32>> = padded_lists(&values).collect();
        assert_eq!(padded, [vec![&1, &2, &3, &3]], "padded with the last value");
    }
}
