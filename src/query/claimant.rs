//! Who claims: the one way every claim says it, single rows and batches alike.
use crate::Claim;

/// Who claims a row: a [`Claim`] (owner and token), given by `.by(&claim)`; [`NoClaimant`]
/// until then, and a claim without one does not run.
///
/// ```
/// use diesel_lease::{Claim, __private::Claimant};
///
/// fn who<C: Claimant>(claimant: C) -> Claim {
///     claimant.into_claim()
/// }
/// assert_eq!(who(Claim::new("worker-1")?).owner(), "worker-1");
/// # Ok::<(), diesel_lease::Error>(())
/// ```
#[diagnostic::on_unimplemented(
    message = "a claim runs once it says who claims",
    label = "no claimant yet",
    note = "add `.by(&claim)` before `.run(conn)`, with a `diesel_lease::Claim`"
)]
pub trait Claimant {
    /// The claim.
    fn into_claim(self) -> Claim;
}

impl Claimant for Claim {
    fn into_claim(self) -> Claim {
        self
    }
}

/// No claimant yet: what a claim builder holds until `.by(&claim)`.
///
/// ```
/// let _nobody = diesel_lease::__private::NoClaimant;
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NoClaimant;
