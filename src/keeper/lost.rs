//! What a kept claim learns when its lease is lost: which rows, and why.
use std::fmt;

/// Why a kept lease is no longer held.
///
/// ```
/// use diesel_lease::LossReason;
///
/// assert_eq!(LossReason::TakenOver.to_string(), "a renewal found the rows no longer held by the claim");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum LossReason {
    /// A renewal changed fewer rows than were held: another claim took them, or they were
    /// released behind the keeper's back.
    TakenOver,
    /// No renewal was confirmed within the lease less the margin (the database unreachable,
    /// the row locked): the lease may have run out by the database's clock. Final: the keeper
    /// stops renewing, and a renewal that gets through later does not make the claim held again.
    Unconfirmed,
    /// The longest hold passed; the keeper stopped renewing.
    LongestHold,
    /// The claim was released: by its handle, or by the keeper as it stopped.
    Released,
}

impl fmt::Display for LossReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            LossReason::TakenOver => "a renewal found the rows no longer held by the claim",
            LossReason::Unconfirmed => "no renewal was confirmed in time",
            LossReason::LongestHold => "the longest hold passed",
            LossReason::Released => "the claim was released",
        })
    }
}

/// A kept lease that is no longer held: which rows, and why. Stop the work on them. Its `Debug`
/// names at most [`LeaseLost::KEYS_SHOWN`] keys, and how many more there are.
///
/// ```
/// use diesel_lease::{LeaseLost, LossReason};
///
/// let lost = LeaseLost { rows: vec![7_i64], reason: LossReason::TakenOver, cause: None };
/// assert_eq!(lost.to_string(), "lease lost on 1 row(s): a renewal found the rows no longer held by the claim");
/// let many = LeaseLost { rows: (0..1000_i64).collect(), reason: LossReason::Unconfirmed, cause: None };
/// assert!(format!("{many:?}").contains("990 more"));
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct LeaseLost<K> {
    /// The keys of the rows lost.
    pub rows: Vec<K>,
    /// Why.
    pub reason: LossReason,
    /// The last renewal's error, when the keeper could not renew.
    pub cause: Option<String>,
}

impl<K> LeaseLost<K> {
    /// How many keys `Debug` names.
    pub const KEYS_SHOWN: usize = 10;
}

impl<K: fmt::Debug> fmt::Debug for LeaseLost<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shown = &self.rows[..self.rows.len().min(Self::KEYS_SHOWN)];
        let mut rows = format!("{shown:?}");
        if self.rows.len() > shown.len() {
            rows = format!("{rows} and {} more", self.rows.len() - shown.len());
        }
        f.debug_struct("LeaseLost")
            .field("rows", &format_args!("{rows}"))
            .field("reason", &self.reason)
            .field("cause", &self.cause)
            .finish()
    }
}

impl<K> fmt::Display for LeaseLost<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "lease lost on {} row(s): {}",
            self.rows.len(),
            self.reason
        )?;
        match &self.cause {
            Some(cause) => write!(f, " (last renewal: {cause})"),
            None => Ok(()),
        }
    }
}

impl<K: fmt::Debug> std::error::Error for LeaseLost<K> {}
