//! Finishing or releasing the rows a claim holds, together, in one guarded `UPDATE`.
use diesel::backend::Backend;
use diesel::connection::Connection;
use diesel::expression::{is_aggregate, AppearsOnTable, Expression, ValidGrouping};
use diesel::query_builder::{AsChangeset, AstPass, QueryFragment, QueryId};
use diesel::serialize::ToSql;
use diesel::sql_types::{Bool, HasSqlType};
use diesel::{Column, QueryResult, Table};

use crate::strategy::{held_by_token, Both, ForUpdate, HeldByToken, NoChanges, ReleasesRows};
use crate::{Claim, ClaimLease, Error, Released, SelectWhere, Update, Where};

type HeldRows<T, K> = Both<KeyIn<<T as Table>::PrimaryKey, K>, HeldByToken<T>>;

/// An `UPDATE` of the rows with the given keys that a claim still holds.
#[doc(hidden)]
pub type GuardedUpdate<T, K, Changes> = Update<T, Where<HeldRows<T, K>>, Changes>;

/// The `UPDATE` a [`ReleaseRows`] runs.
#[doc(hidden)]
pub type ReleaseStatement<T, K, Changes> = GuardedUpdate<T, K, (Changes, Released<T>)>;

/// How MySQL/MariaDB learn which rows a release will change: they lock them first.
#[doc(hidden)]
pub type LockHeldRows<T, K> = SelectWhere<T, <T as Table>::PrimaryKey, HeldRows<T, K>, ForUpdate>;

/// A release of rows a claim holds, named by their keys: built by [`ClaimLease::release_rows`],
/// run by [`run`](Self::run).
///
/// Every row named that the claim still holds is released (owner, token and `claimed_at` set to
/// `NULL`) and gets the caller's [`set`](Self::set), all in one `UPDATE` guarded by the claim's
/// token; rows the claim no longer holds are left alone. It says which rows it changed, so a
/// queue that claimed 100 jobs finishes them in one statement and learns which it had lost.
///
/// ```
/// # include!("doctest_setup.rs");
/// use diesel::prelude::*;
/// use diesel_lease::prelude::*;
///
/// # fn main() -> Result<(), diesel_lease::Error> {
/// # let conn = &mut jobs_connection()?;
/// let batch: Batch<i64> = jobs::table
///     .claim_batch(10, Lease::from_secs(30)?)
///     .returning(jobs::id)
///     .by("worker-1", conn)?;
/// let finished = jobs::table
///     .release_rows(batch.claim(), batch.rows().to_vec())
///     .set(jobs::status.eq("done"))
///     .run(conn)?;
/// assert_eq!(finished, [1]);
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
#[must_use = "a release does nothing until it is run"]
pub struct ReleaseRows<T, K, Changes> {
    table: T,
    claim: Claim,
    keys: Vec<K>,
    changes: Changes,
}

impl<T: ClaimLease, K> ReleaseRows<T, K, NoChanges<T>> {
    pub(crate) fn new(table: T, claim: &Claim, keys: Vec<K>) -> Self {
        Self {
            table,
            claim: claim.clone(),
            keys,
            changes: NoChanges::default(),
        }
    }
}

impl<T: ClaimLease, K, Changes> ReleaseRows<T, K, Changes> {
    /// The caller's own changes (a final status, a result), set on the released rows by the
    /// same statement.
    /// They read each row as it was before the release, on every backend.
    ///
    /// ```
    /// # include!("doctest_setup.rs");
    /// # use diesel::prelude::*;
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let stranger = Claim::new("worker-9")?;
    /// let released = jobs::table.release_rows(&stranger, vec![1_i64]).set(jobs::status.eq("done")).run(conn)?;
    /// assert!(released.is_empty(), "a claim that holds nothing changes nothing");
    /// # Ok(())
    /// # }
    /// ```
    pub fn set<C: AsChangeset<Target = T>>(self, changes: C) -> ReleaseRows<T, K, C> {
        ReleaseRows {
            table: self.table,
            claim: self.claim,
            keys: self.keys,
            changes,
        }
    }

    /// Runs the release: the keys of the rows it changed, those the claim still held.
    ///
    /// ```
    /// # include!("doctest_setup.rs");
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let batch: Batch<i64> = jobs::table.claim_batch(10, Lease::from_secs(30)?).returning(jobs::id).by("w", conn)?;
    /// assert_eq!(jobs::table.release_rows(batch.claim(), vec![1_i64, 2]).run(conn)?, [1]);
    /// assert!(jobs::table.release_rows(batch.claim(), vec![1_i64]).run(conn)?.is_empty(), "released already");
    /// # Ok(())
    /// # }
    /// ```
    pub fn run<'q, C>(self, conn: &mut C) -> Result<Vec<K>, Error>
    where
        C: Connection,
        Changes: AsChangeset<Target = T>,
        T::PrimaryKey: Column,
        K: Clone,
        C::Backend: ReleasesRows<
            'q,
            ReleaseStatement<T, K, Changes>,
            T::PrimaryKey,
            LockHeldRows<T, K>,
            C,
            K,
        >,
    {
        // The caller's changes first, reading the row as it was (see `ClaimRow::by`).
        let changes = (self.changes, self.table.released());
        let released = guarded_update(self.table, &self.claim, self.keys, changes, conn)?;
        crate::events::released::<T>(&self.claim, released.len());
        Ok(released)
    }
}

