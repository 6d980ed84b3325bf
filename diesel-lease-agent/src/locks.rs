//! The turn and user locks: acquiring, checking, keeping and releasing them.
use super::connection::{AgentBackend, AgentConnection, Sealed};
use super::refs::{ClickRef, Holder, HolderKind, TurnRef};
use super::transaction::{statement_failure, transaction, CommitFailure};
use super::Error;
use diesel_lease::{Age, Claim, Lease, Refusal};

/// How many times an acquire starts over when the lock changed hands between its claim and the
/// read of who holds it, or when it created the user's row.
const ATTEMPTS: usize = 3;

/// The locks of one node: a per-conversation turn lock and a per-user lock, both rows.
///
/// A turn holds its conversation's lock (one turn per chat) and its user's lock (one turn in
/// flight per user); a click on a confirmation card takes the user's lock alone, for a short hold.
/// A lock is free when empty or older than the lease by the database's clock, so a lock left by a
/// node that went down frees itself. Each lock is taken by one conditional `UPDATE`; both of a
/// turn's by one transaction, chat first, then user, so turns cannot deadlock. Nothing is held
/// between calls: no advisory lock, no open transaction, no pinned connection.
///
/// A lock is held by a reference on a node: what holds it is the turn's or click's reference
/// and this node together. The same reference from another node (a request retried there) is
/// refused, naming the node that holds it, and that node's `held`, `keep_user`, `release` and
/// `release_user` answer false and change nothing.
///
/// Call the operations outside a transaction of your own, or inside one at READ COMMITTED: under
/// PostgreSQL's REPEATABLE READ or SERIALIZABLE a lost race is a serialization error, not a
/// refusal, and an older snapshot would answer `held` and `fresh` from the past.
///
/// ```
/// # include!("doctest_setup.rs");
/// use diesel_lease_agent::{AgentLocks, TurnRef};
/// use diesel_lease_agent::Error;
/// use diesel_lease::Lease;
///
/// # fn main() -> Result<(), Error> {
/// # let conn = &mut agent_connection()?;
/// let locks = AgentLocks::new("node-a", Lease::from_secs(120)?)?;
/// let turn = TurnRef::new("turn-1")?;
/// locks.acquire(conn, "chat-1", "user-1", &turn)?;
///
/// let second = TurnRef::new("turn-2")?;
/// assert!(matches!(locks.acquire(conn, "chat-1", "user-1", &second), Err(Error::ConversationBusy(_))));
///
/// assert!(locks.held(conn, "chat-1", "user-1", &turn)?, "checked before each round of the turn");
/// assert!(locks.release(conn, "chat-1", "user-1", &turn)?);
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct AgentLocks {
    node: String,
    lease: Lease,
}

/// Why a lock transaction stopped: an error for the caller, or a reason to start over.
enum Abort {
    Failed(Error),
    /// The lock changed hands between the claim and the read of its holder.
    StartOver,
    /// The user has no settings row yet: create it, then start over.
    NoUserRow,
}

impl From<diesel::result::Error> for Abort {
    fn from(error: diesel::result::Error) -> Self {
        Abort::Failed(error.into())
    }
}

impl From<diesel_lease::Error> for Abort {
    fn from(error: diesel_lease::Error) -> Self {
        Abort::Failed(error.into())
    }
}

impl From<Error> for Abort {
    fn from(error: Error) -> Self {
        Abort::Failed(error)
    }
}

impl AgentLocks {
    /// The locks of `node` (named in `busy_owner`), with `lease` the lease of a turn's locks: how
    /// old a lock must be, by the database's clock, before another turn may take it over.
    ///
    /// ```
    /// use diesel_lease::Lease;
    /// use diesel_lease_agent::AgentLocks;
    ///
    /// let locks = AgentLocks::new("node-a", Lease::from_secs(120)?)?;
    /// assert_eq!(locks.node(), "node-a");
    /// assert!(AgentLocks::new("", Lease::from_secs(120)?).is_err());
    /// # Ok::<(), diesel_lease_agent::Error>(())
    /// ```
    pub fn new(node: &str, lease: Lease) -> Result<Self, Error> {
        Ok(Self {
            node: Claim::check_text(node)
                .map_err(diesel_lease::Error::InvalidOwner)?
                .to_owned(),
            lease,
        })
    }

