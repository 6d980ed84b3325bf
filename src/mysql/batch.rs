//! A batch on MySQL/MariaDB: its candidates read in the caller's order without a lock, then
//! locked through the primary key alone, skipping rows other claims hold, until it has its rows;
//! those changed by key and read back, in one short READ COMMITTED transaction.
use diesel::expression::Expression;
use diesel::expression_methods::EqAll;
use diesel::mysql::Mysql;
use diesel::query_builder::{AsChangeset, AstPass, Query, QueryFragment, QueryId};
use diesel::query_dsl::methods::ExecuteDsl;
use diesel::query_dsl::LoadQuery;
use diesel::sql_types::BigInt;
use diesel::{Connection, QueryResult, RunQueryDsl, Table};

use super::transaction::short_transaction;
use crate::backend::{read, BatchPlan, ClaimsBatch};
use crate::sql::{
    Both, CachedUpdate, KeysIn, KeysOf, NoLock, NoReturning, PrimaryKeyAccess, SelectWhere, Where,
};
use crate::ClaimLease;

/// The `UPDATE` of a batch by the keys it locked.
type KeyedUpdate<T, F, Set> =
    CachedUpdate<T, Where<Both<KeysOf<T>, F>>, Set, NoReturning, PrimaryKeyAccess>;

/// The read of the rows a batch changed, by their keys and what the change left on them.
type KeyedReadBack<T, Selection, Changed> =
    SelectWhere<T, Selection, Both<KeysOf<T>, Changed>, NoLock>;

/// How many windows of candidates past the first a batch reads when other claims hold every
/// candidate it read: bounded, so that a claim under heavy contention still ends.
const MOST_FURTHER_WINDOWS: i64 = 16;

/// Locks, of `candidates`, rows for `taken` until it has `wanted`, by rounds of `lock` (a round
/// of candidates, how many are missing: the keys it locked). The first round of the first window
/// asks for exactly the rows missing, so that an uncontended claim takes the first rows in the
/// caller's order; later rounds look at four times as many.
fn lock_some<K: Clone>(
    candidates: &[K],
    first_window: bool,
    wanted: usize,
    taken: &mut Vec<K>,
    mut lock: impl FnMut(&[K], usize) -> QueryResult<Vec<K>>,
) -> QueryResult<()> {
    let mut rest = candidates;
    while taken.len() < wanted && !rest.is_empty() {
        let missing = wanted - taken.len();
        let look = if first_window && taken.is_empty() && rest.len() == candidates.len() {
            missing
        } else {
            missing.saturating_mul(4)
        };
        let (round, later) = rest.split_at(look.min(rest.len()));
        rest = later;
        taken.extend(lock(round, missing)?);
    }
    Ok(())
}

/// How many candidates a batch of `size` reads: enough that concurrent claimers, who read the
/// same first rows, still find rows no other claim holds.
fn window(size: i64) -> i64 {
    size.saturating_mul(4).saturating_add(16)
}

/// A batch (a claim, a reap) locks only the rows it takes, whatever secondary indexes the table
/// has. A locking read through a secondary index keeps every row it scanned locked until the
/// commit, those its filter rejected too, and one that sorts locks every row that matched before
/// `LIMIT` applies: concurrent claims would find nothing to take, and holders' writes would wait.
/// So the candidates are read first, in the caller's order, without a lock; then they are locked
/// through the primary key (`FORCE INDEX (PRIMARY)`, by key list), where InnoDB releases at once
/// a row the filter rejects, skipping rows other transactions hold, and re-checking the filter on
/// each row's newest version. The first round asks for exactly the first candidates, so that an
/// uncontended claim takes the first rows in the caller's order; a round that came back short
/// looks further. The `UPDATE` then names the keys locked, so InnoDB locks rows by key alone and no
/// gap, and the rows it changed are read back by key and what it left on them (the batch's token,
/// a reap's `NULL`) before the COMMIT. The plan of neither read matters: the first locks nothing,
/// the second reaches each row through its key.
// Errors name the operation, not the bound inside it that failed.
#[diagnostic::do_not_recommend]
impl<'q, C, T, F, O, Set, Selection, Changed, Row>
    ClaimsBatch<'q, C, BatchPlan<T, F, O, Set, Selection, Changed>, Row> for Mysql
