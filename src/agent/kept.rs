//! A turn whose two locks a keeper keeps alive.
use diesel::r2d2::R2D2Connection;

use super::schema::{conversations, user_settings};
use super::{AgentLocks, Error, TurnRef};
use crate::{Claim, Keeper, KeepsRows, Kept};

/// A turn whose conversation and user locks a [`Keeper`] renews: made by [`AgentLocks::keep`].
///
/// A turn longer than the TTL keeps its locks this way instead of acquiring again; before each
/// round of the turn (each tool call, each message sent), [`check`](Self::check) says at once,
/// without a statement, whether both locks are still the turn's.
///
/// ```
/// # include!("../doctest_setup.rs");
/// use diesel_lease::agent::{AgentLocks, TurnRef};
/// use diesel_lease::{Keeper, KeeperSettings, Lease};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let pool = agent_pool()?;
/// let ttl = Lease::from_secs(120)?;
/// let keeper = Keeper::start(pool.clone(), KeeperSettings::new(ttl))?;
/// let locks = AgentLocks::new("node-a", ttl)?;
/// let turn = TurnRef::new("turn-1")?;
/// locks.acquire(&mut pool.get()?, "chat-1", "user-1", &turn)?;
/// let kept = locks.keep(&keeper, "chat-1", "user-1", &turn)?;
/// kept.check()?; // before each round of the turn
/// assert!(kept.release()?);
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct KeptTurn {
    chat: Kept<String>,
    user: Kept<String>,
}

impl AgentLocks {
    /// Hands both locks of `turn` to `keeper`, which renews them until the turn releases them
    /// or loses one. The keeper must keep leases of this TTL (else [`crate::Error::InvalidLease`]);
    /// the locks must be `turn`'s already (an [`acquire`](Self::acquire)): the keeper renews them
    /// once before this returns, and a lock that is not the turn's is [`Error::TurnLost`].
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
        C::Backend: KeepsAgentLocks<C>,
    {
        if keeper.lease() != self.ttl() {
            return Err(crate::Error::InvalidLease(format!(
                "the keeper keeps leases of {:?}, the turn's locks have a TTL of {:?}",
                keeper.lease().as_duration(),
                self.ttl().as_duration()
            ))
            .into());
        }
        let claim = Claim::with_token(self.node(), turn.as_str())?;
        let chat = vec![super::locks::checked_id(conversation)?.to_owned()];
        let user = vec![super::locks::checked_id(user)?.to_owned()];
        let kept = KeptTurn {
            chat: keeper.keep(conversations::table, claim.clone(), chat)?,
            user: keeper.keep(user_settings::table, claim, user)?,
        };
        // The first renewals ran: a turn that does not hold both locks learns it here.
        kept.check()?;
        Ok(kept)
    }
}

/// A backend on which a keeper can keep the agent's locks: every backend the library supports.
///
/// ```
/// # #[cfg(feature = "sqlite")] {
/// fn keeps<DB: diesel_lease::agent::KeepsAgentLocks<diesel::SqliteConnection>>() {}
/// keeps::<diesel::sqlite::Sqlite>();
/// # }
/// ```
pub trait KeepsAgentLocks<C>:
    KeepsRows<C, conversations::table, String> + KeepsRows<C, user_settings::table, String>
{
}

impl<C, DB> KeepsAgentLocks<C> for DB where
    DB: KeepsRows<C, conversations::table, String> + KeepsRows<C, user_settings::table, String>
{
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
    /// turn's reference; true when it still held both.
    ///
    /// See [`KeptTurn`] for an example.
    pub fn release(self) -> Result<bool, Error> {
        let chat = self.chat.release()?;
        let user = self.user.release()?;
        Ok(!chat.is_empty() && !user.is_empty())
    }
}