    /// The node these locks are taken for.
    ///
    /// ```
    /// # let locks = diesel_lease_agent::AgentLocks::new("n1", diesel_lease::Lease::from_secs(9)?)?;
    /// assert_eq!(locks.node(), "n1");
    /// # Ok::<(), diesel_lease_agent::Error>(())
    /// ```
    pub fn node(&self) -> &str {
        &self.node
    }

    /// The lease of a turn's locks.
    ///
    /// ```
    /// # use diesel_lease::Lease;
    /// # let locks = diesel_lease_agent::AgentLocks::new("n1", Lease::from_secs(9)?)?;
    /// assert_eq!(locks.lease(), Lease::from_secs(9)?);
    /// # Ok::<(), diesel_lease_agent::Error>(())
    /// ```
    pub fn lease(&self) -> Lease {
        self.lease
    }

    /// Takes both locks for `turn`, or neither.
    ///
    /// The conversation is tried first: another turn there is [`Error::ConversationBusy`]; a turn
    /// of the same user in another chat is [`Error::TurnInFlight`]; a click of the user is
    /// [`Error::ClickInFlight`]; each names the holder. An unknown conversation is
    /// [`Error::UnknownConversation`], one of another user [`Error::ConversationOfAnotherUser`].
    /// The user's settings row is created, empty, if it is missing. Acquiring again with the same
    /// `turn` in the same conversation, on the same node, succeeds and restarts both locks'
    /// lease, so a caller that got [`Error::OutcomeUnknown`] may simply retry; the same `turn` in
    /// a second conversation is refused, and so is the same `turn` from another node (a request
    /// retried onto it): [`Error::ConversationBusy`] (or [`Error::TurnInFlight`]) whose holder
    /// names the node that runs the turn and the turn's own reference. Both nodes would otherwise
    /// run the turn.
    ///
    /// Both locks are taken in one transaction; on MySQL/MariaDB, where Diesel's `BEGIN` and
    /// `COMMIT` cost three round trips each, a turn that finds both free takes them in one
    /// multi-table `UPDATE` instead, atomic on its own, and only the other outcomes (a lock held,
    /// a missing settings row, a retry) go on to the transaction.
    ///
    /// ```
    /// # include!("doctest_setup.rs");
    /// # use diesel_lease_agent::{AgentLocks, TurnRef};
    /// # use diesel_lease_agent::Error;
    /// # use diesel_lease::Lease;
    /// # fn main() -> Result<(), Error> {
    /// # let conn = &mut agent_connection()?;
    /// let locks = AgentLocks::new("node-a", Lease::from_secs(120)?)?;
    /// locks.acquire(conn, "chat-1", "user-1", &TurnRef::new("turn-1")?)?;
    /// let refused = locks.acquire(conn, "chat-2", "user-1", &TurnRef::new("turn-2")?);
    /// let Err(Error::TurnInFlight(holder)) = refused else { panic!("{refused:?}") };
    /// assert_eq!(holder.reference, "turn-1");
    /// # Ok(())
    /// # }
    /// ```
    pub fn acquire<C: AgentConnection>(
        &self,
        conn: &mut C,
        conversation: &str,
        user: &str,
        turn: &TurnRef,
    ) -> Result<(), Error> {
        let (conversation, user) = (checked_id(conversation)?, checked_id(user)?);
        let claim = Claim::with_token(&self.node, turn.as_str())?;
        with_attempts(conn, user, |conn| {
            // Where one statement takes both, a won race needs nothing more; any other outcome
            // (a lock held, a row missing, a retry of this turn) is sorted out below.
            match C::Backend::take_both(Sealed(()), conn, conversation, user, &claim, self.lease) {
                Ok(Some(true)) => return Ok(()),
                Ok(_) => {}
                Err(error) => return Err(Abort::Failed(statement_failure(conn, error))),
            }
            transaction(conn, |conn| {
                let again = self.take_chat(conn, conversation, user, &claim)?;
                self.take_user(conn, user, &claim, Age::ZERO, again)
            })
        })
    }

