//! Warnings: a reading past its threshold, in plain words, and the checks that find them.
use std::fmt;

use crate::health::{Measure, Metric, Reading};

/// The threshold a warning judged a reading by: the least or the most it should be.
///
/// ```
/// use diesel_lease::health::{Measure, Threshold};
///
/// assert_eq!(Threshold::AtLeast(Measure::Share(0.9)).to_string(), "at least 90.0%");
/// ```
#[derive(Debug, Clone, PartialEq)]
pub enum Threshold {
    /// The reading should be this or more.
    AtLeast(Measure),
    /// The reading should be this or less.
    AtMost(Measure),
}

impl Threshold {
    /// The threshold's value.
    ///
    /// ```
    /// use diesel_lease::health::{Measure, Threshold};
    ///
    /// assert_eq!(Threshold::AtMost(Measure::Count(3)).value(), &Measure::Count(3));
    /// ```
    pub fn value(&self) -> &Measure {
        match self {
            Self::AtLeast(value) | Self::AtMost(value) => value,
        }
    }

    /// Whether `reading` is past the threshold.
    fn passed_by(&self, reading: &Measure) -> bool {
        match (reading.as_f64(), self.value().as_f64()) {
            (Some(reading), Some(limit)) => match self {
                Self::AtLeast(_) => reading < limit,
                Self::AtMost(_) => reading > limit,
            },
            _ => false,
        }
    }
}

impl fmt::Display for Threshold {
    /// `at least ..` or `at most ..`.
    ///
    /// ```
    /// use std::time::Duration;
    /// use diesel_lease::health::{Measure, Threshold};
    ///
    /// assert_eq!(Threshold::AtMost(Measure::Age(Duration::from_secs(300))).to_string(), "at most 5 min");
    /// ```
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::AtLeast(value) => write!(f, "at least {value}"),
            Self::AtMost(value) => write!(f, "at most {value}"),
        }
    }
}

/// A reading past its threshold: which metric, its value (none for a vacuum that never ran),
/// the threshold, and what it means in plain words. `Display` writes the whole sentence.
///
/// ```
/// # include!("../doctest_setup.rs");
/// use std::time::Duration;
/// use diesel_lease::prelude::*;
/// use diesel_lease::HealthThresholds;
///
/// # fn main() -> Result<(), diesel_lease::Error> {
/// # let conn = &mut jobs_connection()?;
/// let health = jobs::table.health().thresholds(HealthThresholds::default()).run(conn)?;
/// for warning in health.warnings() {
///     eprintln!("{}: {warning}", warning.metric());
/// }
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Warning {
    metric: Metric,
    value: Option<Measure>,
    threshold: Threshold,
    why: String,
}

impl Warning {
    /// The metric past its threshold.
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let health = jobs::table.health().run(conn)?;
    /// assert!(health.warnings().iter().all(|warning| health.get(warning.metric()).is_some()
    ///     || warning.value().is_none()));
    /// # Ok(())
    /// # }
    /// ```
    pub fn metric(&self) -> Metric {
        self.metric
    }

    /// The reading's value; none when what it measures never happened (a table never
    /// vacuumed).
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let health = jobs::table.health().run(conn)?;
    /// let _values: Vec<_> = health.warnings().iter().map(|warning| warning.value()).collect();
    /// # Ok(())
    /// # }
    /// ```
    pub fn value(&self) -> Option<&Measure> {
        self.value.as_ref()
    }

    /// The threshold it passed.
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let health = jobs::table.health().run(conn)?;
    /// let _thresholds: Vec<_> = health.warnings().iter().map(|warning| warning.threshold()).collect();
    /// # Ok(())
    /// # }
    /// ```
    pub fn threshold(&self) -> &Threshold {
        &self.threshold
    }

    /// What it means and what to do, in plain words (the end of the sentence `Display` writes).
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let health = jobs::table.health().run(conn)?;
    /// assert!(health.warnings().iter().all(|warning| warning.to_string().ends_with(warning.why())));
    /// # Ok(())
    /// # }
    /// ```
    pub fn why(&self) -> &str {
        &self.why
    }
}

impl fmt::Display for Warning {
    /// `<metric> is <value>, past its threshold (<threshold>): <why>`.
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let health = jobs::table.health().run(conn)?;
    /// assert!(health.warnings().iter().all(|warning| warning.to_string().starts_with(warning.metric().name())));
    /// # Ok(())
    /// # }
    /// ```
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let value = self
            .value
            .as_ref()
            .map_or_else(|| "never".to_owned(), ToString::to_string);
        write!(
            f,
            "{} is {value}, past its threshold ({}): {}",
            self.metric, self.threshold, self.why
        )
    }
}

