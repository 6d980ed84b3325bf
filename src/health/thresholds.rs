//! The thresholds past which a reading of a table's health is a warning.
use std::time::Duration;

use crate::Error;

/// The thresholds a [health reading](crate::LeaseDsl::health) judges its readings by; each
/// backend uses those of the metrics it reads. The defaults:
///
/// | threshold | default | backend |
/// | --- | --- | --- |
/// | [`min_hot_update_share`](Self::min_hot_update_share) | 90% | PostgreSQL |
/// | [`max_dead_row_share`](Self::max_dead_row_share) | 20% | PostgreSQL |
/// | [`max_since_vacuum`](Self::max_since_vacuum) | 1 day | PostgreSQL |
/// | [`max_transaction_age`](Self::max_transaction_age) | 5 minutes | PostgreSQL, MySQL/MariaDB |
/// | [`max_history_list_length`](Self::max_history_list_length) | 100,000 | MySQL/MariaDB |
/// | [`max_wal_frames_left`](Self::max_wal_frames_left) | 1,000 | SQLite |
/// | [`max_free_space_share`](Self::max_free_space_share) | 50% | MySQL/MariaDB, SQLite |
/// | [`min_sample`](Self::min_sample) | 1,000 | every share and the vacuum's age |
///
/// A share is judged only once what it is a share of counts at least `min_sample` (updates,
/// dead rows, pages): on a table of ten rows, one dead row is no news.
///
/// ```
/// use std::time::Duration;
/// use diesel_lease::HealthThresholds;
///
/// let thresholds = HealthThresholds::default().max_transaction_age(Duration::from_secs(60));
/// assert_eq!(thresholds.transaction_age(), Duration::from_secs(60));
/// assert_eq!(thresholds.hot_update_share(), 0.9);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HealthThresholds {
    hot_update_share: f64,
    dead_row_share: f64,
    since_vacuum: Duration,
    transaction_age: Duration,
    history_list_length: u64,
    wal_frames_left: u64,
    free_space_share: f64,
    sample: u64,
}

impl Default for HealthThresholds {
    /// The defaults of the table above.
    ///
    /// ```
    /// let thresholds = diesel_lease::HealthThresholds::default();
    /// assert_eq!(thresholds.sample(), 1_000);
    /// ```
    fn default() -> Self {
        Self {
            hot_update_share: 0.9,
            dead_row_share: 0.2,
            since_vacuum: Duration::from_secs(24 * 3_600),
            transaction_age: Duration::from_secs(5 * 60),
            history_list_length: 100_000,
            wal_frames_left: 1_000,
            free_space_share: 0.5,
            sample: 1_000,
        }
    }
}

