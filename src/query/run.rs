//! How every statement diesel-lease builds is run: `.run(conn)`, bounded by [`LeaseQuery`].
use diesel::Connection;

use crate::backend::RunsStatement;
use crate::Error;

/// A statement diesel-lease builds that can run on connection `C`, giving back rows as `U`
/// (chosen by the caller, like Diesel's `load::<U>`, where the statement gives back rows of the
/// caller's choosing). It is the one bound code generic over the connection writes, as Diesel's
/// `LoadQuery` is for a query, on the statement's type: a function that builds the statement,
/// named by Diesel's `auto_type`, or a holder's statement named in [`dsl`](crate::dsl).
///
/// ```
/// # include!("../doctest_setup.rs");
/// use diesel::prelude::*;
/// use diesel_lease::prelude::*;
///
/// /// The claim of job `id`: its type is named `job_claim` too.
/// #[diesel::dsl::auto_type(dsl_path = "diesel_lease::dsl")]
/// fn job_claim<'a>(id: i64, lease: Lease, worker: &'a Claim) -> _ {
///     jobs::table.claim_row(id, lease).by(worker)
/// }
///
/// /// Claims job `id` for `worker`, on any connection whose backend can run the claim.
/// fn claim_job<C>(conn: &mut C, id: i64, worker: &Claim) -> Result<Option<Job>, diesel_lease::Error>
/// where
///     for<'a, 'q> job_claim<'a>: LeaseQuery<'q, C, Job>,
/// {
///     let outcome = job_claim(id, Lease::from_secs(30)?, worker).run(conn)?;
///     Ok(outcome.won().map(|won| won.into_row()))
/// }
///
/// # fn main() -> Result<(), diesel_lease::Error> {
/// # let conn = &mut jobs_connection()?;
/// let job = claim_job(conn, 1, &Claim::new("worker-1")?)?;
/// assert_eq!(job.map(|job| job.status).as_deref(), Some("queued"));
/// # Ok(())
/// # }
/// ```
#[diagnostic::on_unimplemented(
    message = "this statement of diesel-lease cannot run on `{C}` giving back `{U}`",
    label = "cannot run on `{C}`",
    note = "code generic over the connection bounds each statement it runs, as Diesel's `LoadQuery`: `where for<'q> dsl::Release<HeldRows<jobs::table>>: LeaseQuery<'q, C, i64>` (a holder's statements are named in `diesel_lease::dsl`, the others by the function that builds them, with `#[diesel::dsl::auto_type(dsl_path = \"diesel_lease::dsl\")]`); on a connection of one backend, diesel-lease's Cargo feature for it must be on; on an enum of `#[derive(diesel::MultiConnection)]`, write `diesel_lease::multi_connection!(EnumName {{ Variant(Connection), .. }})` beside it"
)]
pub trait LeaseQuery<'q, C, U>: LeaseStatement<U> {
    /// Runs the statement; see [`RunLeaseDsl::run`].
    fn run_lease(self, conn: &mut C) -> Result<Self::Output, Error>;
}

// Every statement runs as its connection's backend runs it: one impl, so that the backend of a
// `multi_connection!` enum, which the user's crate may implement traits for, decides for the
// enum and for whatever holds it (a pool's connection, which no crate but Diesel's may).
impl<'q, S, C, U> LeaseQuery<'q, C, U> for S
where
    S: LeaseStatement<U>,
    C: Connection,
    C::Backend: RunsStatement<'q, C, S, U>,
{
    fn run_lease(self, conn: &mut C) -> Result<S::Output, Error> {
        <C::Backend as RunsStatement<'q, C, S, U>>::run_statement(self, conn)
    }
}

/// What a statement of diesel-lease's gives back when it runs with rows `U`, whatever the
/// connection: [`Claimed`](crate::Claimed) for a claim of one row, [`Batch`](crate::Batch) for a
/// batch, the keys changed for a reap or a release of several rows, whether it still held the
/// row for a holder's write to one row.
///
/// ```
/// # include!("../doctest_setup.rs");
/// use diesel_lease::{__private::LeaseStatement, dsl, Claimed};
///
/// fn outcome<Q: LeaseStatement<Job, Output = Claimed<Job, jobs::table>>>() {}
/// # fn main() {
/// outcome::<dsl::By<dsl::ClaimRow<jobs::table>>>();
/// # }
/// ```
pub trait LeaseStatement<U> {
    /// What running the statement gives back.
    type Output;
}

/// The one verb that finishes every statement diesel-lease builds: `.run(conn)`, with the row
/// type first where the caller chooses it (`.run::<Job>(conn)`), as Diesel's `load::<Job>`.
///
/// ```
/// # include!("../doctest_setup.rs");
/// use diesel::prelude::*;
/// use diesel_lease::prelude::*;
///
/// # fn main() -> Result<(), diesel_lease::Error> {
/// # let conn = &mut jobs_connection()?;
/// let worker = Claim::new("worker-1")?;
/// let outcome = jobs::table.claim_row(1, Lease::from_secs(30)?).by(&worker).run::<Job>(conn)?;
/// let won = outcome.won().expect("job 1 is free");
/// assert!(won.release().set(jobs::status.eq("done")).run(conn)?);
/// # Ok(())
/// # }
/// ```
pub trait RunLeaseDsl<C>: Sized {
    /// Runs the statement on `conn`. Invalid input was refused when the statement was built or
    /// is refused here, before anything is sent; a database error is an [`Error`], never a
    /// panic.
    fn run<'q, U>(self, conn: &mut C) -> Result<<Self as LeaseStatement<U>>::Output, Error>
    where
        Self: LeaseQuery<'q, C, U>,
    {
        self.run_lease(conn)
    }
}