where
    C: Connection<Backend = Mysql>,
    T: ClaimLease,
    T::PrimaryKey: EqAll<T::Key>,
    F: Clone,
    O: Clone,
    Set: AsChangeset<Target = T>,
    Candidates<T, F, O>: LoadQuery<'q, C, T::Key>,
    LockKeys<KeysOf<T>, T, F>: LoadQuery<'q, C, T::Key>,
    KeyedUpdate<T, F, Set>: ExecuteDsl<C>,
    KeyedReadBack<T, Selection, Changed>: LoadQuery<'q, C, Row>,
{
    fn claim_batch(
        plan: BatchPlan<T, F, O, Set, Selection, Changed>,
        conn: &mut C,
    ) -> QueryResult<Vec<Row>> {
        let BatchPlan {
            table,
            filter,
            order,
            limit,
            set,
            selection,
            changed,
        } = plan;
        let candidates_from = |offset: i64, conn: &mut C| {
            read(
                Candidates {
                    from_clause: table.from_clause(),
                    primary_key: table.primary_key(),
                    filter: filter.clone(),
                    order: order.clone(),
                    limit: window(limit),
                    offset,
                },
                conn,
            )
        };
        // Before the transaction: a plain read, which locks nothing.
        let first: Vec<T::Key> = candidates_from(0, conn)?;
        if first.is_empty() {
            return Ok(Vec::new());
        }
        let wanted = usize::try_from(limit).unwrap_or(usize::MAX);
        short_transaction(conn, |conn| {
            let mut taken: Vec<T::Key> = Vec::with_capacity(wanted);
            let lock = |round: &[T::Key], missing: usize| LockKeys {
                from_clause: table.from_clause(),
                primary_key: table.primary_key(),
                keys: KeysIn::of(table, round.to_vec()),
                filter: filter.clone(),
                limit: i64::try_from(missing).unwrap_or(i64::MAX),
            };
            lock_some(&first, true, wanted, &mut taken, |round, missing| {
                read(lock(round, missing), &mut *conn)
            })?;
            let mut last_read = first.len();
            for further in 1..=MOST_FURTHER_WINDOWS {
                // Every candidate held by other claims (the first rows in the caller's order,
                // which concurrent claimers all read): the next rows, past all read so far, so
                // that a batch comes back empty only when no row is due and free.
                if taken.len() >= wanted || i64::try_from(last_read) != Ok(window(limit)) {
                    break;
                }
                let past = window(limit).saturating_mul(further);
                let candidates = candidates_from(past, &mut *conn)?;
                lock_some(&candidates, false, wanted, &mut taken, |round, missing| {
                    read(lock(round, missing), &mut *conn)
                })?;
                last_read = candidates.len();
            }
            if taken.is_empty() {
                return Ok(Vec::new());
            }
            let update: KeyedUpdate<T, F, Set> = CachedUpdate::by_keys(
                table,
                Where::new(Both::new(KeysIn::of(table, taken.clone()), filter.clone())),
                set,
            );
            update.execute(conn)?;
            let changed = Both::new(KeysIn::of(table, taken), changed);
            read(SelectWhere::new(table, selection, changed), conn)
        })
    }
}

/// `SELECT key FROM table WHERE .. ORDER BY .. LIMIT n OFFSET m`: a batch's candidates on MySQL/MariaDB,
/// read without a lock, named in the bounds of its batches.
///
/// ```
/// fn candidates<T: diesel::Table, F, O>(_: &diesel_lease::mysql::Candidates<T, F, O>) {}
/// ```
pub struct Candidates<T: Table, F, O> {
    from_clause: T::FromClause,
    primary_key: T::PrimaryKey,
    filter: F,
    order: O,
    limit: i64,
    offset: i64,
}

impl<T: Table, F, O> std::fmt::Debug for Candidates<T, F, O> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(std::any::type_name::<Self>())
    }
}

impl<T, F, O> QueryFragment<Mysql> for Candidates<T, F, O>
where
    T: Table,
    T::FromClause: QueryFragment<Mysql>,
    T::PrimaryKey: QueryFragment<Mysql>,
    F: QueryFragment<Mysql>,
    O: QueryFragment<Mysql>,
{
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Mysql>) -> QueryResult<()> {
        out.push_sql("SELECT ");
        self.primary_key.walk_ast(out.reborrow())?;
        out.push_sql(" FROM ");
        self.from_clause.walk_ast(out.reborrow())?;
        out.push_sql(" WHERE ");
        self.filter.walk_ast(out.reborrow())?;
        if !self.order.is_noop(out.backend())? {
            out.push_sql(" ORDER BY ");
            self.order.walk_ast(out.reborrow())?;
        }
        out.push_sql(" LIMIT ");
        out.push_bind_param::<BigInt, _>(&self.limit)?;
        out.push_sql(" OFFSET ");
        out.push_bind_param::<BigInt, _>(&self.offset)
    }
}

/// Cached by its SQL text: the caller's filter may vary it.
impl<T: Table, F, O> QueryId for Candidates<T, F, O> {
    type QueryId = ();
    const HAS_STATIC_QUERY_ID: bool = false;
}

