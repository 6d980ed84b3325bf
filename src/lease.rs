use std::time::Duration;

use crate::Error;

const MICROS_PER_MILLI: i64 = 1_000;
const MICROS_PER_SECOND: i64 = 1_000_000;
const MIN_MICROS: i64 = MICROS_PER_MILLI;
const MAX_MICROS: i64 = 30 * 24 * 3_600 * MICROS_PER_SECOND;

/// How long a claim stays valid without renewal, measured by the database's clock.
///
/// A lease runs from when the row was claimed or last renewed, never from when its work became
/// due. It is validated when made: at least [`Lease::MIN`] (the finest step every backend's
/// clock can measure) and at most [`Lease::MAX`]; sub-microsecond parts are dropped. A lease is
/// always sent to the database as a bound parameter, never formatted into SQL.
///
/// ```
/// use std::time::Duration;
/// use diesel_lease::{Error, Lease};
///
/// let lease = Lease::from_millis(250)?;
/// assert_eq!(lease.as_duration(), Duration::from_millis(250));
/// assert!(matches!(Lease::from_secs(0), Err(Error::InvalidLease(_))));
/// assert!(matches!(Lease::from_secs(365 * 24 * 3600), Err(Error::InvalidLease(_))));
/// # Ok::<(), Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Lease {
    micros: i64,
}

impl Lease {
    /// The shortest lease: one millisecond, SQLite's clock resolution.
    pub const MIN: Duration = Duration::from_micros(MIN_MICROS as u64);
    /// The longest lease: thirty days. Longer work renews its lease instead.
    pub const MAX: Duration = Duration::from_micros(MAX_MICROS as u64);

    /// A lease of `duration`, or [`Error::InvalidLease`] when it is shorter than [`Lease::MIN`]
    /// or longer than [`Lease::MAX`].
    ///
    /// ```
    /// use std::time::Duration;
    /// use diesel_lease::Lease;
    ///
    /// assert!(Lease::new(Duration::from_secs(90)).is_ok());
    /// assert!(Lease::new(Duration::from_micros(999)).is_err());
    /// ```
    pub fn new(duration: Duration) -> Result<Self, Error> {
        match micros_within(duration, MIN_MICROS) {
            Some(micros) => Ok(Self { micros }),
            None => Err(Error::InvalidLease(format!(
                "{duration:?} is outside {:?}..={:?}",
                Self::MIN,
                Self::MAX
            ))),
        }
    }

    /// A lease of whole seconds.
    ///
    /// ```
    /// assert!(diesel_lease::Lease::from_secs(30).is_ok());
    /// ```
    pub fn from_secs(seconds: u64) -> Result<Self, Error> {
        Self::new(Duration::from_secs(seconds))
    }

    /// A lease of whole milliseconds.
    ///
    /// ```
    /// assert!(diesel_lease::Lease::from_millis(200).is_ok());
    /// ```
    pub fn from_millis(millis: u64) -> Result<Self, Error> {
        Self::new(Duration::from_millis(millis))
    }

    /// The lease as a [`Duration`].
    ///
    /// ```
    /// # use std::time::Duration;
    /// assert_eq!(diesel_lease::Lease::from_secs(2)?.as_duration(), Duration::from_secs(2));
    /// # Ok::<(), diesel_lease::Error>(())
    /// ```
    pub fn as_duration(self) -> Duration {
        duration_of(self.micros)
    }

    /// How much longer this lease is than `shorter`, or `None` when `shorter` is the longer one.
    ///
    /// A lock that should block others for `hold` under a lease of `self` is taken dated back by
    /// `self - hold`, so that whoever judges it uses one lease as the only measure.
    ///
    /// ```
    /// use diesel_lease::Lease;
    ///
    /// let ttl = Lease::from_secs(120)?;
    /// let hold = Lease::from_secs(20)?;
    /// assert_eq!(ttl.checked_sub(hold).map(|age| age.as_duration().as_secs()), Some(100));
    /// assert_eq!(hold.checked_sub(ttl), None);
    /// # Ok::<(), diesel_lease::Error>(())
    /// ```
    pub fn checked_sub(self, shorter: Lease) -> Option<Age> {
        self.micros
            .checked_sub(shorter.micros)
            .filter(|micros| *micros >= 0)
            .map(|micros| Age { micros })
    }
}

/// How far back a timestamp is dated: from zero up to [`Lease::MAX`].
///
/// Used by the dated-back changesets ([`crate::ClaimLease::taken_ago`],
/// [`crate::ClaimLease::renewed_ago`]) and to age rows in tests.
///
/// ```
/// use std::time::Duration;
/// use diesel_lease::Age;
///
/// assert_eq!(Age::new(Duration::from_secs(5))?.as_duration(), Duration::from_secs(5));
/// assert_eq!(Age::ZERO.as_duration(), Duration::ZERO);
/// assert!(Age::new(Duration::from_secs(365 * 24 * 3600)).is_err());
/// # Ok::<(), diesel_lease::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Age {
    micros: i64,
}

impl Age {
    /// No age at all: the database's now.
    pub const ZERO: Age = Age { micros: 0 };

    /// An age of `duration`, or [`Error::InvalidLease`] when it is longer than [`Lease::MAX`].
    ///
    /// ```
    /// assert!(diesel_lease::Age::new(std::time::Duration::from_millis(1500)).is_ok());
    /// ```
    pub fn new(duration: Duration) -> Result<Self, Error> {
        match micros_within(duration, 0) {
            Some(micros) => Ok(Self { micros }),
            None => Err(Error::InvalidLease(format!(
                "an age of {duration:?} is longer than {:?}",
                Lease::MAX
            ))),
        }
    }

    /// The age as a [`Duration`].
    ///
    /// ```
    /// # use std::time::Duration;
    /// assert_eq!(diesel_lease::Age::ZERO.as_duration(), Duration::ZERO);
    /// ```
    pub fn as_duration(self) -> Duration {
        duration_of(self.micros)
    }

    pub(crate) fn micros(&self) -> &i64 {
        &self.micros
    }
}

impl From<Lease> for Age {
    fn from(lease: Lease) -> Self {
        Age {
            micros: lease.micros,
        }
    }
}

fn micros_within(duration: Duration, min_micros: i64) -> Option<i64> {
    i64::try_from(duration.as_micros())
        .ok()
        .filter(|micros| (min_micros..=MAX_MICROS).contains(micros))
}

fn duration_of(micros: i64) -> Duration {
    Duration::from_micros(micros.unsigned_abs())
}
