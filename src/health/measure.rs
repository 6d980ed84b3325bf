//! The typed value of a reading: a count, a share, a size, an age, a flag, an id or words.
use std::fmt;
use std::time::Duration;

/// The value of a reading ([`TableHealth::readings`](crate::health::TableHealth::readings)),
/// typed by what it is. Ages are measured by the database's clock. [`as_f64`](Self::as_f64)
/// gives a number for metrics (ages in seconds, flags as 0 or 1); `Display` writes it for people.
///
/// ```
/// use std::time::Duration;
/// use diesel_lease::health::Measure;
///
/// assert_eq!(Measure::Count(41_000).to_string(), "41,000");
/// assert_eq!(Measure::Share(0.995).to_string(), "99.5%");
/// assert_eq!(Measure::Bytes(4 * 1024 * 1024).to_string(), "4.0 MiB");
/// assert_eq!(Measure::Age(Duration::from_secs(754)).to_string(), "12 min 34 s");
/// assert_eq!(Measure::Age(Duration::from_secs(90)).as_f64(), Some(90.0));
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Measure {
    /// A number of things: rows, updates, pages, frames.
    Count(u64),
    /// A share, from 0 to 1.
    Share(f64),
    /// A size in bytes.
    Bytes(u64),
    /// How long ago, or for how long, by the database's clock.
    Age(Duration),
    /// On or off.
    Flag(bool),
    /// An identifier: a process id, a connection id.
    Id(u64),
    /// Words.
    Text(String),
}

impl Measure {
    /// The value as a number, for metrics: counts, sizes and ids as they are, shares from 0 to
    /// 1, ages in seconds, flags as 1 (on) or 0 (off); words have none.
    ///
    /// ```
    /// use diesel_lease::health::Measure;
    ///
    /// assert_eq!(Measure::Flag(true).as_f64(), Some(1.0));
    /// assert_eq!(Measure::Text("idle".into()).as_f64(), None);
    /// ```
    pub fn as_f64(&self) -> Option<f64> {
        // Counts and sizes past 2^53 lose their last digits: a metric needs no more.
        #[allow(clippy::cast_precision_loss)]
        match self {
            Self::Count(count) | Self::Bytes(count) | Self::Id(count) => Some(*count as f64),
            Self::Share(share) => Some(*share),
            Self::Age(age) => Some(age.as_secs_f64()),
            Self::Flag(on) => Some(if *on { 1.0 } else { 0.0 }),
            Self::Text(_) => None,
        }
    }

    /// The count, if the value is one.
    ///
    /// ```
    /// assert_eq!(diesel_lease::health::Measure::Count(7).as_count(), Some(7));
    /// ```
    pub fn as_count(&self) -> Option<u64> {
        match self {
            Self::Count(count) => Some(*count),
            _ => None,
        }
    }

    /// The share, if the value is one.
    ///
    /// ```
    /// assert_eq!(diesel_lease::health::Measure::Share(0.5).as_share(), Some(0.5));
    /// ```
    pub fn as_share(&self) -> Option<f64> {
        match self {
            Self::Share(share) => Some(*share),
            _ => None,
        }
    }

    /// The age, if the value is one.
    ///
    /// ```
    /// use std::time::Duration;
    /// assert_eq!(diesel_lease::health::Measure::Age(Duration::from_secs(3)).as_age(), Some(Duration::from_secs(3)));
    /// ```
    pub fn as_age(&self) -> Option<Duration> {
        match self {
            Self::Age(age) => Some(*age),
            _ => None,
        }
    }

    /// The id, if the value is one.
    ///
    /// ```
    /// assert_eq!(diesel_lease::health::Measure::Id(4242).as_id(), Some(4242));
    /// ```
    pub fn as_id(&self) -> Option<u64> {
        match self {
            Self::Id(id) => Some(*id),
            _ => None,
        }
    }

    /// An age of `micros` microseconds, as the database measured it; a negative one (a clock
    /// stepped back between two readings) is zero.
    #[cfg_attr(not(any(feature = "postgres", feature = "mysql")), allow(dead_code))]
    pub(crate) fn age_from_micros(micros: i64) -> Self {
        Self::Age(Duration::from_micros(unsigned(micros)))
    }