impl<T: Table, F, O> Query for Candidates<T, F, O>
where
    T::PrimaryKey: Expression,
{
    type SqlType = <T::PrimaryKey as Expression>::SqlType;
}

impl<T: Table, F, O> diesel::query_dsl::RunQueryDslSupport for Candidates<T, F, O> {}

/// `SELECT key FROM table FORCE INDEX (PRIMARY) WHERE key IN (..) AND .. LIMIT n FOR UPDATE
/// SKIP LOCKED`: a batch's candidates locked through the primary key alone, on MySQL/MariaDB,
/// named in the bounds of its batches.
///
/// ```
/// fn locking<K, T: diesel::Table, F>(_: &diesel_lease::mysql::LockKeys<K, T, F>) {}
/// ```
pub struct LockKeys<Keys, T: Table, F> {
    from_clause: T::FromClause,
    primary_key: T::PrimaryKey,
    keys: Keys,
    filter: F,
    limit: i64,
}

impl<Keys, T: Table, F> std::fmt::Debug for LockKeys<Keys, T, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(std::any::type_name::<Self>())
    }
}

impl<Keys, T, F> QueryFragment<Mysql> for LockKeys<Keys, T, F>
where
    Keys: QueryFragment<Mysql>,
    T: Table,
    T::FromClause: QueryFragment<Mysql>,
    T::PrimaryKey: QueryFragment<Mysql>,
    F: QueryFragment<Mysql>,
{
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Mysql>) -> QueryResult<()> {
        out.push_sql("SELECT ");
        self.primary_key.walk_ast(out.reborrow())?;
        out.push_sql(" FROM ");
        self.from_clause.walk_ast(out.reborrow())?;
        // Through the primary key, a row the filter rejects is unlocked at once; through a
        // secondary index it would stay locked until the commit.
        out.push_sql(" FORCE INDEX (PRIMARY) WHERE ");
        self.keys.walk_ast(out.reborrow())?;
        out.push_sql(" AND ");
        self.filter.walk_ast(out.reborrow())?;
        out.push_sql(" LIMIT ");
        out.push_bind_param::<BigInt, _>(&self.limit)?;
        out.push_sql(" FOR UPDATE SKIP LOCKED");
        Ok(())
    }
}

/// Cached by its SQL text, which the padded length of its key list and the caller's filter fix.
impl<Keys, T: Table, F> QueryId for LockKeys<Keys, T, F> {
    type QueryId = ();
    const HAS_STATIC_QUERY_ID: bool = false;
}

impl<Keys, T: Table, F> Query for LockKeys<Keys, T, F>
where
    T::PrimaryKey: Expression,
{
    type SqlType = <T::PrimaryKey as Expression>::SqlType;
}

impl<Keys, T: Table, F> diesel::query_dsl::RunQueryDslSupport for LockKeys<Keys, T, F> {}

#[cfg(test)]
mod tests {
    use super::{lock_some, window};

    /// Locks, of each round, the even keys (the odd ones held by other claims), up to `missing`;
    /// gives back the rounds' lengths and the keys taken.
    fn lock_evens(
        first_window: bool,
        wanted: usize,
    ) -> diesel::QueryResult<(Vec<usize>, Vec<i64>)> {
        let candidates: Vec<i64> = (1..=40).collect();
        let (mut rounds, mut taken) = (Vec::new(), Vec::new());
        lock_some(
            &candidates,
            first_window,
            wanted,
            &mut taken,
            |round, missing| {
                rounds.push(round.len());
                Ok(round
                    .iter()
                    .copied()
                    .filter(|key| key % 2 == 0)
                    .take(missing)
                    .collect())
            },
        )?;
        Ok((rounds, taken))
    }

    #[test]
    fn the_first_round_asks_for_the_rows_missing_and_later_ones_look_four_times_as_far(
    ) -> diesel::QueryResult<()> {
        assert_eq!(lock_evens(true, 5)?, (vec![5, 12], vec![2, 4, 6, 8, 10]));
        assert_eq!(
            lock_evens(false, 5)?,
            (vec![20], vec![2, 4, 6, 8, 10]),
            "a further window looks four times as far from its first round"
        );
        assert_eq!(
            lock_evens(true, 30)?.1.len(),
            20,
            "a window of 40 with 20 free gives 20, and no more rounds than it has candidates"
        );
        Ok(())
    }

    #[test]
    fn a_batch_reads_four_times_its_size_and_sixteen_candidates() {
        assert_eq!(window(1), 20);
        assert_eq!(window(100), 416);
        assert_eq!(window(i64::MAX), i64::MAX);
    }
}