/// Runs `changes` on the rows with `keys` that `claim` still holds, in one `UPDATE`, and gives
/// back the keys of the rows it changed: a release, a renewal.
pub(crate) fn guarded_update<'q, T, K, Changes, C>(
    table: T,
    claim: &Claim,
    keys: Vec<K>,
    changes: Changes,
    conn: &mut C,
) -> Result<Vec<K>, Error>
where
    T: ClaimLease,
    T::PrimaryKey: Column,
    K: Clone,
    Changes: AsChangeset<Target = T>,
    C: Connection,
    C::Backend:
        ReleasesRows<'q, GuardedUpdate<T, K, Changes>, T::PrimaryKey, LockHeldRows<T, K>, C, K>,
{
    if keys.is_empty() {
        return Ok(Vec::new());
    }
    let held = |keys| {
        Both::new(
            KeyIn::new(table.primary_key(), keys),
            held_by_token::<T>(claim),
        )
    };
    let only = match keys.as_slice() {
        [key] => Some(key.clone()),
        _ => None,
    };
    let locking = SelectWhere::new(table, table.primary_key(), held(keys.clone()));
    let statement = Update::new(table, Where::new(held(keys)), changes);
    Ok(C::Backend::released(
        statement,
        table.primary_key(),
        locking,
        only,
        conn,
    )?)
}

/// `key IN (?, ?, ..)` over a single-column primary key, in lists of at most 512 keys joined by
/// `OR`. The keys are padded to a power of two by repeating the last (the same set of rows), so
/// that the SQL comes in a few fixed lengths, each prepared once per connection and found again
/// by its text.
#[doc(hidden)]
#[derive(Debug, Clone)]
pub struct KeyIn<Key, K> {
    column: Key,
    keys: Vec<K>,
}

impl<Key, K> KeyIn<Key, K> {
    pub(crate) fn new(column: Key, keys: Vec<K>) -> Self {
        Self { column, keys }
    }
}

impl<Key: Expression, K> Expression for KeyIn<Key, K> {
    type SqlType = Bool;
}

impl<Key: AppearsOnTable<QS>, K, QS> AppearsOnTable<QS> for KeyIn<Key, K> where Self: Expression {}

impl<Key, K, GroupBy> ValidGrouping<GroupBy> for KeyIn<Key, K> {
    type IsAggregate = is_aggregate::Never;
}

/// Cached by its SQL text, which the padded length of its list fixes.
impl<Key, K> QueryId for KeyIn<Key, K> {
    type QueryId = ();
    const HAS_STATIC_QUERY_ID: bool = false;
}

impl<Key, K, DB> QueryFragment<DB> for KeyIn<Key, K>
where
    DB: Backend + HasSqlType<Key::SqlType>,
    Key: Expression + QueryFragment<DB>,
    K: ToSql<Key::SqlType, DB>,
{
    fn walk_ast<'b>(&'b self, out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        walk_membership(
            &self.keys,
            out,
            |key, mut out| {
                self.column.walk_ast(out.reborrow())?;
                out.push_sql(" = ");
                out.push_bind_param::<Key::SqlType, K>(key)
            },
            |keys, mut out| {
                self.column.walk_ast(out.reborrow())?;
                out.push_sql(" IN (");
                for (index, key) in keys.iter().enumerate() {
                    if index > 0 {
                        out.push_sql(", ");
                    }
                    out.push_bind_param::<Key::SqlType, K>(*key)?;
                }
                out.push_sql(")");
                Ok(())
            },
        )
    }
}

/// Writes whether a row is among `values`: never for none; `one`, an equality (the plainest plan
/// on every server, where MariaDB scans the whole index for a row-value list of one), for a
/// single value; otherwise `list` for each of [`padded_lists`], joined by `OR`. Parenthesised.
pub(crate) fn walk_membership<'b, T, DB: Backend>(
    values: &'b [T],
    mut out: AstPass<'_, 'b, DB>,
    one: impl FnOnce(&'b T, AstPass<'_, 'b, DB>) -> QueryResult<()>,
    mut list: impl FnMut(&[&'b T], AstPass<'_, 'b, DB>) -> QueryResult<()>,
) -> QueryResult<()> {
    out.push_sql("(");
    match values {
        [] => out.push_sql("1 = 0"),
        [value] => one(value, out.reborrow())?,
        _ => {
            for (index, values) in padded_lists(values).enumerate() {
                if index > 0 {
                    out.push_sql(" OR ");
                }
                list(&values, out.reborrow())?;
            }
        }
    }
    out.push_sql(")");
    Ok(())
}

/// `values` padded to a power of two by repeating the last, in lists of at most
/// [`MOST_VALUES_IN_ONE_LIST`].
fn padded_lists<T>(values: &[T]) -> impl Iterator<Item = Vec<&T>> {
    let padded: Vec<&T> = values
        .iter()
        .chain(values.last().into_iter().cycle())
        .take(values.len().next_power_of_two())
        .collect();
    let lists: Vec<Vec<&T>> = padded
        .chunks(MOST_VALUES_IN_ONE_LIST)
        .map(<[&T]>::to_vec)
        .collect();
    lists.into_iter()
}

/// MariaDB turns an `IN` list of 1,000 values or more into a join with a derived table
/// (`in_predicate_conversion_threshold`), and a locking read then keeps every row it scanned
/// locked until the commit, not only the rows it matched: concurrent claims would pass them by.
/// Shorter lists, joined by `OR`, are evaluated row by row.
pub(crate) const MOST_VALUES_IN_ONE_LIST: usize = 512;
