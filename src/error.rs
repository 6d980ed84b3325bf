use crate::agent::Holder;

/// Everything that can go wrong in diesel-lease.
///
/// Invalid input is rejected before anything is sent to the database, so an `Invalid*` error
/// always means that nothing was written. Database and pool errors are passed on, never panicked on.
///
/// ```
/// use diesel_lease::{Claim, Error, Lease};
///
/// assert!(matches!(Lease::from_millis(0), Err(Error::InvalidLease(_))));
/// assert!(matches!(Claim::new(""), Err(Error::InvalidOwner(_))));
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The database refused or failed a statement.
    #[error("database error: {0}")]
    Database(#[from] diesel::result::Error),
    /// A connection could not be established.
    #[error("connection error: {0}")]
    Connection(#[from] diesel::ConnectionError),
    /// The connection pool gave no connection.
    #[error("connection pool error: {0}")]
    Pool(#[from] r2d2::Error),
    /// Bringing the schema up to date failed.
    #[error("migration error: {0}")]
    Migration(String),
    /// The COMMIT of a transaction failed, so whether it took effect is unknown.
    ///
    /// An [`acquire`](crate::agent::AgentLocks::acquire) may simply be retried with the same
    /// turn: it succeeds if the first one did. After a release, ask
    /// [`held`](crate::agent::AgentLocks::held) whether the locks are still the turn's.
    #[error("the commit failed and its outcome is unknown: {0}")]
    OutcomeUnknown(diesel::result::Error),
    /// A lease or age is zero, too long or otherwise unusable.
    #[error("invalid lease: {0}")]
    InvalidLease(String),
    /// An owner (node or worker name) is empty, too long or holds control characters.
    #[error("invalid owner: {0}")]
    InvalidOwner(String),
    /// A claim token or lock reference is empty, too long or holds control characters.
    #[error("invalid claim token: {0}")]
    InvalidToken(String),
    /// A conversation or user id is empty, too long or holds control characters.
    #[error("invalid id: {0}")]
    InvalidId(String),
    /// On MySQL/MariaDB a claim's row is found by its token, and this token holds several rows:
    /// make a new [`Claim`](crate::Claim) for each row.
    #[error("the claim's token holds {0} rows, so the row it just won cannot be told apart")]
    ClaimHoldsSeveralRows(usize),
    /// A lock changed hands again and again while being acquired; trying again is safe.
    #[error("contended: {0}")]
    Contended(String),
    /// A click would hold the user's lock longer than a turn's lease.
    #[error("the hold ({hold:?}) is longer than the lease ({ttl:?})")]
    HoldExceedsTtl {
        /// How long the click asked to block turns.
        hold: std::time::Duration,
        /// The lease of a turn's locks.
        ttl: std::time::Duration,
    },
    /// No conversation has this id.
    #[error("unknown conversation {0:?}")]
    UnknownConversation(String),
    /// The conversation belongs to another user than the one named.
    #[error("conversation {conversation:?} is not a conversation of user {user:?}")]
    ConversationOfAnotherUser {
        /// The conversation's id.
        conversation: String,
        /// The user named by the caller.
        user: String,
    },
    /// Another turn holds the conversation's lock.
    #[error("conversation busy: {0}")]
    ConversationBusy(Holder),
    /// Another turn of the same user is running, in another conversation.
    #[error("a turn is in flight for this user: {0}")]
    TurnInFlight(Holder),
    /// A confirmation click of the same user holds the user's lock.
    #[error("a click is in flight for this user: {0}")]
    ClickInFlight(Holder),
}
