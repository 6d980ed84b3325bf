//! Claiming a row and learning whether the claim won, from the claiming statement itself.
use diesel::connection::Connection;
use diesel::query_builder::UpdateStatement;
#[cfg(any(feature = "postgres", feature = "sqlite", feature = "mysql"))]
use diesel::{query_dsl::LoadQuery, OptionalExtension};

use crate::{Claim, ClaimLease, Error};

/// Runs a claiming `UPDATE` and gives back the claimed row if, and only if, this claim won it.
///
/// The statement is the caller's: its filter says what may be taken (e.g.
/// [`ClaimLease::claimable`]) and its changeset holds [`ClaimLease::taken`] beside the caller's own
/// assignments, so the claim and the status change are one statement. The answer comes from that
/// statement: `RETURNING` on PostgreSQL and SQLite; on MySQL/MariaDB, which have no `RETURNING`,
/// its matched-row count, then a read of the row by the claim's token (index the token column
/// there). The same code runs on every backend.
///
/// The filter should pick one row, e.g. by primary key: a filter that matches several claims them
/// all, and only the first is given back. Make a new [`Claim`] for each row: on MySQL/MariaDB the
/// row is found by its token, and a token that holds several rows is
/// [`Error::ClaimHoldsSeveralRows`].
///
/// ```
/// # include!("doctest_setup.rs");
/// use diesel::prelude::*;
/// use diesel_lease::prelude::*;
///
/// # fn main() -> Result<(), diesel_lease::Error> {
/// # let conn = &mut jobs_connection()?;
/// let lease = Lease::from_secs(30)?;
/// let claim = Claim::new("worker-1")?;
/// let job: Option<Job> = diesel_lease::update(jobs::table.find(1).filter(jobs::table.claimable(lease)))
///     .set((jobs::table.taken(&claim), jobs::status.eq("running")))
///     .get_if_won(&claim, conn)?;
/// assert_eq!(job.and_then(|job| job.owner).as_deref(), Some("worker-1"));
/// # Ok(())
/// # }
/// ```
pub trait GetIfWonDsl: Sized {
    /// Runs the claim: `Some(row)` when `claim` won it, `None` when the filter matched no row.
    ///
    /// See the [trait's documentation](GetIfWonDsl) for an example.
    fn get_if_won<'q, C, R>(self, claim: &Claim, conn: &mut C) -> Result<Option<R>, Error>
    where
        C: Connection,
        C::Backend: ReportsWinner<'q, Self, C, R>;
}

/// A statement that claims rows of a [`ClaimLease`] table: `diesel::update(..).set(..)` or
/// [`diesel_lease::update(..).set(..)`](crate::update).
///
/// ```
/// # include!("doctest_setup.rs");
/// fn claims_jobs<S: diesel_lease::ClaimingStatement<Table = jobs::table>>(_: S) {}
/// # use diesel::prelude::*;
/// # fn main() {
/// claims_jobs(diesel::update(jobs::table).set(jobs::status.eq("running")));
/// claims_jobs(diesel_lease::update(jobs::table).set(jobs::status.eq("running")));
/// # }
/// ```
pub trait ClaimingStatement {
    /// The table whose rows it claims.
    type Table: ClaimLease;
}

impl<T: ClaimLease, U, V> ClaimingStatement for UpdateStatement<T, U, V> {
    type Table = T;
}

impl<T: ClaimLease, W, Changes: diesel::query_builder::AsChangeset> ClaimingStatement
    for crate::Update<T, W, Changes>
{
    type Table = T;
}

impl<S: ClaimingStatement> GetIfWonDsl for S {
    fn get_if_won<'q, C, R>(self, claim: &Claim, conn: &mut C) -> Result<Option<R>, Error>
    where
        C: Connection,
        C::Backend: ReportsWinner<'q, Self, C, R>,
    {
        <C::Backend as ReportsWinner<'q, Self, C, R>>::report_winner(self, claim, conn)
    }
}

/// How a backend tells whether a claiming statement won, and gives back the row.
///
/// Implemented by the library for each backend; see [`GetIfWonDsl`].
///
/// ```
/// # include!("doctest_setup.rs");
/// use diesel::query_builder::UpdateStatement;
/// use diesel_lease::ReportsWinner;
///
/// fn reports<'q, S, C, R>() where diesel::sqlite::Sqlite: ReportsWinner<'q, S, C, R> {}
/// # fn main() {}
/// ```
pub trait ReportsWinner<'q, Statement, C, R>: diesel::backend::Backend {
    /// Runs `statement` and gives back its row if `claim` won it.
    fn report_winner(statement: Statement, claim: &Claim, conn: &mut C)
        -> Result<Option<R>, Error>;
}

/// The winner of a statement that can return what it changed: its `RETURNING` row.
#[cfg(any(feature = "postgres", feature = "sqlite"))]
pub(crate) fn returned_row<'q, S, C, R>(statement: S, conn: &mut C) -> Result<Option<R>, Error>
where
    C: Connection,
    S: LoadQuery<'q, C, R>,
{
    Ok(diesel::RunQueryDsl::get_result(statement, conn).optional()?)
}

/// The winner of a statement that returns only its matched-row count: the row read back by the
/// token right after. No transaction around the two: inside one, InnoDB would keep the row lock
/// of every refused claim until the COMMIT, queueing contenders. Should the lease run out and
/// another claim take the row in between, the read finds nothing and the claim reports `None`:
/// it has lost the row, and the token guards every later write of the loser.
#[cfg(feature = "mysql")]
pub(crate) fn matched_row<S, C, R>(
    statement: S,
    claim: &Claim,
    conn: &mut C,
) -> Result<Option<R>, Error>
where
    S: ClaimingStatement + diesel::query_dsl::methods::ExecuteDsl<C>,
    C: Connection,
    for<'a> <S::Table as ClaimLease>::RowsHeldBy<'a>: LoadQuery<'a, C, R>,
{
    if S::execute(statement, conn)? == 0 {
        return Ok(None);
    }
    let held = S::Table::default().rows_held_by(claim.token());
    let mut rows: Vec<R> = diesel::RunQueryDsl::load(held, conn)?;
    match rows.len() {
        0 | 1 => Ok(rows.pop()),
        several => Err(Error::ClaimHoldsSeveralRows(several)),
    }
}
