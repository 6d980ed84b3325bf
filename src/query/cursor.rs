//! A claimer's cursor: the key its last batch claim ended at, so that the next one starts after
//! it rather than at the queue's head, and wraps around to the head when it reaches the end.
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};

use crate::Error;

/// Where a batch claim in key order starts: after the last key claimed through this cursor,
/// or at the head of the queue. Built empty (at the head), cheap to clone; clones share one
/// position, so that workers of a process, each on its own connection, go through the queue
/// together. Given to [`ClaimBatch::from_cursor`](crate::ClaimBatch::from_cursor).
///
/// A cursor is no lease decision: it only says where a claim's search begins. Who holds a row
/// is decided by the claim's one conditional statement, by the database's clock, as without a
/// cursor. A cursor belongs to one table: used with another, a claim is
/// [`Error::InvalidCursor`], before anything is sent.
///
/// ```
/// use diesel_lease::ClaimCursor;
///
/// let cursor: ClaimCursor<i64> = ClaimCursor::new();
/// let shared = cursor.clone();
/// assert_eq!(shared.last(), None, "a new cursor starts at the head");
/// ```
pub struct ClaimCursor<K> {
    position: Arc<Mutex<Position<K>>>,
}

/// The shared state: the pass a position belongs to (a claim that read the head starts a new
/// one), the key the next claim starts after, and the table the cursor is of.
#[derive(Debug)]
struct Position<K> {
    pass: u64,
    after: Option<K>,
    table: Option<&'static str>,
}

/// What a claim read of the cursor when it started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Start<K> {
    pass: u64,
    /// The key to start after; `None`: the head.
    pub(crate) after: Option<K>,
}

impl<K> ClaimCursor<K> {
    /// A cursor at the head of the queue.
    ///
    /// ```
    /// let _cursor = diesel_lease::ClaimCursor::<String>::new();
    /// ```
    pub fn new() -> Self {
        Self {
            position: Arc::new(Mutex::new(Position {
                pass: 0,
                after: None,
                table: None,
            })),
        }
    }

    /// The key the next claim starts after, or `None` when it starts at the head.
    ///
    /// ```
    /// assert_eq!(diesel_lease::ClaimCursor::<i64>::new().last(), None);
    /// ```
    pub fn last(&self) -> Option<K>
    where
        K: Clone,
    {
        self.lock().after.clone()
    }

    // A panic elsewhere while the lock was held leaves a position that is still a valid
    // place to start: it is only ever replaced whole.
    fn lock(&self) -> std::sync::MutexGuard<'_, Position<K>> {
        self.position.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Where a claim of `table` starts; the cursor is `table`'s from its first claim on.
    pub(crate) fn start(&self, table: &'static str) -> Result<Start<K>, Error>
    where
        K: Clone,
    {
        let mut position = self.lock();
        match position.table {
            Some(of) if of != table => {
                return Err(Error::InvalidCursor(format!(
                    "the cursor goes through table `{of}`, not `{table}`"
                )))
            }
            _ => position.table = Some(table),
        }
        Ok(Start {
            pass: position.pass,
            after: position.after.clone(),
        })
    }

    /// Moves the cursor after a claim that started at `start`: `from_head` when its last
    /// statement read from the head, `ended` the greatest key that statement claimed when it
    /// found as many rows as it asked for (`None` when it found fewer: the pass is over, the
    /// next claim reads from the head). A claim that read from the head starts a new pass; one
    /// that went on from the cursor only moves it forward; a claim that started in a pass
    /// another has since ended moves nothing, so that no claim drags it back.
    pub(crate) fn moved(&self, start: Start<K>, from_head: bool, ended: Option<K>)
    where
        K: Ord,
    {
        let mut position = self.lock();
        if position.pass != start.pass {
            return;
        }
        if from_head {
            position.pass = position.pass.wrapping_add(1);
            position.after = ended;
        } else if ended > position.after {
            position.after = ended;
        }
    }
}

impl<K> Default for ClaimCursor<K> {
    fn default() -> Self {
        Self::new()
    }
}

impl<K> Clone for ClaimCursor<K> {
    fn clone(&self) -> Self {
        Self {
            position: Arc::clone(&self.position),
        }
    }
}

impl<K: fmt::Debug> fmt::Debug for ClaimCursor<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let position = self.lock();
        f.debug_struct("ClaimCursor")
            .field("after", &position.after)
            .field("table", &position.table)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_claim_that_goes_on_from_the_cursor_moves_it_forward_only() -> Result<(), Error> {
        let cursor = ClaimCursor::<i64>::new();
        let start = cursor.start("jobs")?;
        assert_eq!(start.after, None);
        cursor.moved(start, true, Some(10));
        assert_eq!(cursor.last(), Some(10));

        let (slow, fast) = (cursor.start("jobs")?, cursor.start("jobs")?);
        cursor.moved(fast, false, Some(30));
        cursor.moved(slow, false, Some(20));
        assert_eq!(
            cursor.last(),
            Some(30),
            "a slower claim does not drag it back"
        );
        Ok(())
    }

    #[test]
    fn a_claim_that_read_from_the_head_starts_a_new_pass_and_older_claims_move_nothing(
    ) -> Result<(), Error> {
        let cursor = ClaimCursor::<i64>::new();
        let first = cursor.start("jobs")?;
        cursor.moved(first, true, Some(50));
        let (late, wrapping) = (cursor.start("jobs")?, cursor.start("jobs")?);
        cursor.moved(wrapping, true, Some(5));
        assert_eq!(cursor.last(), Some(5), "wrapped to the head");
        cursor.moved(late, false, Some(60));
        assert_eq!(
            cursor.last(),
            Some(5),
            "a claim of the pass before moves nothing"
        );
        Ok(())
    }

    #[test]
    fn a_pass_that_found_fewer_rows_than_asked_sends_the_next_claim_to_the_head(
    ) -> Result<(), Error> {
        let cursor = ClaimCursor::<i64>::new();
        let start = cursor.start("jobs")?;
        cursor.moved(start, true, Some(7));
        let start = cursor.start("jobs")?;
        cursor.moved(start, true, None);
        assert_eq!(cursor.last(), None);
        Ok(())
    }

    #[test]
    fn a_cursor_goes_through_one_table_and_clones_share_it() -> Result<(), Error> {
        let cursor = ClaimCursor::<i64>::new();
        let clone = cursor.clone();
        let start = cursor.start("jobs")?;
        cursor.moved(start, true, Some(3));
        assert_eq!(clone.last(), Some(3));
        assert!(matches!(
            clone.start("emails"),
            Err(Error::InvalidCursor(_))
        ));
        assert!(clone.start("jobs").is_ok());
        Ok(())
    }
}
