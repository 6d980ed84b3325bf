use super::Holder;

/// Everything that can go wrong with the agent locks.
///
/// A refusal names the holder; an `Invalid*` error, of this type or of the lease layer's
/// ([`Error::Lease`]), means that nothing was written.
///
/// ```
/// use diesel_lease_agent::{AgentLocks, Error};
/// use diesel_lease::Lease;
///
/// let refused = AgentLocks::new("", Lease::from_secs(60)?);
/// assert!(matches!(refused, Err(Error::Lease(diesel_lease::Error::InvalidOwner(_)))));
/// # Ok::<(), Error>(())
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The lease layer's error: the database, the pool, or an invalid owner, token or lease.
    #[error(transparent)]
    Lease(#[from] diesel_lease::Error),
    /// Bringing the agent tables up to date failed; the source is the migration's own error.
    #[error("migration error: {0}")]
    Migration(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// The COMMIT of a transaction failed, so whether it took effect is unknown.
    ///
    /// An [`acquire`](super::AgentLocks::acquire) may simply be retried with the same turn on the
    /// same node: it succeeds if the first one did. After a release, ask [`held`](super::AgentLocks::held)
    /// whether the locks are still the turn's.
    #[error("the commit failed and its outcome is unknown: {0}")]
    OutcomeUnknown(diesel::result::Error),
    /// A kept turn lost a lock: another turn took it over, an operator freed it, or the keeper
    /// could not renew it in time. Stop the turn.
    #[error("the turn lost its lock: {0}")]
    TurnLost(diesel_lease::LeaseLost<String>),
    /// A conversation or user id is empty, too long or holds control characters.
    #[error("invalid id: {0}")]
    InvalidId(String),
    /// A lock changed hands again and again while being acquired; trying again is safe.
    #[error("contended: {0}")]
    Contended(String),
    /// A click would hold the user's lock longer than a turn's lease.
    #[error("the hold ({hold:?}) is longer than the lease ({lease:?})")]
    HoldExceedsLease {
        /// How long the click asked to block turns.
        hold: std::time::Duration,
        /// The lease of a turn's locks.
        lease: std::time::Duration,
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
    /// Another turn holds the conversation's lock, or the same turn on another node (its
    /// [`Holder::owner`] says which).
    #[error("conversation busy: {0}")]
    ConversationBusy(Holder),
    /// Another turn of the same user is running, in another conversation, or on another node.
    #[error("a turn is in flight for this user: {0}")]
    TurnInFlight(Holder),
    /// A confirmation click of the same user holds the user's lock: another click, or the same
    /// click on another node.
    #[error("a click is in flight for this user: {0}")]
    ClickInFlight(Holder),
}

diesel_lease::__lease_errors_convert_into!(Error);
