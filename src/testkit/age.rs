//! Time passing for a claim, by the database's clock, without a test sleeping.
use crate::query::{DatedRenewal, Guarded, HeldRows};
use crate::sql::NoChanges;
use crate::{Age, ClaimLease};

/// The write that ages the rows `held` names by `by`: their `claimed_at` is set to the database's
/// now less `by`, as if their claim had last been renewed `by` ago, so that a test sees a lease
/// run out (or come near to it) without sleeping. Guarded by the claim's token, as a holder's
/// every write: rows the claim no longer holds are left alone. Run it for the keys of the rows
/// aged.
///
/// ```
/// # include!("../doctest_setup.rs");
/// use std::time::Duration;
/// use diesel_lease::prelude::*;
/// use diesel_lease::testkit;
///
/// # fn main() -> Result<(), diesel_lease::Error> {
/// # let conn = &mut jobs_connection()?;
/// let lease = Lease::from_secs(30)?;
/// let won = jobs::table.claim_row(1, lease).by(&Claim::new("worker-1")?).run::<Job>(conn)?.won().expect("free");
/// assert_eq!(testkit::age(&won, Age::new(Duration::from_secs(10))?).run(conn)?, [1]);
/// let Claimed::Refused(refused) = jobs::table.claim_row(1, lease).by(&Claim::new("worker-2")?).run::<Job>(conn)? else {
///     panic!("10 s into a lease of 30 s, the row is held");
/// };
/// let Refusal::Held(holder) = refused.why() else { panic!("held") };
/// assert!(holder.age >= Duration::from_secs(10) && holder.frees_in <= Duration::from_secs(20));
/// # Ok(())
/// # }
/// ```
pub fn age<T: ClaimLease>(
    held: impl AsRef<HeldRows<T>>,
    by: Age,
) -> Guarded<T, DatedRenewal, NoChanges<T>, Vec<T::Key>> {
    let micros = i64::try_from(by.as_duration().as_micros()).unwrap_or(i64::MAX);
    held.as_ref().guarded(DatedRenewal::new(micros))
}