    /// Takes the user's lock alone for a confirmation `click`, blocking the user's turns for `hold`.
    ///
    /// Refused with [`Error::TurnInFlight`] or [`Error::ClickInFlight`] while another holds it
    /// within the lease, so a running turn is never taken over; a click's own reference held by
    /// another node is refused too ([`Error::ClickInFlight`], naming that node), while this node
    /// taking it again restarts its hold. The lock is dated back by
    /// `lease - hold`: should it never be released, a turn takes it over `hold` after it was taken
    /// or last kept. `hold` longer than the lease is [`Error::HoldExceedsLease`].
    ///
    /// A user without a settings row gets one, with its defaults, as [`acquire`](Self::acquire)
    /// gives one: the row is the lock's own state, and a user's first act may be a click. (An
    /// unknown conversation, by contrast, is an error: conversations are the application's, and
    /// their user must be checked.)
    ///
    /// ```
    /// # include!("doctest_setup.rs");
    /// # use diesel_lease_agent::{AgentLocks, ClickRef, TurnRef};
    /// # use diesel_lease_agent::Error;
    /// # use diesel_lease::Lease;
    /// # fn main() -> Result<(), Error> {
    /// # let conn = &mut agent_connection()?;
    /// let locks = AgentLocks::new("node-a", Lease::from_secs(120)?)?;
    /// let click = ClickRef::new();
    /// locks.acquire_user(conn, "user-1", &click, Lease::from_secs(10)?)?;
    /// let turn = locks.acquire(conn, "chat-1", "user-1", &TurnRef::new("turn-1")?);
    /// assert!(matches!(turn, Err(Error::ClickInFlight(_))));
    /// assert!(locks.release_user(conn, "user-1", &click)?);
    /// # Ok(())
    /// # }
    /// ```
    pub fn acquire_user<C: AgentConnection>(
        &self,
        conn: &mut C,
        user: &str,
        click: &ClickRef,
        hold: Lease,
    ) -> Result<(), Error> {
        let user = checked_id(user)?;
        let dated_back = self.dated_back(hold)?;
        let claim = Claim::with_token(&self.node, click.as_str())?;
        with_attempts(conn, user, |conn| {
            self.take_user(conn, user, &claim, dated_back, true)
        })
    }

    /// Whether the conversation's lock is `turn`'s and younger than the lease: the turn may still
    /// run, on this node or another (unlike the other checks, it does not ask which node).
    ///
    /// ```
    /// # include!("doctest_setup.rs");
    /// # use diesel_lease_agent::{AgentLocks, TurnRef};
    /// # use diesel_lease_agent::Error;
    /// # use diesel_lease::Lease;
    /// # fn main() -> Result<(), Error> {
    /// # let conn = &mut agent_connection()?;
    /// let locks = AgentLocks::new("node-a", Lease::from_secs(120)?)?;
    /// let turn = TurnRef::new("turn-1")?;
    /// assert!(!locks.fresh(conn, "chat-1", &turn)?);
    /// locks.acquire(conn, "chat-1", "user-1", &turn)?;
    /// assert!(locks.fresh(conn, "chat-1", &turn)?);
    /// # Ok(())
    /// # }
    /// ```
    pub fn fresh<C: AgentConnection>(
        &self,
        conn: &mut C,
        conversation: &str,
        turn: &TurnRef,
    ) -> Result<bool, Error> {
        let conversation = checked_id(conversation)?;
        Ok(C::Backend::holds_fresh_chat(
            Sealed(()),
            conn,
            conversation,
            turn.as_str(),
            self.lease,
        )?)
    }

    /// Whether `turn` holds both locks on this node. A running turn checks it before each round;
    /// a turn whose lock was taken over stops there, and so does a turn whose request was retried
    /// onto this node while another node runs it.
    ///
    /// It does not ask whether the locks are younger than the lease: a lock older than the lease is
    /// still the turn's until another turn takes it over. Keep the lease above the longest turn, or
    /// acquire again (with the same turn) to restart the lease of a long one.
    ///
    /// ```
    /// # include!("doctest_setup.rs");
    /// # use diesel_lease_agent::{AgentLocks, TurnRef};
    /// # use diesel_lease_agent::Error;
    /// # use diesel_lease::Lease;
    /// # fn main() -> Result<(), Error> {
    /// # let conn = &mut agent_connection()?;
    /// let locks = AgentLocks::new("node-a", Lease::from_secs(120)?)?;
    /// let turn = TurnRef::new("turn-1")?;
    /// locks.acquire(conn, "chat-1", "user-1", &turn)?;
    /// assert!(locks.held(conn, "chat-1", "user-1", &turn)?);
    /// assert!(!locks.held(conn, "chat-1", "user-1", &TurnRef::new("turn-0")?)?);
    /// # Ok(())
    /// # }
    /// ```
    pub fn held<C: AgentConnection>(
        &self,
        conn: &mut C,
        conversation: &str,
        user: &str,
        turn: &TurnRef,
    ) -> Result<bool, Error> {
        let (conversation, user) = (checked_id(conversation)?, checked_id(user)?);
        let claim = Claim::with_token(&self.node, turn.as_str())?;
        Ok(C::Backend::holds_both(
            Sealed(()),
            conn,
            conversation,
            user,
            &claim,
        )?)
    }

