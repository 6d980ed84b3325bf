//! A node's life: its name, and a boot id that tells this life's claims from an earlier one's.
use std::fmt;

use crate::claim::MAX_TEXT_CHARS;
use crate::{Claim, Error};

/// What separates a node's name from its boot id in the owner names of its claims.
const BOOT_SEPARATOR: char = '#';

/// How many hexadecimal digits of a random UUID a boot id keeps: 48 bits, so that two lives of
/// one node never share one.
const BOOT_ID_DIGITS: usize = 12;

/// One life of a node: its name (`worker-3`) and a boot id drawn when it starts, which together
/// name the owner of every claim it makes (`worker-3#5f0c2a9e41b7`). After a crash and restart
/// under the same name, the new life knows which rows its earlier lives held, and frees them at
/// once ([`LeaseDsl::held_by_earlier_lives_of`](crate::LeaseDsl::held_by_earlier_lives_of)),
/// rather than leaving them held until their lease runs out.
///
/// One process a name: two processes started under one node name at once are two lives of it,
/// and each frees what the other holds. A node's name is an owner name without `#`, and short
/// enough for the boot id to follow it.
///
/// ```
/// use diesel_lease::Node;
///
/// let node = Node::start("worker-3")?;
/// assert_eq!(node.name(), "worker-3");
/// assert!(node.owner().starts_with("worker-3#"));
/// assert_ne!(node.owner(), Node::start("worker-3")?.owner(), "each life has its own boot id");
/// assert_eq!(node.claim().owner(), node.owner());
/// assert!(Node::start("worker#3").is_err());
/// # Ok::<(), diesel_lease::Error>(())
/// ```
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Node {
    name: String,
    owner: String,
}

impl Node {
    /// A new life of the node `name`, with a boot id of its own. A name that is not a valid
    /// owner name, holds `#`, or leaves no room for the boot id is [`Error::InvalidOwner`].
    ///
    /// ```
    /// let node = diesel_lease::Node::start("node-a")?;
    /// assert_eq!(node.owner().len(), "node-a#".len() + 12);
    /// # Ok::<(), diesel_lease::Error>(())
    /// ```
    pub fn start(name: &str) -> Result<Self, Error> {
        let name = Claim::check_text(name).map_err(Error::InvalidOwner)?;
        if name.contains(BOOT_SEPARATOR) {
            return Err(Error::InvalidOwner(format!(
                "a node's name {name:?} holds {BOOT_SEPARATOR:?}, which separates it from the boot id"
            )));
        }
        let room = MAX_TEXT_CHARS - 1 - BOOT_ID_DIGITS;
        if name.chars().count() > room {
            return Err(Error::InvalidOwner(format!(
                "a node's name is longer than {room} characters, leaving no room for its boot id"
            )));
        }
        let boot = uuid::Uuid::new_v4().simple().to_string();
        let boot = boot.get(..BOOT_ID_DIGITS).unwrap_or(&boot);
        Ok(Self {
            name: name.to_owned(),
            owner: format!("{name}{BOOT_SEPARATOR}{boot}"),
        })
    }

    /// The node's name, the same in every life.
    ///
    /// ```
    /// assert_eq!(diesel_lease::Node::start("node-a")?.name(), "node-a");
    /// # Ok::<(), diesel_lease::Error>(())
    /// ```
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The owner name of this life's claims: the node's name, `#`, and the boot id.
    ///
    /// ```
    /// let node = diesel_lease::Node::start("node-a")?;
    /// assert!(node.owner().starts_with("node-a#"));
    /// # Ok::<(), diesel_lease::Error>(())
    /// ```
    pub fn owner(&self) -> &str {
        &self.owner
    }

    /// A new claim of this life: its owner name, and a fresh token.
    ///
    /// ```
    /// let node = diesel_lease::Node::start("node-a")?;
    /// let (a, b) = (node.claim(), node.claim());
    /// assert_eq!(a.owner(), b.owner());
    /// assert_ne!(a.token(), b.token());
    /// # Ok::<(), diesel_lease::Error>(())
    /// ```
    pub fn claim(&self) -> Claim {
        Claim::of_checked_owner(&self.owner)
    }

    /// Whether `owner` names an earlier life of this node: its name exactly (whatever the
    /// column's collation said), `#`, a boot id, and not this life's.
    pub(crate) fn is_earlier_life(&self, owner: &str) -> bool {
        let boot = owner
            .strip_prefix(self.name.as_str())
            .and_then(|rest| rest.strip_prefix(BOOT_SEPARATOR));
        owner != self.owner
            && boot.is_some_and(|boot| {
                boot.len() == BOOT_ID_DIGITS && boot.chars().all(|c| c.is_ascii_hexdigit())
            })
    }
}

impl fmt::Debug for Node {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Node").field(&self.owner).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::Node;

    #[test]
    fn an_earlier_life_is_the_same_name_exactly_with_another_boot_id() -> Result<(), crate::Error> {
        let node = Node::start("node-a")?;
        let earlier = Node::start("node-a")?;
        assert!(node.is_earlier_life(earlier.owner()));
        assert!(!node.is_earlier_life(node.owner()), "not this life");
        for other in [
            "node-a",
            "node-ab#0123456789ab",
            "Node-A#0123456789ab",
            "node-a#0123456789a",
            "node-a#0123456789abc",
            "node-a#0123456789az",
            "node-a#x#0123456789ab",
        ] {
            assert!(!node.is_earlier_life(other), "{other}");
        }
        Ok(())
    }
}
