//! What a health reading gives back: the table's readings and the warnings they raised.
use std::fmt;

use crate::health::{Check, Measure, Metric, Warning};

/// One reading: a metric and its value. Users see it as the pair `(Metric, &Measure)`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Reading {
    metric: Metric,
    value: Measure,
}

impl Reading {
    pub(crate) fn new(metric: Metric, value: Measure) -> Self {
        Self { metric, value }
    }

    pub(crate) fn metric(&self) -> Metric {
        self.metric
    }

    pub(crate) fn value(&self) -> &Measure {
        &self.value
    }
}

/// A lease table's health, as [`LeaseDsl::health`](crate::LeaseDsl::health) read it: the
/// readings its backend has, and a warning for each that passed its threshold. `Display` writes
/// a short report.
///
/// ```
/// # include!("../doctest_setup.rs");
/// use diesel_lease::health::Metric;
/// use diesel_lease::prelude::*;
///
/// # fn main() -> Result<(), diesel_lease::Error> {
/// # let conn = &mut jobs_connection()?;
/// let health = jobs::table.health().run(conn)?;
/// println!("{health}");
/// assert_eq!(health.table(), "jobs");
/// assert!(health.get(Metric::PageSize).is_some());
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct TableHealth {
    table: String,
    backend: &'static str,
    readings: Vec<Reading>,
    warnings: Vec<Warning>,
}

impl TableHealth {
    /// The health of `table` on `backend`: its readings, judged by `checks`.
    pub(crate) fn judged(
        table: String,
        backend: &'static str,
        readings: Vec<Reading>,
        checks: Vec<Check>,
    ) -> Self {
        let warnings = checks
            .into_iter()
            .filter_map(|check| check.judge(&readings))
            .collect();
        Self {
            table,
            backend,
            readings,
            warnings,
        }
    }

    /// The table, as its `table!` names it (with its schema, if it has one).
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// assert_eq!(jobs::table.health().run(conn)?.table(), "jobs");
    /// # Ok(())
    /// # }
    /// ```
    pub fn table(&self) -> &str {
        &self.table
    }

    /// The backend that read it: `PostgreSQL`, `MySQL/MariaDB` or `SQLite`.
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// assert!(["PostgreSQL", "MySQL/MariaDB", "SQLite"].contains(&jobs::table.health().run(conn)?.backend()));
    /// # Ok(())
    /// # }
    /// ```
    pub fn backend(&self) -> &'static str {
        self.backend
    }

    /// Every reading, a metric and its value, in the backend's order; a metric the backend does
    /// not have is absent.
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use diesel_lease::prelude::*;
    /// use diesel_lease::health::{Measure, Metric};
    ///
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let health = jobs::table.health().run(conn)?;
    /// // For a metrics exporter: a name and a number.
    /// let gauges: Vec<(&str, f64)> = health
    ///     .readings()
    ///     .filter_map(|(metric, value)| Some((metric.name(), value.as_f64()?)))
    ///     .collect();
    /// assert!(gauges.iter().any(|(name, _)| *name == "page_size"));
    /// assert!(health.readings().any(|(metric, value)| metric == Metric::Pages && matches!(value, Measure::Count(pages) if *pages > 0)));
    /// # Ok(())
    /// # }
    /// ```
    pub fn readings(&self) -> impl ExactSizeIterator<Item = (Metric, &Measure)> + '_ {
        self.readings
            .iter()
            .map(|reading| (reading.metric, &reading.value))
    }

    /// The value of `metric`, if the backend read it.
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// use diesel_lease::health::Metric;
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let health = jobs::table.health().run(conn)?;
    /// assert!(health.get(Metric::PageSize).and_then(|size| size.as_f64()).is_some_and(|size| size >= 512.0));
    /// # Ok(())
    /// # }
    /// ```
    pub fn get(&self, metric: Metric) -> Option<&Measure> {
        self.readings
            .iter()
            .find(|reading| reading.metric == metric)
            .map(Reading::value)
    }

    /// The warnings: each reading past its threshold, in plain words.
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// for warning in jobs::table.health().run(conn)?.warnings() {
    ///     eprintln!("{warning}");
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub fn warnings(&self) -> &[Warning] {
        &self.warnings
    }

    /// The warning on `metric`, if its reading passed its threshold.
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// use diesel_lease::health::Metric;
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let health = jobs::table.health().run(conn)?;
    /// assert!(health.warning(Metric::OldestTransactionAge).is_none(), "nothing else is open");
    /// # Ok(())
    /// # }
    /// ```
    pub fn warning(&self, metric: Metric) -> Option<&Warning> {
        self.warnings
            .iter()
            .find(|warning| warning.metric() == metric)
    }
}

impl fmt::Display for TableHealth {
    /// The table and its backend, one reading a line, then each warning.
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let report = jobs::table.health().run(conn)?.to_string();
    /// assert!(report.starts_with("health of jobs on "));
    /// assert!(report.contains("page_size"));
    /// # Ok(())
    /// # }
    /// ```
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let warnings = match self.warnings.len() {
            0 => "no warnings".to_owned(),
            1 => "1 warning".to_owned(),
            many => format!("{many} warnings"),
        };
        writeln!(
            f,
            "health of {} on {}: {warnings}",
            self.table, self.backend
        )?;
        for reading in &self.readings {
            writeln!(f, "  {:<28} {}", reading.metric.name(), reading.value)?;
        }
        for warning in &self.warnings {
            writeln!(f, "  warning: {warning}")?;
        }
        Ok(())
    }
}
