//! A holder's update without its changes: `.run(conn)` is found, and refused in words.
use std::convert::Infallible;

use crate::backend::NativeLeaseQuery;
use crate::query::{IncompleteWrite, LeaseStatement};
use crate::sql::NoChanges;
use crate::{ClaimLease, Error};

/// Whether a holder's update has its changes: never, for [`IncompleteWrite`], whose `.run(conn)`
/// a user may reach for before `.set(..)`; this bound is what tells them so. Implemented for no
/// type.
///
/// ```
/// # include!("../doctest_setup.rs");
/// # use diesel::prelude::*;
/// # use diesel_lease::prelude::*;
/// # fn main() -> Result<(), diesel_lease::Error> {
/// # let conn = &mut jobs_connection()?;
/// let won = jobs::table.claim_row(1, Lease::from_secs(30)?).by(&Claim::new("w")?).run::<Job>(conn)?.won().expect("free");
/// // `won.update().run(conn)` does not compile: an update says what it changes.
/// assert!(won.update().set(jobs::status.eq("running")).run(conn)?);
/// # Ok(())
/// # }
/// ```
#[diagnostic::on_unimplemented(
    message = "a holder's update runs once it says what it changes",
    label = "no changes yet",
    note = "add `.set(..)` before `.run(conn)`: `won.update().set(jobs::status.eq(\"done\")).run(conn)`; a renewal or a release alone is `won.renew()` or `won.release()`"
)]
pub trait ChangesGiven {
    /// The error of running a write without its changes, had any type the trait.
    fn given(self) -> Error;
}

impl<T: ClaimLease, A> LeaseStatement<T::Key> for IncompleteWrite<T, A> {
    type Output = Infallible;
}

impl<'q, T: ClaimLease, A, C> NativeLeaseQuery<'q, C, T::Key> for IncompleteWrite<T, A>
where
    NoChanges<T>: ChangesGiven,
{
    fn run_native(self, _: &mut C) -> Result<Infallible, Error> {
        Err(NoChanges::<T>::default().given())
    }
}

impl<T: ClaimLease, A, C> crate::RunLeaseDsl<C> for IncompleteWrite<T, A> {}
