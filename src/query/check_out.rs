//! Where a wait run on a pool gets a connection for each attempt, and gives it back before it
//! sleeps.
use std::ops::DerefMut;

use diesel::connection::Connection;
use diesel::r2d2::{ConnectionManager, Pool, PooledConnection, R2D2Connection};

use crate::backend::in_no_transaction;
use crate::Error;

/// What a wait run with [`Waiting::run_on`](crate::Waiting::run_on) checks a connection out of
/// for each attempt and gives it back to before it sleeps: an r2d2 pool of Diesel's
/// (`Pool<ConnectionManager<C>>`), or a pool of your own.
///
/// ```
/// # include!("../doctest_setup.rs");
/// use diesel_lease::CheckOut;
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let pool = jobs_pool()?;
/// let conn = pool.check_out()?; // as `pool.get()?`, with the library's error
/// drop(conn); // back in the pool
/// # Ok(())
/// # }
/// ```
pub trait CheckOut {
    /// The connection the statements run on.
    type Connection: Connection;

    /// A connection checked out, given back when it is dropped.
    type CheckedOut<'a>: DerefMut<Target = Self::Connection>
    where
        Self: 'a;

    /// Checks a connection out, waiting for one as the pool waits (r2d2: up to its
    /// `connection_timeout`); a pool that gives none is an [`Error::Pool`].
    fn check_out(&self) -> Result<Self::CheckedOut<'_>, Error>;
}

impl<C: R2D2Connection + 'static> CheckOut for Pool<ConnectionManager<C>> {
    type Connection = C;
    type CheckedOut<'a> = PooledConnection<ConnectionManager<C>>;

    fn check_out(&self) -> Result<Self::CheckedOut<'_>, Error> {
        Ok(self.get()?)
    }
}

/// Where each attempt of a wait runs: on the caller's connection, held throughout, or on one
/// checked out for the attempt alone.
pub(crate) trait Lend<C> {
    /// Refuses the wait before anything is sent, if it cannot run here.
    fn ready(&mut self) -> Result<(), Error>;

    /// Runs one attempt on a connection.
    fn lend<R>(&mut self, attempt: impl FnOnce(&mut C) -> Result<R, Error>) -> Result<R, Error>;
}

/// The caller's connection, held across the wait's sleeps.
pub(crate) struct Held<'c, C>(pub(crate) &'c mut C);

impl<C: Connection> Lend<C> for Held<'_, C> {
    fn ready(&mut self) -> Result<(), Error> {
        if in_no_transaction(self.0) {
            Ok(())
        } else {
            Err(Error::WaitInTransaction)
        }
    }

    fn lend<R>(&mut self, attempt: impl FnOnce(&mut C) -> Result<R, Error>) -> Result<R, Error> {
        attempt(self.0)
    }
}

/// A connection checked out of a pool for each attempt, given back before the wait sleeps.
pub(crate) struct CheckedOut<'p, P>(pub(crate) &'p P);

impl<P: CheckOut> Lend<P::Connection> for CheckedOut<'_, P> {
    fn ready(&mut self) -> Result<(), Error> {
        Ok(())
    }

    fn lend<R>(
        &mut self,
        attempt: impl FnOnce(&mut P::Connection) -> Result<R, Error>,
    ) -> Result<R, Error> {
        let mut conn = self.0.check_out()?;
        // A connection handed out inside a transaction would claim inside it, unseen by others
        // until it commits: refused as in a transaction of the caller's.
        Held(&mut *conn).ready()?;
        attempt(&mut conn)
    }
}
