//! How a backend runs a whole statement of the library's on a connection of its: the one step
//! between `.run(conn)` and a backend's strategy, so that a `multi_connection!` enum's backend can
//! pass a statement to the connection inside, whatever wraps the enum (a pool's connection).
use crate::{Error, LeaseStatement};

/// How backend `Self` runs statement `S` on connection `C`, giving back rows as `U`: what
/// [`LeaseQuery`](crate::LeaseQuery) asks of a connection's backend. PostgreSQL, MySQL/MariaDB
/// and SQLite run each statement with their own strategy; the backend of an enum of Diesel's
/// `#[derive(MultiConnection)]` runs it on the connection inside the enum, once
/// [`multi_connection!`](crate::multi_connection) is written beside the derive: on the enum
/// itself and on a pool's connection of it alike. Code generic over the connection bounds
/// [`LeaseQuery`](crate::LeaseQuery), never this.
///
/// ```
/// # include!("../doctest_setup.rs");
/// use diesel_lease::{__private::backend::RunsStatement, dsl, HeldRows};
///
/// fn runs<'q, C, S, U>()
/// where
///     DocBackend: RunsStatement<'q, C, S, U>,
///     S: diesel_lease::__private::LeaseStatement<U>,
/// {
/// }
/// # fn main() {
/// runs::<DocConnection, dsl::Release<HeldRows<jobs::table>>, i64>();
/// # }
/// ```
#[diagnostic::on_unimplemented(
    message = "diesel-lease's statements do not run on backend `{Self}`",
    label = "no statement of diesel-lease runs on `{Self}`",
    note = "on an enum of `#[derive(diesel::MultiConnection)]`, write `diesel_lease::multi_connection!(EnumName {{ Variant(Connection), .. }})` beside the derive; on a connection of one backend, turn on diesel-lease's Cargo feature for it (`postgres`, `mysql` or `sqlite`)",
    note = "code generic over the connection bounds each statement it runs by `LeaseQuery`, as Diesel's `LoadQuery`, not by this trait: `where for<'q> dsl::Release<HeldRows<jobs::table>>: LeaseQuery<'q, C, i64>` (a holder's statements are named in `diesel_lease::dsl`, the others by the function that builds them, with `#[diesel::dsl::auto_type(dsl_path = \"diesel_lease::dsl\")]`)"
)]
pub trait RunsStatement<'q, C, S: LeaseStatement<U>, U> {
    /// Runs `statement` on `conn`.
    fn run_statement(statement: S, conn: &mut C) -> Result<S::Output, Error>;
}

/// A statement of the library's as it runs on connection `C` of a backend of the library's own
/// (PostgreSQL, MySQL/MariaDB, SQLite), with that backend's strategy: how those backends
/// implement [`RunsStatement`]. Implemented by each statement; never named by users.
///
/// ```
/// # include!("../doctest_setup.rs");
/// use diesel_lease::{__private::backend::NativeLeaseQuery, dsl, HeldRows};
///
/// fn native<'q, S: NativeLeaseQuery<'q, DocConnection, i64>>() {}
/// # fn main() {
/// native::<dsl::Release<HeldRows<jobs::table>>>();
/// # }
/// ```
pub trait NativeLeaseQuery<'q, C, U>: LeaseStatement<U> {
    /// Runs the statement on `conn`, with its backend's strategy.
    fn run_native(self, conn: &mut C) -> Result<Self::Output, Error>;
}

/// Backend `$backend`, one of the library's own, runs every statement with its own strategy.
macro_rules! runs_natively {
    ($backend:ty) => {
        impl<'q, C, S, U> $crate::__private::backend::RunsStatement<'q, C, S, U> for $backend
        where
            S: $crate::__private::backend::NativeLeaseQuery<'q, C, U>,
        {
            fn run_statement(statement: S, conn: &mut C) -> Result<S::Output, $crate::Error> {
                statement.run_native(conn)
            }
        }
    };
}
pub(crate) use runs_natively;

/// The enum of Diesel's `#[derive(MultiConnection)]` that connection `Self` is or holds: the
/// enum itself (implemented by [`multi_connection!`](crate::multi_connection)) or a pool's
/// connection of it. How the enum's backend reaches the connection inside.
#[doc(hidden)]
pub trait AsMulti<E> {
    /// The enum.
    fn as_multi(&mut self) -> &mut E;
}

impl<E: diesel::r2d2::R2D2Connection + 'static> AsMulti<E>
    for diesel::r2d2::PooledConnection<diesel::r2d2::ConnectionManager<E>>
{
    fn as_multi(&mut self) -> &mut E {
        self
    }
}