    /// Dates the user's lock of `click` as if taken now (dated back by `lease - hold`), only while
    /// `click` still holds it on this node; says whether it did. A click that runs longer than its
    /// hold keeps blocking turns this way.
    ///
    /// A hold (and a turn's lease) runs from the statement's time by the database's clock, which
    /// is before its COMMIT: on a slow disk the call may return after much of the hold has gone,
    /// or all of it. Count the hold in the process from an instant taken before the call (a
    /// monotonic `Instant`), keep well within it, and stop on `false`: the hold ran out and a
    /// turn may have taken the lock over. The `agent_turns` example counts a click so.
    ///
    /// ```
    /// # include!("doctest_setup.rs");
    /// # use diesel_lease_agent::{AgentLocks, ClickRef};
    /// # use diesel_lease_agent::Error;
    /// # use diesel_lease::Lease;
    /// # fn main() -> Result<(), Error> {
    /// # let conn = &mut agent_connection()?;
    /// let locks = AgentLocks::new("node-a", Lease::from_secs(120)?)?;
    /// let (click, hold) = (ClickRef::new(), Lease::from_secs(10)?);
    /// locks.acquire_user(conn, "user-1", &click, hold)?;
    /// assert!(locks.keep_user(conn, "user-1", &click, hold)?);
    /// assert!(!locks.keep_user(conn, "user-1", &ClickRef::new(), hold)?);
    /// # Ok(())
    /// # }
    /// ```
    pub fn keep_user<C: AgentConnection>(
        &self,
        conn: &mut C,
        user: &str,
        click: &ClickRef,
        hold: Lease,
    ) -> Result<bool, Error> {
        let user = checked_id(user)?;
        let dated_back = self.dated_back(hold)?;
        let claim = Claim::with_token(&self.node, click.as_str())?;
        Ok(C::Backend::keep_user(
            Sealed(()),
            conn,
            user,
            &claim,
            dated_back,
        )?)
    }

    /// Releases both locks of `turn`, each only if `turn` still holds it on this node, so a late
    /// release never frees a newer turn's lock, nor another node's release the lock of the same
    /// turn run here. True when `turn` still held both.
    ///
    /// ```
    /// # include!("doctest_setup.rs");
    /// # use diesel_lease_agent::{AgentLocks, TurnRef};
    /// # use diesel_lease_agent::Error;
    /// # use diesel_lease::Lease;
    /// # fn main() -> Result<(), Error> {
    /// # let conn = &mut agent_connection()?;
    /// let locks = AgentLocks::new("node-a", Lease::from_secs(120)?)?;
    /// let turn = TurnRef::new("turn-1")?;
    /// locks.acquire(conn, "chat-1", "user-1", &turn)?;
    /// assert!(locks.release(conn, "chat-1", "user-1", &turn)?);
    /// assert!(!locks.release(conn, "chat-1", "user-1", &turn)?, "already released");
    /// # Ok(())
    /// # }
    /// ```
    pub fn release<C: AgentConnection>(
        &self,
        conn: &mut C,
        conversation: &str,
        user: &str,
        turn: &TurnRef,
    ) -> Result<bool, Error> {
        let (conversation, user) = (checked_id(conversation)?, checked_id(user)?);
        let claim = Claim::with_token(&self.node, turn.as_str())?;
        // Where one statement releases both, that is the usual case done; a turn that holds one
        // lock or none, or a chat not of this user, goes on to the transaction.
        match C::Backend::release_both(Sealed(()), conn, conversation, user, &claim) {
            Ok(Some(true)) => return Ok(true),
            Ok(_) => {}
            Err(error) => return Err(statement_failure(conn, error)),
        }
        transaction(conn, |conn| {
            let chat = C::Backend::release_chat(Sealed(()), conn, conversation, &claim)?;
            let user = C::Backend::release_user(Sealed(()), conn, user, &claim)?;
            Ok(chat && user)
        })
    }

