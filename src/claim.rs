use crate::Error;

/// The most characters an owner, token or id may have: what a `VARCHAR(255)` column holds.
pub(crate) const MAX_TEXT_CHARS: usize = 255;

/// Who claims a row (the owner: a node or worker) and which claim this is (the token).
///
/// The token proves who holds the row: every renewal, release or write of a holder is guarded
/// by it. [`Claim::new`] makes a fresh UUID token; [`Claim::with_token`] brings the caller's own,
/// such as a turn's reference. Both are validated when made: not empty, at most 255
/// characters, no white space at either end, no control characters.
///
/// ```
/// use diesel_lease::{Claim, Error};
///
/// let claim = Claim::new("worker-7")?;
/// assert_eq!(claim.owner(), "worker-7");
/// assert_eq!(claim.token().len(), 36);
///
/// let turn = Claim::with_token("node-a", "turn-42")?;
/// assert_eq!(turn.token(), "turn-42");
/// assert!(matches!(Claim::with_token("node-a", " "), Err(Error::InvalidToken(_))));
/// # Ok::<(), Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Claim {
    owner: String,
    token: String,
}

impl Claim {
    /// A claim by `owner` with a fresh random (UUID v4) token.
    ///
    /// ```
    /// let a = diesel_lease::Claim::new("worker-1")?;
    /// let b = diesel_lease::Claim::new("worker-1")?;
    /// assert_ne!(a.token(), b.token());
    /// # Ok::<(), diesel_lease::Error>(())
    /// ```
    pub fn new(owner: &str) -> Result<Self, Error> {
        Self::with_token(owner, &uuid::Uuid::new_v4().to_string())
    }

    /// A claim by `owner` with the caller's own `token`, which must be unique among live claims.
    ///
    /// ```
    /// let claim = diesel_lease::Claim::with_token("node-a", "turn-1")?;
    /// assert_eq!(claim.owner(), "node-a");
    /// # Ok::<(), diesel_lease::Error>(())
    /// ```
    pub fn with_token(owner: &str, token: &str) -> Result<Self, Error> {
        Ok(Self {
            owner: Self::check_text(owner)
                .map_err(Error::InvalidOwner)?
                .to_owned(),
            token: Self::check_text(token)
                .map_err(Error::InvalidToken)?
                .to_owned(),
        })
    }

    /// A claim by `owner`, a name already checked, with a fresh random token.
    pub(crate) fn of_checked_owner(owner: &str) -> Self {
        Self {
            owner: owner.to_owned(),
            token: uuid::Uuid::new_v4().to_string(),
        }
    }

    /// Who holds the row under this claim.
    ///
    /// ```
    /// assert_eq!(diesel_lease::Claim::new("n1")?.owner(), "n1");
    /// # Ok::<(), diesel_lease::Error>(())
    /// ```
    pub fn owner(&self) -> &str {
        &self.owner
    }

    /// The token that guards every write of this claim's holder.
    ///
    /// ```
    /// assert_eq!(diesel_lease::Claim::with_token("n1", "t1")?.token(), "t1");
    /// # Ok::<(), diesel_lease::Error>(())
    /// ```
    pub fn token(&self) -> &str {
        &self.token
    }

    /// `value`, if it fits a lease column as every owner and token must, or why not: not empty,
    /// most 255 characters, no white space at either end (MySQL's collations would ignore trailing
    /// spaces), no control characters. For ids a table stores beside its lease columns too.
    ///
    /// ```
    /// use diesel_lease::Claim;
    ///
    /// assert_eq!(Claim::check_text("chat-1"), Ok("chat-1"));
    /// assert!(Claim::check_text(" chat-1").is_err());
    /// assert!(Claim::check_text("").is_err());
    /// ```
    pub fn check_text(value: &str) -> Result<&str, String> {
        if value.trim().is_empty() {
            Err("it is empty".to_owned())
        } else if value.trim() != value {
            Err(format!("{value:?} starts or ends with white space"))
        } else if value.chars().count() > MAX_TEXT_CHARS {
            Err(format!(
                "it is longer than {MAX_TEXT_CHARS} characters ({})",
                value.chars().count()
            ))
        } else if value.chars().any(char::is_control) {
            Err(format!("{value:?} holds a control character"))
        } else {
            Ok(value)
        }
    }
}
