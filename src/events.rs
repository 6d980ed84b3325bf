//! Events for operators, through `tracing` when the `tracing` feature is on: a lease acquired,
//! renewed, lost (a warning), released, reaped, each with its table, owner and token; a write
//! conflict lost.
#![cfg_attr(not(feature = "tracing"), allow(unused_variables))]

use crate::{Claim, ClaimLease};

/// One event of a claim on the table named `$table`: its owner, token and rows as fields.
#[cfg(feature = "tracing")]
macro_rules! claim_event {
    ($level:ident, $table:expr, $claim:expr, $rows:expr, $message:literal
        $(, $name:ident = %$value:expr)*) => {
        tracing::$level!(
            table = $table,
            owner = $claim.owner(),
            token = $claim.token(),
            rows = $rows,
            $($name = %$value,)*
            $message
        )
    };
}

/// A keeper's [`KeeperStats`](crate::KeeperStats) as the fields of one event; durations in
/// microseconds, a margin not yet measured as -1.
#[cfg(feature = "tracing")]
macro_rules! keeper_stats_event {
    ($level:ident, $stats:expr, $message:literal) => {{
        let stats = $stats;
        let micros =
            |duration: std::time::Duration| i64::try_from(duration.as_micros()).unwrap_or(i64::MAX);
        tracing::$level!(
            rounds = stats.rounds,
            late_rounds = stats.late_rounds,
            most_late_us = micros(stats.most_late),
            renewal_statements = stats.renewal_statements,
            failed_renewals = stats.failed_renewals,
            renewal_conflicts = stats.renewal_conflicts,
            rows_renewed = stats.rows_renewed,
            rows_passed_over = stats.rows_passed_over,
            rows_taken_over = stats.rows_taken_over,
            rows_unconfirmed = stats.rows_unconfirmed,
            rows_past_longest_hold = stats.rows_past_longest_hold,
            last_round_us = stats.last_round.map_or(-1, micros),
            smallest_margin_us = stats.smallest_margin.map_or(-1, micros),
            $message
        )
    }};
}

/// A claim won `rows` rows of `T`.
pub(crate) fn emit_acquired<T: ClaimLease>(claim: &Claim, rows: usize) {
    #[cfg(feature = "tracing")]
    claim_event!(info, table_name::<T>(), claim, rows, "lease acquired");
}

/// A keeper renewed `rows` rows of `T`.
pub(crate) fn emit_renewed<T: ClaimLease>(claim: &Claim, rows: usize) {
    #[cfg(feature = "tracing")]
    claim_event!(debug, table_name::<T>(), claim, rows, "lease renewed");
}

/// A keeper found `rows` rows of `table` no longer held, or stopped trusting them, for `reason`.
pub(crate) fn emit_lost(table: &str, claim: &Claim, rows: usize, reason: &dyn std::fmt::Display) {
    #[cfg(feature = "tracing")]
    claim_event!(warn, table, claim, rows, "lease lost", reason = %reason);
}

/// A round passed over `rows` rows of `claim` that another transaction held locked.
pub(crate) fn emit_passed_over<T: ClaimLease>(claim: &Claim, rows: usize) {
    #[cfg(feature = "tracing")]
    claim_event!(
        warn,
        table_name::<T>(),
        claim,
        rows,
        "lease not renewed: rows locked by another transaction"
    );
}

/// A release changed `rows` rows of `T` still held.
pub(crate) fn emit_released<T: ClaimLease>(claim: &Claim, rows: usize) {
    #[cfg(feature = "tracing")]
    claim_event!(info, table_name::<T>(), claim, rows, "lease released");
}

/// A release of `rows` rows of `T` that no caller waits for (a dropped handle, a keeper that
/// stopped) failed with `error`: a warning, since the rows stay held until the lease runs out.
pub(crate) fn emit_not_released<T: ClaimLease>(
    claim: &Claim,
    rows: usize,
    error: &dyn std::fmt::Display,
) {
    #[cfg(feature = "tracing")]
    claim_event!(warn, table_name::<T>(), claim, rows, "lease not released; it runs out on its own", error = %error);
}

/// A release by owner freed `rows` rows of `T` that `owners` held, whatever their claims.
pub(crate) fn emit_released_by_owners<T: ClaimLease>(owners: &[String], rows: usize) {
    #[cfg(feature = "tracing")]
    tracing::info!(
        table = table_name::<T>(),
        owners = owners.join(", "),
        rows,
        "leases released by owner"
    );
}

/// A reap took `rows` outlived rows of `T` from their holders.
pub(crate) fn emit_reaped<T: ClaimLease>(rows: usize) {
    #[cfg(feature = "tracing")]
    tracing::info!(table = table_name::<T>(), rows, "leases reaped");
}

/// `operation` on `table` (for `claim`, if any) lost a write conflict, with `error`: at info
/// level, since it is a lost race, but one whose rate operators want to see.
pub(crate) fn emit_conflict_lost(
    operation: &str,
    table: &str,
    claim: Option<&Claim>,
    error: &dyn std::fmt::Display,
) {
    #[cfg(feature = "tracing")]
    tracing::info!(
        table,
        operation,
        owner = claim.map(Claim::owner),
        token = claim.map(Claim::token),
        error = %error,
        "write conflict lost"
    );
}

/// A keeper's round that renewed anything ended: what the keeper has done so far, as fields,
/// at debug level.
pub(crate) fn emit_keeper_round(stats: &crate::KeeperStats) {
    #[cfg(feature = "tracing")]
    keeper_stats_event!(debug, stats, "keeper round");
}

/// A keeper stopped: what it did, as fields.
pub(crate) fn emit_keeper_stopped(stats: &crate::KeeperStats) {
    #[cfg(feature = "tracing")]
    keeper_stats_event!(info, stats, "keeper stopped");
}

/// A keeper started on a pool whose checkout may wait `checkout`, no shorter than its `margin`:
/// a renewal that waits that long for a connection comes after the keeper has stopped trusting
/// the lease, and work blocked that long in a checkout of the pool learns of the loss after the
/// lease has run out.
pub(crate) fn emit_keeper_checkout_too_slow(
    checkout: std::time::Duration,
    margin: std::time::Duration,
) {
    #[cfg(feature = "tracing")]
    tracing::warn!(
        checkout_timeout_ms = checkout.as_millis() as u64,
        margin_ms = margin.as_millis() as u64,
        "keeper's pool may wait longer for a connection than the keeper's margin: \
         give the pool a connection_timeout below the margin (docs/operations.md, Timeouts)"
    );
}

/// The name operators see for table `T`: its SQL name.
pub(crate) fn table_name<T: crate::ClaimLease>() -> &'static str {
    T::__sql_name()
}
