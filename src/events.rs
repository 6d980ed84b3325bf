//! Events for operators, through `tracing` when the `tracing` feature is on: a lease acquired,
//! renewed, lost (a warning), released, reaped, each with its table, owner and token.
#![cfg_attr(not(feature = "tracing"), allow(unused_variables))]

use crate::Claim;

/// The table's Rust path: what the events call it.
#[cfg(feature = "tracing")]
fn table<T>() -> &'static str {
    std::any::type_name::<T>()
}

/// A claim won `rows` rows of `T`.
pub(crate) fn acquired<T>(claim: &Claim, rows: usize) {
    #[cfg(feature = "tracing")]
    tracing::info!(
        table = table::<T>(),
        owner = claim.owner(),
        token = claim.token(),
        rows,
        "lease acquired"
    );
}

/// A keeper renewed `rows` rows of `T`.
pub(crate) fn renewed<T>(claim: &Claim, rows: usize) {
    #[cfg(feature = "tracing")]
    tracing::debug!(
        table = table::<T>(),
        owner = claim.owner(),
        token = claim.token(),
        rows,
        "lease renewed"
    );
}

/// A keeper found `rows` rows of `T` no longer held, or stopped trusting them, for `reason`.
pub(crate) fn lost<T>(claim: &Claim, rows: usize, reason: &dyn std::fmt::Display) {
    #[cfg(feature = "tracing")]
    tracing::warn!(
        table = table::<T>(),
        owner = claim.owner(),
        token = claim.token(),
        rows,
        %reason,
        "lease lost"
    );
}

/// A release changed `rows` rows of `T` still held.
pub(crate) fn released<T>(claim: &Claim, rows: usize) {
    #[cfg(feature = "tracing")]
    tracing::info!(
        table = table::<T>(),
        owner = claim.owner(),
        token = claim.token(),
        rows,
        "lease released"
    );
}

/// A reap took `rows` outlived rows of `T` from their holders.
pub(crate) fn reaped<T>(rows: usize) {
    #[cfg(feature = "tracing")]
    tracing::info!(table = table::<T>(), rows, "leases reaped");
}