/// A setter and a getter of each threshold.
macro_rules! thresholds {
    ($($(#[$doc:meta])* $setter:ident / $getter:ident: $type:ty;)+) => {
        impl HealthThresholds {$(
            $(#[$doc])*
            pub fn $setter(self, $getter: $type) -> Self {
                Self { $getter, ..self }
            }

            #[doc = concat!("The threshold [`", stringify!($setter), "`](Self::", stringify!($setter), ") sets.")]
            ///
            /// ```
            /// let thresholds = diesel_lease::HealthThresholds::default();
            #[doc = concat!("let _ = thresholds.", stringify!($getter), "();")]
            /// ```
            pub fn $getter(&self) -> $type {
                self.$getter
            }
        )+}
    };
}

thresholds! {
    /// PostgreSQL: warn when fewer updates than this share were HOT. A renewal writes
    /// `claimed_at` alone; if an index covers it, or its page has no room, the renewal writes a
    /// new entry in every index of the table. A share from 0 to 1.
    ///
    /// ```
    /// let thresholds = diesel_lease::HealthThresholds::default().min_hot_update_share(0.95);
    /// assert_eq!(thresholds.hot_update_share(), 0.95);
    /// ```
    min_hot_update_share / hot_update_share: f64;
    /// PostgreSQL: warn when dead row versions are more than this share of the table's row
    /// versions. A share from 0 to 1.
    ///
    /// ```
    /// let thresholds = diesel_lease::HealthThresholds::default().max_dead_row_share(0.1);
    /// assert_eq!(thresholds.dead_row_share(), 0.1);
    /// ```
    max_dead_row_share / dead_row_share: f64;
    /// PostgreSQL: warn when the table, with dead rows waiting, was last vacuumed longer ago than
    /// this, or never.
    ///
    /// ```
    /// use std::time::Duration;
    /// let thresholds = diesel_lease::HealthThresholds::default().max_since_vacuum(Duration::from_secs(3_600));
    /// assert_eq!(thresholds.since_vacuum(), Duration::from_secs(3_600));
    /// ```
    max_since_vacuum / since_vacuum: Duration;
    /// PostgreSQL and MySQL/MariaDB: warn when the oldest transaction that keeps old row versions
    /// has been open longer than this.
    ///
    /// ```
    /// use std::time::Duration;
    /// let thresholds = diesel_lease::HealthThresholds::default().max_transaction_age(Duration::from_secs(30));
    /// assert_eq!(thresholds.transaction_age(), Duration::from_secs(30));
    /// ```
    max_transaction_age / transaction_age: Duration;
    /// MySQL/MariaDB: warn when the history list is longer than this.
    ///
    /// ```
    /// let thresholds = diesel_lease::HealthThresholds::default().max_history_list_length(10_000);
    /// assert_eq!(thresholds.history_list_length(), 10_000);
    /// ```
    max_history_list_length / history_list_length: u64;
    /// SQLite: warn when a passive checkpoint leaves more than this many frames in the
    /// write-ahead log.
    ///
    /// ```
    /// let thresholds = diesel_lease::HealthThresholds::default().max_wal_frames_left(100);
    /// assert_eq!(thresholds.wal_frames_left(), 100);
    /// ```
    max_wal_frames_left / wal_frames_left: u64;
    /// MySQL/MariaDB and SQLite: warn when free pages are more than this share of all pages. A
    /// share from 0 to 1.
    ///
    /// ```
    /// let thresholds = diesel_lease::HealthThresholds::default().max_free_space_share(0.25);
    /// assert_eq!(thresholds.free_space_share(), 0.25);
    /// ```
    max_free_space_share / free_space_share: f64;
    /// The least count a share (or the vacuum's age) is judged on: updates for the HOT share,
    /// dead rows for the dead share and the vacuum, pages for the free space.
    ///
    /// ```
    /// let thresholds = diesel_lease::HealthThresholds::default().min_sample(1);
    /// assert_eq!(thresholds.sample(), 1);
    /// ```
    min_sample / sample: u64;
}

impl HealthThresholds {
    /// Each share is a number from 0 to 1, or [`Error::InvalidThreshold`].
    pub(crate) fn check(&self) -> Result<(), Error> {
        let shares = [
            ("min_hot_update_share", self.hot_update_share),
            ("max_dead_row_share", self.dead_row_share),
            ("max_free_space_share", self.free_space_share),
        ];
        match shares
            .iter()
            .find(|(_, share)| !(0.0..=1.0).contains(share))
        {
            Some((name, share)) => Err(Error::InvalidThreshold(format!(
                "{name} is {share}: a share is a number from 0 to 1"
            ))),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_share_outside_zero_to_one_is_refused() {
        assert!(HealthThresholds::default().check().is_ok());
        for share in [-0.1, 1.01, f64::NAN, f64::INFINITY] {
            let refused = HealthThresholds::default()
                .max_dead_row_share(share)
                .check();
            assert!(
                matches!(refused, Err(Error::InvalidThreshold(_))),
                "{share}"
            );
        }
        assert!(HealthThresholds::default()
            .min_hot_update_share(1.0)
            .check()
            .is_ok());
    }
}
