//! Where a batch claim starts: at the head of the caller's order (one statement), or after the
//! last key claimed through a cursor, in key order, wrapping to the head in the same call when
//! it reaches the end of the queue.

use crate::query::cursor::ClaimCursor;
use crate::sql::{After, CallerOrder, Ordered};
use crate::{ClaimLease, Error};

/// The rows a batch's statement won: each with its key and fence.
type Won<Row, K> = Vec<(Row, K, Option<i64>)>;

/// A batch claim in key order from a cursor: what
/// [`ClaimBatch::from_cursor`](crate::ClaimBatch::from_cursor) puts in the claim's order.
///
/// ```
/// let _from = diesel_lease::__private::FromCursor::new(diesel_lease::ClaimCursor::<i64>::new());
/// ```
#[derive(Debug, Clone)]
pub struct FromCursor<K>(ClaimCursor<K>);

impl<K> FromCursor<K> {
    /// A claim from `cursor`'s position.
    ///
    /// ```
    /// let _from = diesel_lease::__private::FromCursor::new(diesel_lease::ClaimCursor::<i64>::new());
    /// ```
    pub fn new(cursor: ClaimCursor<K>) -> Self {
        Self(cursor)
    }
}

/// How a batch's order runs its claim: `run` is one statement, given its filter, its order, the
/// caller's changes and selection, and how many rows it may claim.
///
/// ```
/// fn starts<T: diesel_lease::ClaimLease, F, P, O: diesel_lease::__private::StartsBatch<T, F, P>>() {}
/// ```
#[diagnostic::on_unimplemented(
    message = "a batch claim cannot start from `{Self}`",
    note = "a batch claim takes the caller's `.order_by(..)`, or `.from_cursor(..)`, not both"
)]
pub trait StartsBatch<T: ClaimLease, F, Parts> {
    /// The filter of each statement.
    type Filter;
    /// The order of each statement.
    type Order;

    /// Runs the claim's statements; the rows they won.
    fn claim<Row, Run>(
        self,
        table: T,
        filter: F,
        parts: Parts,
        limit: i64,
        run: Run,
    ) -> Result<Won<Row, T::Key>, Error>
    where
        Run: FnMut(Self::Filter, Self::Order, Parts, i64) -> Result<Won<Row, T::Key>, Error>;
}

/// The caller's order, or none: one statement.
impl<T: ClaimLease, F, Parts, O: CallerOrder> StartsBatch<T, F, Parts> for O {
    type Filter = F;
    type Order = O;

    fn claim<Row, Run>(
        self,
        _: T,
        filter: F,
        parts: Parts,
        limit: i64,
        mut run: Run,
    ) -> Result<Won<Row, T::Key>, Error>
    where
        Run: FnMut(F, O, Parts, i64) -> Result<Won<Row, T::Key>, Error>,
    {
        run(filter, self, parts, limit)
    }
}

/// From the cursor in key order: one statement when it finds as many rows as it asks for; when
/// it finds fewer (the end of the queue), a second from the head for the rest, so that a pass
/// over the queue ends in the call that reached its end. The cursor then stands after the
/// greatest key the last statement claimed, or at the head if that statement found fewer rows
/// than it asked for.
impl<T, F, Parts> StartsBatch<T, F, Parts> for FromCursor<T::Key>
where
    T: ClaimLease,
    T::Key: Ord,
    F: Clone,
    Parts: Clone,
{
    type Filter = After<F, T::PrimaryKey, T::KeySqlType>;
    type Order = Ordered<T::PrimaryKey>;

    fn claim<Row, Run>(
        self,
        table: T,
        filter: F,
        parts: Parts,
        limit: i64,
        mut run: Run,
    ) -> Result<Won<Row, T::Key>, Error>
    where
        Run: FnMut(Self::Filter, Self::Order, Parts, i64) -> Result<Won<Row, T::Key>, Error>,
    {
        let cursor = self.0;
        let start = cursor.start(T::__sql_name())?;
        let statement = |after: Option<T::Key>, limit: i64, run: &mut Run| -> Result<_, Error> {
            let won = run(
                After::new(filter.clone(), table.primary_key(), after),
                Ordered::new(table.primary_key()),
                parts.clone(),
                limit,
            )?;
            // As many rows as asked: the queue goes on past the greatest of them.
            let ended = match i64::try_from(won.len()) {
                Ok(found) if found >= limit => won.iter().map(|(_, key, _)| key).max().cloned(),
                _ => None,
            };
            Ok((won, ended))
        };
        let from_head = start.after.is_none();
        let (mut won, ended) = statement(start.after.clone(), limit, &mut run)?;
        if from_head || ended.is_some() {
            cursor.moved(start, from_head, ended);
            return Ok(won);
        }
        // Fewer rows than asked, so `rest` is at least one.
        let rest = i64::try_from(won.len()).map_or(0, |found| limit - found);
        if rest < 1 {
            return Ok(won);
        }
        let (more, ended) = statement(None, rest, &mut run)?;
        won.extend(more);
        cursor.moved(start, true, ended);
        Ok(won)
    }
}
