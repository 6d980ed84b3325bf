//! References of turns and clicks, and what a refused caller learns of the holder.
use std::fmt;
use std::time::Duration;

use diesel_lease::Claim;
use diesel_lease::Error;

/// Every click's reference starts so; no turn's may.
const CLICK_PREFIX: &str = "click:";

/// A turn's reference: the token of both locks the turn holds.
///
/// Any non-empty text of at most 255 characters, except one that starts with `click:`, which
/// marks a [`ClickRef`], so a turn can never be mistaken for a click.
///
/// ```
/// use diesel_lease_agent::TurnRef;
///
/// let turn = TurnRef::new("turn-42")?;
/// assert_eq!(turn.as_str(), "turn-42");
/// assert!(TurnRef::new("click:7").is_err());
/// assert!(TurnRef::new("").is_err());
/// # Ok::<(), diesel_lease::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TurnRef(String);

impl TurnRef {
    /// The turn's reference `value`, or [`Error::InvalidToken`].
    ///
    /// ```
    /// assert!(diesel_lease_agent::TurnRef::new("msg-9f2").is_ok());
    /// ```
    pub fn new(value: &str) -> Result<Self, Error> {
        if value.starts_with(CLICK_PREFIX) {
            return Err(Error::InvalidToken(format!(
                "{value:?} is a click's reference, not a turn's"
            )));
        }
        Claim::check_text(value)
            .map(|value| Self(value.to_owned()))
            .map_err(Error::InvalidToken)
    }

    /// The reference as stored in `busy_turn_ref`.
    ///
    /// ```
    /// assert_eq!(diesel_lease_agent::TurnRef::new("t1")?.as_str(), "t1");
    /// # Ok::<(), diesel_lease::Error>(())
    /// ```
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A confirmation click's reference: `click:` and a UUID, told apart from any turn's.
///
/// ```
/// use diesel_lease_agent::ClickRef;
///
/// let click = ClickRef::new();
/// assert!(click.as_str().starts_with("click:"));
/// assert_eq!(ClickRef::parse(click.as_str())?, click);
/// assert!(ClickRef::parse("turn-1").is_err());
/// # Ok::<(), diesel_lease::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ClickRef(String);

impl ClickRef {
    /// A new click reference.
    ///
    /// ```
    /// assert_ne!(diesel_lease_agent::ClickRef::new(), diesel_lease_agent::ClickRef::new());
    /// ```
    #[allow(clippy::new_without_default)] // each call is a new click; a default one would mislead
    pub fn new() -> Self {
        Self(format!("{CLICK_PREFIX}{}", uuid::Uuid::new_v4()))
    }

    /// A click reference received back, e.g. from the confirmation card the click came from.
    ///
    /// ```
    /// let click = diesel_lease_agent::ClickRef::new();
    /// assert!(diesel_lease_agent::ClickRef::parse(click.as_str()).is_ok());
    /// ```
    pub fn parse(value: &str) -> Result<Self, Error> {
        if !value.starts_with(CLICK_PREFIX) {
            return Err(Error::InvalidToken(format!(
                "{value:?} is not a click's reference (they start with {CLICK_PREFIX:?})"
            )));
        }
        Claim::check_text(value)
            .map(|value| Self(value.to_owned()))
            .map_err(Error::InvalidToken)
    }

    /// The reference as stored in `busy_turn_ref`.
    ///
    /// ```
    /// assert!(diesel_lease_agent::ClickRef::new().as_str().len() > 6);
    /// ```
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// What holds a lock: a turn or a confirmation click.
///
/// ```
/// use diesel_lease_agent::HolderKind;
///
/// assert_eq!(HolderKind::of("click:1b9d"), HolderKind::Click);
/// assert_eq!(HolderKind::of("turn-7"), HolderKind::Turn);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HolderKind {
    /// A turn of the agent.
    Turn,
    /// A click on a confirmation card.
    Click,
}

impl HolderKind {
    /// The kind of holder a stored reference names.
    ///
    /// ```
    /// # use diesel_lease_agent::HolderKind;
    /// assert_eq!(HolderKind::of(diesel_lease_agent::ClickRef::new().as_str()), HolderKind::Click);
    /// ```
    pub fn of(reference: &str) -> Self {
        if reference.starts_with(CLICK_PREFIX) {
            Self::Click
        } else {
            Self::Turn
        }
    }
}

/// Who holds a lock that refused a caller: for a "who is blocking me" message and for operators.
///
/// ```
/// use std::time::Duration;
/// use diesel_lease_agent::{Holder, HolderKind};
///
/// let holder = Holder {
///     kind: HolderKind::Turn,
///     owner: "node-a".into(),
///     reference: "turn-7".into(),
///     age: Duration::from_secs(3),
///     frees_in: Duration::from_secs(117),
/// };
/// assert_eq!(holder.to_string(), "turn turn-7 on node-a, held 3.000s, free in 117.000s at the latest");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holder {
    /// A turn or a click.
    pub kind: HolderKind,
    /// The node that runs it.
    pub owner: String,
    /// Its reference.
    pub reference: String,
    /// How old the lock is by the database's clock: since it was taken or last kept (a click's
    /// lock counts as taken `lease - hold` earlier, so that one lease measures every lock).
    pub age: Duration,
    /// When the lock frees itself should its holder never release it: the lease minus its age.
    pub frees_in: Duration,
}

impl fmt::Display for Holder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.kind {
            HolderKind::Turn => "turn",
            HolderKind::Click => "click",
        };
        write!(
            f,
            "{kind} {} on {}, held {:.3}s, free in {:.3}s at the latest",
            self.reference,
            self.owner,
            self.age.as_secs_f64(),
            self.frees_in.as_secs_f64()
        )
    }
}

impl Holder {
    /// The holder a refusal names, if it names one: a lock held within its lease.
    pub(super) fn of(refusal: diesel_lease::Refusal) -> Option<Self> {
        match refusal {
            diesel_lease::Refusal::Held(holder) => Some(Holder {
                kind: HolderKind::of(&holder.token),
                owner: holder.owner,
                reference: holder.token,
                age: holder.age,
                frees_in: holder.frees_in,
            }),
            _ => None,
        }
    }
}
