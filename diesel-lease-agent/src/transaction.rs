//! The agent's transactions, and what their errors say of whether they took effect.
use diesel::connection::{Connection, TransactionManager};

use super::Error;

/// The error of a statement that changes both locks at once: on its own, it may have committed
/// before its answer was lost; in the caller's transaction, nothing has.
pub(super) fn statement_failure<C: Connection>(
    conn: &mut C,
    error: diesel::result::Error,
) -> Error {
    if in_no_transaction(conn) {
        Error::from(error).outcome_unknown()
    } else {
        error.into()
    }
}

/// An error type that can say a COMMIT failed with its outcome unknown.
pub(super) trait CommitFailure: From<diesel::result::Error> {
    fn outcome_unknown(self) -> Self;
}

impl CommitFailure for Error {
    fn outcome_unknown(self) -> Self {
        match self {
            Error::Lease(
                diesel_lease::Error::Database(error) | diesel_lease::Error::Busy(error),
            ) => Error::OutcomeUnknown(error),
            other => other,
        }
    }
}

/// Runs `body` in a transaction. An error after the body succeeded is the COMMIT's, whose
/// outcome is unknown: it becomes [`Error::OutcomeUnknown`].
pub(super) fn transaction<C: Connection, T, E: CommitFailure>(
    conn: &mut C,
    body: impl FnOnce(&mut C) -> Result<T, E>,
) -> Result<T, E> {
    let mut body_succeeded = false;
    conn.transaction(|conn| {
        let value = body(conn)?;
        body_succeeded = true;
        Ok(value)
    })
    .map_err(|error: E| {
        if body_succeeded {
            error.outcome_unknown()
        } else {
            error
        }
    })
}

/// Whether `conn` is outside any transaction of the caller's: where a statement that fails was
/// rolled back alone.
pub(super) fn in_no_transaction<C: Connection>(conn: &mut C) -> bool {
    matches!(
        C::TransactionManager::transaction_manager_status_mut(conn).transaction_depth(),
        Ok(None)
    )
}
