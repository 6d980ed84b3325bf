//! How long a claim stays valid, and how far back a timestamp is dated.
use std::fmt;
use std::time::Duration;

const MICROS_PER_MILLI: u128 = 1_000;
const MIN_MICROS: u128 = MICROS_PER_MILLI;
const MAX_MICROS: u128 = 30 * 24 * 3_600 * 1_000_000;

/// How long a claim stays valid without renewal, measured by the database's clock.
///
/// A lease runs from when the row was claimed or last renewed, never from when its work became
/// due. It is validated when made: at least [`Lease::MIN`] (the finest step every backend's
/// clock can measure) and at most [`Lease::MAX`]; sub-microsecond parts are dropped. A lease is
/// always sent to the database as a bound parameter, never formatted into SQL. The constructors
/// are `const`, so a lease can be a constant.
///
/// ```
/// use std::time::Duration;
/// use diesel_lease::Lease;
///
/// const TURN: Lease = match Lease::from_secs(120) {
///     Ok(lease) => lease,
///     Err(_) => panic!("a turn's lease is within range"),
/// };
/// assert_eq!(TURN.as_duration(), Duration::from_secs(120));
/// assert!(Lease::from_secs(0).is_err());
/// assert!(Lease::from_secs(365 * 24 * 3600).is_err());
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

    /// A lease of `duration`, or [`OutOfRange`] when it is shorter than [`Lease::MIN`] or longer
    /// than [`Lease::MAX`]; `?` makes it [`Error::InvalidLease`](crate::Error::InvalidLease).
    ///
    /// ```
    /// use std::time::Duration;
    /// use diesel_lease::Lease;
    ///
    /// assert!(Lease::new(Duration::from_secs(90)).is_ok());
    /// assert!(Lease::new(Duration::from_micros(999)).is_err());
    /// ```
    pub const fn new(duration: Duration) -> Result<Self, OutOfRange> {
        match micros_within(duration, MIN_MICROS) {
            Some(micros) => Ok(Self { micros }),
            None => Err(OutOfRange {
                what: "a lease",
                duration,
                min: Self::MIN,
            }),
        }
    }

    /// A lease of whole seconds.
    ///
    /// ```
    /// assert!(diesel_lease::Lease::from_secs(30).is_ok());
    /// ```
    pub const fn from_secs(seconds: u64) -> Result<Self, OutOfRange> {
        Self::new(Duration::from_secs(seconds))
    }

    /// A lease of whole milliseconds.
    ///
    /// ```
    /// assert!(diesel_lease::Lease::from_millis(200).is_ok());
    /// ```
    pub const fn from_millis(millis: u64) -> Result<Self, OutOfRange> {
        Self::new(Duration::from_millis(millis))
    }

    /// The lease as a [`Duration`].
    ///
    /// ```
    /// # use std::time::Duration;
    /// assert_eq!(diesel_lease::Lease::from_secs(2)?.as_duration(), Duration::from_secs(2));
    /// # Ok::<(), diesel_lease::Error>(())
    /// ```
    pub const fn as_duration(self) -> Duration {
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
    /// let lease = Lease::from_secs(120)?;
    /// let hold = Lease::from_secs(20)?;
    /// assert_eq!(lease.checked_sub(hold).map(|age| age.as_duration().as_secs()), Some(100));
    /// assert_eq!(hold.checked_sub(lease), None);
    /// # Ok::<(), diesel_lease::Error>(())
    /// ```
    pub fn checked_sub(self, shorter: Lease) -> Option<Age> {
        self.micros
            .checked_sub(shorter.micros)
            .filter(|micros| *micros >= 0)
            .map(|micros| Age { micros })
    }

    /// The lease in microseconds, as it is bound.
    pub(crate) fn micros(&self) -> &i64 {
        &self.micros
    }
}

/// How far back a timestamp is dated: from zero up to [`Lease::MAX`].
///
/// Used by the dated-back changesets ([`ClaimLease::taken_ago`](crate::ClaimLease::taken_ago),
/// [`ClaimLease::renewed_ago`](crate::ClaimLease::renewed_ago)) and to age rows in tests.
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

    /// An age of `duration`, or [`OutOfRange`] when it is longer than [`Lease::MAX`].
    ///
    /// ```
    /// assert!(diesel_lease::Age::new(std::time::Duration::from_millis(1500)).is_ok());
    /// ```
    pub const fn new(duration: Duration) -> Result<Self, OutOfRange> {
        match micros_within(duration, 0) {
            Some(micros) => Ok(Self { micros }),
            None => Err(OutOfRange {
                what: "an age",
                duration,
                min: Duration::ZERO,
            }),
        }
    }

    /// The age as a [`Duration`].
    ///
    /// ```
    /// # use std::time::Duration;
    /// assert_eq!(diesel_lease::Age::ZERO.as_duration(), Duration::ZERO);
    /// ```
    pub const fn as_duration(self) -> Duration {
        duration_of(self.micros)
    }

    /// The age in microseconds, as it is bound.
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

/// A lease or age outside its range: what [`Lease::new`] and [`Age::new`] refuse, and what
/// [`Error::InvalidLease`](crate::Error::InvalidLease) carries.
///
/// The constructors are `const` (a lease can be a constant), so they return this error of their
/// own rather than the crate's [`Error`](crate::Error); `?` in a function returning `Error`, or
/// `Error::from`, makes it `Error::InvalidLease`, which is what code matching one error type
/// matches (as in 0.1):
///
/// ```
/// use diesel_lease::{Error, Lease};
///
/// fn turn_lease(secs: u64) -> Result<Lease, Error> {
///     Ok(Lease::from_secs(secs)?)
/// }
/// assert!(matches!(turn_lease(0), Err(Error::InvalidLease(_))));
/// ```
///
/// ```
/// use diesel_lease::{Error, Lease};
///
/// let Err(out_of_range) = Lease::from_millis(0) else { panic!() };
/// assert_eq!(out_of_range.to_string(), "a lease of 0ns is outside 1ms..=2592000s");
/// assert!(matches!(Error::from(out_of_range), Error::InvalidLease(_)));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutOfRange {
    what: &'static str,
    duration: Duration,
    min: Duration,
}

impl fmt::Display for OutOfRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} of {:?} is outside {:?}..={:?}",
            self.what,
            self.duration,
            self.min,
            Lease::MAX
        )
    }
}

const fn micros_within(duration: Duration, min_micros: u128) -> Option<i64> {
    let micros = duration.as_micros();
    if micros < min_micros || micros > MAX_MICROS {
        None
    } else {
        // At most thirty days of microseconds: well within an i64.
        Some(micros as i64)
    }
}

const fn duration_of(micros: i64) -> Duration {
    Duration::from_micros(micros.unsigned_abs())
}

impl std::error::Error for OutOfRange {}