    /// Releases what is left of a turn lost with its node: only while the conversation's lock is
    /// still `turn`'s and older than the lease, whichever node it was lost with (any node may
    /// sweep). True when this call released it, so of two callers at most one gets true. The
    /// user's lock goes too, if `turn` still holds it on the node named by the conversation's lock.
    ///
    /// ```
    /// # include!("doctest_setup.rs");
    /// # use diesel_lease_agent::{AgentLocks, TurnRef};
    /// # use diesel_lease_agent::Error;
    /// # use diesel_lease::Lease;
    /// # fn main() -> Result<(), Error> {
    /// # let conn = &mut agent_connection()?;
    /// let locks = AgentLocks::new("node-a", Lease::from_secs(120)?)?;
    /// let turn = TurnRef::new("turn-1")?;
    /// locks.acquire(conn, "chat-1", "user-1", &turn)?;
    /// assert!(!locks.release_stale(conn, "chat-1", "user-1", &turn)?, "not stale yet");
    /// # Ok(())
    /// # }
    /// ```
    pub fn release_stale<C: AgentConnection>(
        &self,
        conn: &mut C,
        conversation: &str,
        user: &str,
        turn: &TurnRef,
    ) -> Result<bool, Error> {
        let (conversation, user) = (checked_id(conversation)?, checked_id(user)?);
        // The lost turn's node is the one its conversation's lock names: the release is guarded
        // by it as well as by the turn, and so is the user's. Read before the transaction: on
        // SQLite a read then a write in one would have to upgrade its lock, and concurrent
        // sweepers would fail busy; a lock that changed since fails the guard, and is left.
        let owner = match C::Backend::chat_holder(Sealed(()), conn, conversation, self.lease)? {
            Some((_, Refusal::Outlived { owner, token, .. })) if token == turn.as_str() => owner,
            _ => return Ok(false),
        };
        let claim = Claim::with_token(&owner, turn.as_str())?;
        transaction(conn, |conn| {
            let stale =
                C::Backend::release_stale_chat(Sealed(()), conn, conversation, &claim, self.lease)?;
            if stale {
                C::Backend::release_user(Sealed(()), conn, user, &claim)?;
            }
            Ok(stale)
        })
    }

    /// Releases the user's lock if `click` still holds it on this node; says whether it did.
    ///
    /// ```
    /// # include!("doctest_setup.rs");
    /// # use diesel_lease_agent::{AgentLocks, ClickRef};
    /// # use diesel_lease_agent::Error;
    /// # use diesel_lease::Lease;
    /// # fn main() -> Result<(), Error> {
    /// # let conn = &mut agent_connection()?;
    /// let locks = AgentLocks::new("node-a", Lease::from_secs(120)?)?;
    /// let click = ClickRef::new();
    /// locks.acquire_user(conn, "user-1", &click, Lease::from_secs(5)?)?;
    /// assert!(locks.release_user(conn, "user-1", &click)?);
    /// # Ok(())
    /// # }
    /// ```
    pub fn release_user<C: AgentConnection>(
        &self,
        conn: &mut C,
        user: &str,
        click: &ClickRef,
    ) -> Result<bool, Error> {
        let user = checked_id(user)?;
        let claim = Claim::with_token(&self.node, click.as_str())?;
        Ok(C::Backend::release_user(Sealed(()), conn, user, &claim)?)
    }

    /// Takes the conversation's lock for `claim`; true when `claim` held it already (a retry).
    fn take_chat<C: AgentConnection>(
        &self,
        conn: &mut C,
        chat: &str,
        user: &str,
        claim: &Claim,
    ) -> Result<bool, Abort> {
        if C::Backend::claim_chat(Sealed(()), conn, chat, user, claim, self.lease)? {
            return Ok(false);
        }
        let Some((owner, holder)) = C::Backend::chat_holder(Sealed(()), conn, chat, self.lease)?
        else {
            return Err(Abort::Failed(Error::UnknownConversation(chat.to_owned())));
        };
        if owner != user {
            return Err(Abort::Failed(Error::ConversationOfAnotherUser {
                conversation: chat.to_owned(),
                user: user.to_owned(),
            }));
        }
        if held_by(&holder, claim) && C::Backend::keep_chat(Sealed(()), conn, chat, claim)? {
            return Ok(true);
        }
        Err(self.refusal(holder, Error::ConversationBusy))
    }

