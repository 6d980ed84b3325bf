//! The connections the task locks run on, and their statements: each one of the lease layer's,
//! so that whatever connection runs those (one backend's, or an enum of Diesel's
//! `#[derive(MultiConnection)]` given `multi_connection!`) runs the task locks, and code generic
//! over the connection writes one bound, [`TaskConnection`].
use diesel::query_dsl::methods::ExecuteDsl;
use diesel::r2d2::R2D2Connection;
use diesel::result::{DatabaseErrorKind, Error as DieselError};
use diesel::ExpressionMethods;

use super::schema::task_locks;
use diesel_lease::{
    dsl, Claim, Claimed, Error, Holds, Keepable, Keeper, KeeperSettings, Kept, Lease, LeaseDsl,
    LeaseQuery, RunLeaseDsl, Won,
};

/// A connection the task locks run on, through an r2d2 pool of it: `PgConnection`,
/// `MysqlConnection` and `SqliteConnection` whose backend's feature is on, and an enum of
/// Diesel's `#[derive(diesel::MultiConnection)]` beside which
/// [`multi_connection!`](diesel_lease::multi_connection) is written. The one bound of code generic over
/// the connection.
///
/// ```
/// fn runs_task_locks<C: diesel_lease_tasks::TaskConnection>() {}
/// # #[cfg(feature = "sqlite")]
/// runs_task_locks::<diesel::SqliteConnection>();
/// # #[cfg(feature = "postgres")]
/// # runs_task_locks::<diesel::PgConnection>();
/// # #[cfg(feature = "mysql")]
/// # runs_task_locks::<diesel::MysqlConnection>();
/// ```
#[diagnostic::on_unimplemented(
    message = "the task locks do not run on `{Self}`",
    note = "turn on diesel-lease-tasks' Cargo feature for its backend (`postgres`, `mysql` or `sqlite`); on an enum of `#[derive(diesel::MultiConnection)]`, write `diesel_lease::multi_connection!` beside it"
)]
pub trait TaskConnection: sealed::TaskStatements {}

// Not recommended: a missing bound is then said as `TaskConnection`, not as one of the lease
// layer's statements it stands for.
#[diagnostic::do_not_recommend]
impl<C: sealed::TaskStatements> TaskConnection for C {}

/// The claim of task `name`'s lock, whose type `auto_type` names after it.
#[diesel::dsl::auto_type(dsl_path = "diesel_lease::dsl")]
fn task_claim<'a>(name: &'a str, lease: Lease, claim: &'a Claim) -> _ {
    task_locks::table
        .claim_row(name, lease)
        .by(claim)
        .returning(task_locks::name)
}
/// The creation of a task's row.
type CreateTask =
    dsl::Values<dsl::insert_into<task_locks::table>, dsl::Eq<task_locks::name, String>>;
/// The release of a kept lock.
type ReleaseTask = dsl::Release<Kept<task_locks::table>>;

mod sealed {
    use super::*;

    /// The statements of the task locks, for [`TaskLocks`](crate::TaskLocks) alone to
    /// call: sealed, so that they stay the library's to change.
    pub trait TaskStatements: R2D2Connection + 'static {
        /// Claims the lock of task `name` for `claim`, in one statement.
        fn claim_task(
            &mut self,
            name: &str,
            claim: &Claim,
            lease: Lease,
        ) -> Result<Claimed<String, task_locks::table>, Error>;

        /// Creates the row of task `name`, free; a row another node created first is as good.
        fn create_task(&mut self, name: &str) -> Result<(), Error>;

        /// Hands a won lock to `keeper`, kept under `settings` (its run's hold).
        fn keep_task(
            keeper: &Keeper<Self>,
            won: &Won<String, task_locks::table>,
            settings: KeeperSettings,
        ) -> Result<Kept<task_locks::table>, Error>;

        /// Releases a kept lock (dates it, before its shortest hold), guarded by its token; the
        /// names released, none when the run no longer held it.
        fn release_task(&mut self, kept: &Kept<task_locks::table>) -> Result<Vec<String>, Error>;
    }

    #[diagnostic::do_not_recommend]
    impl<C> TaskStatements for C
    where
        C: R2D2Connection + 'static,
        for<'a, 'q> task_claim<'a>: LeaseQuery<'q, C, String>,
        CreateTask: ExecuteDsl<C>,
        task_locks::table: Keepable<C>,
        ReleaseTask: for<'q> LeaseQuery<'q, C, String>,
    {
        fn claim_task(
            &mut self,
            name: &str,
            claim: &Claim,
            lease: Lease,
        ) -> Result<Claimed<String, task_locks::table>, Error> {
            task_claim(name, lease, claim).run::<String>(self)
        }

        fn create_task(&mut self, name: &str) -> Result<(), Error> {
            // A plain INSERT, its unique violation taken as a row another node created: Diesel
            // gives an enum of `#[derive(MultiConnection)]` no ON CONFLICT, and a task's row is
            // created once in the database's life.
            let create =
                diesel::insert_into(task_locks::table).values(task_locks::name.eq(name.to_owned()));
            match ExecuteDsl::execute(create, self) {
                Ok(_) | Err(DieselError::DatabaseError(DatabaseErrorKind::UniqueViolation, _)) => {
                    Ok(())
                }
                Err(error) => Err(error.into()),
            }
        }

        fn keep_task(
            keeper: &Keeper<Self>,
            won: &Won<String, task_locks::table>,
            settings: KeeperSettings,
        ) -> Result<Kept<task_locks::table>, Error> {
            keeper.keep_with(won, settings)
        }

        fn release_task(&mut self, kept: &Kept<task_locks::table>) -> Result<Vec<String>, Error> {
            kept.release().run(self)
        }
    }
}
