//! A turn whose two locks a keeper keeps alive.
use diesel::r2d2::R2D2Connection;

use super::schema::{conversations, user_settings};
use super::{AgentLocks, Error, TurnRef};
use diesel_lease::{dsl, Claim, Holds, Keepable, Keeper, Kept, LeaseDsl, LeaseQuery, RunLeaseDsl};

/// A turn whose conversation and user locks a [`Keeper`] renews: made by [`AgentLocks::keep`].
///
/// A turn longer than the lease keeps its locks this way instead of acquiring again; before each
/// round of the turn (each tool call, each message sent), [`check`](Self::check) says at once,
/// without a statement, whether both locks are still the turn's.
///
/// ```
/// # include!("doctest_setup.rs");
/// use diesel_lease_agent::{AgentLocks, TurnRef};
/// use diesel_lease::{Keeper, KeeperSettings, Lease};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let pool = agent_pool()?;
/// let lease = Lease::from_secs(120)?;
/// let keeper = Keeper::start(pool.clone(), KeeperSettings::new(lease))?;
/// let locks = AgentLocks::new("node-a", lease)?;
/// let turn = TurnRef::new("turn-1")?;
/// let conn = &mut pool.get()?;
/// locks.acquire(conn, "chat-1", "user-1", &turn)?;
/// let kept = locks.keep(&keeper, "chat-1", "user-1", &turn)?;
/// kept.check()?; // before each round of the turn
/// assert!(kept.release(conn)?, "the turn held both locks");
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct KeptTurn {
    chat: Kept<conversations::table>,
    user: Kept<user_settings::table>,
}

impl AgentLocks {
    /// Hands both locks of `turn` to `keeper`, which renews them until the turn releases them
    /// ([`KeptTurn::release`], or dropping the handle) or loses one. The keeper must
    /// keep leases of this lease (else [`diesel_lease::Error::InvalidSettings`]); the locks must be
    /// `turn`'s already (an [`acquire`](Self::acquire)): the keeper renews them once before this
    /// returns, and a lock that is not the turn's is [`Error::TurnLost`]. On an error, no lock
    /// is kept or released: the turn holds what it held.
    ///
    /// The keeper's renewals and [`KeptTurn::release`] are guarded by the turn's reference alone,
    /// as every holder write of the lease layer is: keep only a turn that this node acquired.
    ///
    /// See [`KeptTurn`] for an example.
    pub fn keep<C>(
        &self,
        keeper: &Keeper<C>,
        conversation: &str,
        user: &str,
        turn: &TurnRef,
    ) -> Result<KeptTurn, Error>
    where
        C: R2D2Connection + 'static,
        conversations::table: Keepable<C>,
        user_settings::table: Keepable<C>,
    {
        if keeper.lease() != self.lease() {
            return Err(diesel_lease::Error::InvalidSettings(format!(
                "the keeper keeps leases of {:?}, the turn's locks have a lease of {:?}",
                keeper.lease().as_duration(),
                self.lease().as_duration()
            ))
            .into());
        }
        let claim = Claim::with_token(self.node(), turn.as_str())?;
        let chat = vec![super::locks::checked_id(conversation)?.to_owned()];
        let user = vec![super::locks::checked_id(user)?.to_owned()];
        // On an error the locks are left as they were, kept no more, released by nothing: the
        // turn still holds what it held, for the caller to release or keep again.
        let chat = keeper.keep(conversations::table.held_rows(&claim, chat))?;
        let user = match keeper.keep(user_settings::table.held_rows(&claim, user)) {
            Ok(user) => user,
            Err(error) => {
                chat.stop_keeping();
                return Err(error.into());
            }
        };
        let kept = KeptTurn { chat, user };
        // The first renewals ran: a turn that does not hold both locks learns it here.
        if let Err(lost) = kept.check() {
            kept.chat.stop_keeping();
            kept.user.stop_keeping();
            return Err(lost);
        }
        Ok(kept)
    }
}

impl KeptTurn {
    /// Whether the turn still holds both locks: a cheap check, made without a statement.
    ///
    /// See [`KeptTurn`] for an example.
    pub fn is_held(&self) -> bool {
        self.chat.is_held() && self.user.is_held()
    }

    /// `Ok` while [`is_held`](Self::is_held); otherwise [`Error::TurnLost`]: stop the turn.
    ///
    /// See [`KeptTurn`] for an example.
    pub fn check(&self) -> Result<(), Error> {
        self.chat.check().map_err(Error::TurnLost)?;
        self.user.check().map_err(Error::TurnLost)
    }

    /// Stops keeping the locks and releases those the turn still holds, each guarded by the
    /// turn's reference, through `conn`; true when it still held both.
    ///
    /// See [`KeptTurn`] for an example.
    pub fn release<C>(self, conn: &mut C) -> Result<bool, Error>
    where
        dsl::Release<Kept<conversations::table>>:
            for<'q> LeaseQuery<'q, C, String, Output = Vec<String>>,
        dsl::Release<Kept<user_settings::table>>:
            for<'q> LeaseQuery<'q, C, String, Output = Vec<String>>,
    {
        let chat = self.chat.release().run(conn)?;
        let user = self.user.release().run(conn)?;
        Ok(!chat.is_empty() && !user.is_empty())
    }
}