    /// `part` as a share of `whole`, if `whole` is not zero.
    pub(crate) fn share_of(part: u64, whole: u64) -> Option<Self> {
        #[allow(clippy::cast_precision_loss)]
        (whole > 0).then(|| Self::Share(part as f64 / whole as f64))
    }
}

impl fmt::Display for Measure {
    /// The value for people: counts with thousands separators, shares in percent, sizes in
    /// binary units, ages in the two largest units that apply.
    ///
    /// ```
    /// use std::time::Duration;
    /// use diesel_lease::health::Measure;
    ///
    /// assert_eq!(Measure::Age(Duration::from_millis(250)).to_string(), "250 ms");
    /// assert_eq!(Measure::Age(Duration::from_secs(2 * 86_400 + 3_600)).to_string(), "2 d 1 h");
    /// assert_eq!(Measure::Flag(false).to_string(), "off");
    /// ```
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Count(count) => f.write_str(&thousands(*count)),
            Self::Share(share) => write!(f, "{:.1}%", share * 100.0),
            Self::Bytes(bytes) => write_bytes(f, *bytes),
            Self::Age(age) => write_age(f, *age),
            Self::Flag(on) => f.write_str(if *on { "on" } else { "off" }),
            Self::Id(id) => write!(f, "{id}"),
            Self::Text(text) => f.write_str(text),
        }
    }
}

/// A count or size the database gives as a signed number, as one; a negative one is zero.
pub(crate) fn unsigned(number: i64) -> u64 {
    number.max(0).unsigned_abs()
}

/// `count` with a comma between each group of three digits.
fn thousands(count: u64) -> String {
    let digits = count.to_string();
    let mut grouped = String::with_capacity(digits.len() + digits.len() / 3);
    for (at, digit) in digits.chars().enumerate() {
        if at > 0 && (digits.len() - at).is_multiple_of(3) {
            grouped.push(',');
        }
        grouped.push(digit);
    }
    grouped
}

fn write_bytes(f: &mut fmt::Formatter<'_>, bytes: u64) -> fmt::Result {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if bytes < 1024 {
        return write!(f, "{bytes} B");
    }
    #[allow(clippy::cast_precision_loss)]
    let mut size = bytes as f64 / 1024.0;
    let mut unit = 0;
    while size >= 1024.0 && unit + 1 < UNITS.len() {
        size /= 1024.0;
        unit += 1;
    }
    write!(f, "{size:.1} {}", UNITS[unit])
}

fn write_age(f: &mut fmt::Formatter<'_>, age: Duration) -> fmt::Result {
    let secs = age.as_secs();
    // The two largest units that apply, the smaller left out when it is zero.
    let units = if secs >= 86_400 {
        Some((secs / 86_400, "d", secs / 3_600 % 24, "h"))
    } else if secs >= 3_600 {
        Some((secs / 3_600, "h", secs / 60 % 60, "min"))
    } else if secs >= 60 {
        Some((secs / 60, "min", secs % 60, "s"))
    } else {
        None
    };
    match units {
        Some((large, large_unit, 0, _)) => write!(f, "{large} {large_unit}"),
        Some((large, large_unit, small, small_unit)) => {
            write!(f, "{large} {large_unit} {small} {small_unit}")
        }
        None if secs > 0 => write!(f, "{:.1} s", age.as_secs_f64()),
        None => write!(f, "{} ms", age.as_millis()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_grouped_by_thousands() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_000), "1,000");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }

    #[test]
    fn sizes_and_ages_read_in_the_largest_unit_that_applies() {
        assert_eq!(Measure::Bytes(512).to_string(), "512 B");
        assert_eq!(Measure::Bytes(1536).to_string(), "1.5 KiB");
        assert_eq!(Measure::Bytes(3 << 30).to_string(), "3.0 GiB");
        assert_eq!(
            Measure::Age(Duration::from_millis(1_500)).to_string(),
            "1.5 s"
        );
        assert_eq!(
            Measure::Age(Duration::from_secs(3_660)).to_string(),
            "1 h 1 min"
        );
        assert_eq!(Measure::age_from_micros(-5), Measure::Age(Duration::ZERO));
    }
}