    /// Takes the user's lock for `claim`, dated back by `dated_back`. When `claim` holds it
    /// already, that is a retry only if `again`: a turn's retry in its own conversation, or a
    /// click; a turn reaching for the user from a second conversation is refused.
    fn take_user<C: AgentConnection>(
        &self,
        conn: &mut C,
        user: &str,
        claim: &Claim,
        dated_back: Age,
        again: bool,
    ) -> Result<(), Abort> {
        if C::Backend::claim_user(Sealed(()), conn, user, claim, self.lease, dated_back)? {
            return Ok(());
        }
        let Some(holder) = C::Backend::user_holder(Sealed(()), conn, user, self.lease)? else {
            return Err(Abort::NoUserRow);
        };
        let ours = held_by(&holder, claim);
        if ours && again && C::Backend::keep_user(Sealed(()), conn, user, claim, dated_back)? {
            return Ok(());
        }
        Err(self.refusal(holder, |holder| match holder.kind {
            HolderKind::Turn => Error::TurnInFlight(holder),
            HolderKind::Click => Error::ClickInFlight(holder),
        }))
    }

    /// The refusal by a lock whose row shows `holder`. A lock found free or outlived (it changed
    /// hands between the claim and this read) starts over instead; the database says which, by
    /// the predicate the claim used.
    fn refusal(&self, holder: Refusal, refused: impl FnOnce(Holder) -> Error) -> Abort {
        match Holder::of(holder) {
            Some(holder) => Abort::Failed(refused(holder)),
            None => Abort::StartOver,
        }
    }

    fn dated_back(&self, hold: Lease) -> Result<Age, Error> {
        self.lease.checked_sub(hold).ok_or(Error::HoldExceedsLease {
            hold: hold.as_duration(),
            lease: self.lease.as_duration(),
        })
    }
}

/// Runs `attempt` until it succeeds or fails for good, creating the user's row when it is missing.
fn with_attempts<C: AgentConnection>(
    conn: &mut C,
    user: &str,
    mut attempt: impl FnMut(&mut C) -> Result<(), Abort>,
) -> Result<(), Error> {
    for attempt_number in 1..=ATTEMPTS {
        match attempt(conn) {
            Ok(()) => return Ok(()),
            Err(Abort::Failed(error)) => return Err(error),
            Err(Abort::NoUserRow) if attempt_number < ATTEMPTS => create_user(conn, user)?,
            Err(Abort::StartOver | Abort::NoUserRow) => {}
        }
    }
    Err(Error::Contended(format!(
        "a lock of user {user:?} was found free, outlived or missing {ATTEMPTS} times in a row"
    )))
}

/// Creates the user's settings row, empty, in a statement of its own: inside the lock
/// transaction a missing row would take gap locks on MySQL/MariaDB, which deadlock two creators.
/// A concurrent creator's row is as good as ours.
fn create_user<C: AgentConnection>(conn: &mut C, user: &str) -> Result<(), Error> {
    match conn.transaction(|conn| C::Backend::create_user(Sealed(()), conn, user)) {
        Err(diesel::result::Error::DatabaseError(
            diesel::result::DatabaseErrorKind::UniqueViolation,
            _,
        ))
        | Ok(()) => Ok(()),
        Err(error) => Err(error.into()),
    }
}

pub(super) fn checked_id(id: &str) -> Result<&str, Error> {
    Claim::check_text(id).map_err(Error::InvalidId)
}

/// Whether the lock whose row shows `holder` is `claim`'s, within its lease: its reference and
/// its node. The same reference on another node is another's lock (a request retried there).
fn held_by(holder: &Refusal, claim: &Claim) -> bool {
    matches!(holder, Refusal::Held(holder)
        if holder.token == claim.token() && holder.owner == claim.owner())
}

impl CommitFailure for Abort {
    fn outcome_unknown(self) -> Self {
        match self {
            Abort::Failed(error) => Abort::Failed(error.outcome_unknown()),
            other => other,
        }
    }
}