/// A check of one reading against its threshold, by a backend: judged only once another
/// reading (its sample) counts enough, and with the plain words of what a breach means.
#[derive(Debug)]
pub(crate) struct Check {
    metric: Metric,
    threshold: Threshold,
    sample: Option<(Metric, u64)>,
    missing_is_past: bool,
    why: String,
}

impl Check {
    /// `metric` should be `value` or more.
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))]
    pub(crate) fn at_least(metric: Metric, value: Measure) -> Self {
        Self::new(metric, Threshold::AtLeast(value))
    }

    /// `metric` should be `value` or less.
    pub(crate) fn at_most(metric: Metric, value: Measure) -> Self {
        Self::new(metric, Threshold::AtMost(value))
    }

    fn new(metric: Metric, threshold: Threshold) -> Self {
        Self {
            metric,
            threshold,
            sample: None,
            missing_is_past: false,
            why: String::new(),
        }
    }

    /// Judged only when `sample` counts at least `least`.
    pub(crate) fn once(self, sample: Metric, least: u64) -> Self {
        Self {
            sample: Some((sample, least)),
            ..self
        }
    }

    /// A reading that is missing (what it times never happened) is past the threshold, when the
    /// sample is met.
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))]
    pub(crate) fn missing_is_past(self) -> Self {
        Self {
            missing_is_past: true,
            ..self
        }
    }

    /// What a breach means, in plain words.
    pub(crate) fn because(self, why: impl Into<String>) -> Self {
        Self {
            why: why.into(),
            ..self
        }
    }

    /// The warning, if `readings` pass the threshold.
    pub(crate) fn judge(self, readings: &[Reading]) -> Option<Warning> {
        let value_of = |metric: Metric| {
            readings
                .iter()
                .find(|reading| reading.metric() == metric)
                .map(Reading::value)
        };
        if let Some((sample, least)) = self.sample {
            let counted = value_of(sample).and_then(Measure::as_count).unwrap_or(0);
            if counted < least {
                return None;
            }
        }
        let value = value_of(self.metric).cloned();
        let past = match &value {
            Some(value) => self.threshold.passed_by(value),
            None => self.missing_is_past,
        };
        past.then_some(Warning {
            metric: self.metric,
            value,
            threshold: self.threshold,
            why: self.why,
        })
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn readings() -> Vec<Reading> {
        vec![
            Reading::new(Metric::Updates, Measure::Count(2_000)),
            Reading::new(Metric::HotUpdateShare, Measure::Share(0.5)),
            Reading::new(Metric::DeadRows, Measure::Count(10)),
        ]
    }

    #[test]
    fn a_reading_past_its_threshold_warns_in_words_naming_value_and_threshold() {
        let warning = Check::at_least(Metric::HotUpdateShare, Measure::Share(0.9))
            .once(Metric::Updates, 1_000)
            .because("an index covers claimed_at")
            .judge(&readings());
        assert_eq!(
            warning.map(|warning| warning.to_string()).as_deref(),
            Some("hot_update_share is 50.0%, past its threshold (at least 90.0%): an index covers claimed_at"),
            "50% is below 90%"
        );
    }

    #[test]
    fn a_reading_within_its_threshold_or_short_of_its_sample_does_not_warn() {
        let within = Check::at_least(Metric::HotUpdateShare, Measure::Share(0.4));
        assert_eq!(within.judge(&readings()), None);
        let small = Check::at_least(Metric::HotUpdateShare, Measure::Share(0.9))
            .once(Metric::Updates, 5_000);
        assert_eq!(small.judge(&readings()), None);
    }

    #[test]
    fn a_missing_reading_warns_only_when_told_and_its_sample_is_met() {
        let never = || {
            Check::at_most(
                Metric::SinceVacuum,
                Measure::Age(Duration::from_secs(3_600)),
            )
        };
        assert_eq!(never().judge(&readings()), None);
        let warning = never()
            .missing_is_past()
            .once(Metric::DeadRows, 10)
            .judge(&readings());
        assert!(
            warning.is_some_and(|warning| warning.to_string().starts_with("since_vacuum is never")),
            "never vacuumed"
        );
        let few = never().missing_is_past().once(Metric::DeadRows, 11);
        assert_eq!(few.judge(&readings()), None);
    }
}
