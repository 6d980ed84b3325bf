//! Every statement of the library on a connection enum of Diesel's `#[derive(MultiConnection)]`,
//! dispatched at run time to the connection inside: each backend's whole strategy runs on its own
//! connection (MySQL's claims are a transaction of several statements, not one SQL text that
//! Diesel's derive could render for whichever backend is inside).

/// Lets every statement of diesel-lease run on `$connection`, an enum of Diesel's
/// `#[derive(diesel::MultiConnection)]`, so that a function over every backend takes
/// `&mut $connection` and needs no bound: write it beside the derive, with the enum's variants
/// and the connection each holds.
///
/// A statement runs on the connection inside, with that backend's strategy and SQL, as it would
/// on that connection alone, given the enum or a pool's connection of it alike
/// (`.run(&mut pool.get()?)`, as `.run(&mut *pool.get()?)`); a [`Keeper`](crate::Keeper) of a
/// pool of `$connection`s keeps claims of any backend. A wait ([`Waiting`](crate::Waiting)) runs
/// whole on the connection inside, and is refused inside a transaction of `$connection`'s as it
/// would be there. The lease columns' changesets and predicates (`taken`, `outlived`,
/// [`now`](crate::now), ..) may go into Diesel's own statements on `$connection` too.
///
/// ```
/// # include!("doctest_setup.rs");
/// # #[cfg(feature = "sqlite")]
/// # mod example {
/// # use super::*;
/// use diesel::prelude::*;
/// use diesel_lease::prelude::*;
///
/// #[derive(diesel::MultiConnection)]
/// pub enum AnyConnection {
///     // A variant per backend: `Postgresql(diesel::PgConnection)`, `Mysql(..)`, ..
///     Sqlite(diesel::SqliteConnection),
/// }
///
/// diesel_lease::multi_connection!(AnyConnection { Sqlite(diesel::SqliteConnection) });
///
/// /// Claims job `id` for `worker`, and finishes it: on any backend, without a bound.
/// pub fn finish_job(conn: &mut AnyConnection, id: i64, worker: &Claim) -> Result<bool, diesel_lease::Error> {
///     let claimed = jobs::table
///         .claim_row(id, Lease::from_secs(30)?)
///         .by(worker)
///         .set(jobs::status.eq("running"))
///         .returning(jobs::id)
///         .run::<i64>(conn)?;
///     match claimed.won() {
///         Some(won) => won.release().set(jobs::status.eq("done")).run(conn),
///         None => Ok(false),
///     }
/// }
///
/// # pub fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let conn = &mut AnyConnection::Sqlite(jobs_connection()?);
/// assert!(finish_job(conn, 1, &Claim::new("worker-1")?)?);
/// let status: String = jobs::table.find(1).select(jobs::status).get_result(conn)?;
/// assert_eq!(status, "done");
/// # Ok(())
/// # }
/// # }
/// # #[cfg(feature = "sqlite")]
/// # fn main() -> Result<(), Box<dyn std::error::Error>> { example::main() }
/// # #[cfg(not(feature = "sqlite"))]
/// # fn main() {}
/// ```
#[macro_export]
macro_rules! multi_connection {
    ($connection:ident $variants:tt) => {
        $crate::__statements_on_variants!($connection $variants);
        $crate::__node_on_variants!($connection $variants Now[ST] {});
        $crate::__node_on_variants!($connection $variants Ago[ST] {});
        $crate::__node_on_variants!($connection $variants MicrosSince[T] {});
        $crate::__node_on_variants!($connection $variants ClockMicros[] {});
        $crate::__node_on_variants!($connection $variants KeysIn[Key, One, ST] { ST: $crate::__private::KeyType, });
        $crate::__node_on_variants!($connection $variants PairsIn[Key, One, Token, ST] { ST: $crate::__private::KeyType, });
        $crate::__node_on_variants!($connection $variants TextIs[Column, Value] {});
        $crate::__node_on_variants!($connection $variants TextIn[Column] {});
        impl $crate::__private::backend::AsMulti<$connection> for $connection {
            fn as_multi(&mut self) -> &mut $connection {
                self
            }
        }
    };
}

/// Every statement of [`multi_connection!`], on the enum or on whatever holds it (a pool's
/// connection): run by the enum's backend on the connection inside.
#[doc(hidden)]
#[macro_export]
macro_rules! __statements_on_variants {
    ($connection:ident { $($variant:ident($inner:ty)),+ $(,)? }) => {
        impl<'q, C, S, U> $crate::__private::backend::RunsStatement<'q, C, S, U>
            for <$connection as $crate::__private::diesel::Connection>::Backend
        where
            C: $crate::__private::backend::AsMulti<$connection>,
            S: $crate::__private::LeaseStatement<U>,
            $(S: $crate::LeaseQuery<'q, $inner, U>,)+
        {
            fn run_statement(
                statement: S,
                conn: &mut C,
            ) -> ::core::result::Result<S::Output, $crate::Error> {
                match $crate::__private::backend::AsMulti::as_multi(conn) {
                    $($connection::$variant(conn) => {
                        <S as $crate::LeaseQuery<'q, $inner, U>>::run_lease(statement, conn)
                    })+
                }
            }
        }
    };
}

/// One SQL node of [`multi_connection!`]: written as the backend inside writes it.
#[doc(hidden)]
#[macro_export]
macro_rules! __node_on_variants {
    (
        $connection:ident { $($variant:ident($inner:ty)),+ $(,)? }
        $node:ident [$($param:ident),*] { $($bounds:tt)* }
    ) => {
        impl<$($param),*> $crate::__private::diesel::query_builder::QueryFragment<
            <$connection as $crate::__private::diesel::Connection>::Backend,
        > for $crate::__private::sql::$node<$($param),*>
        where
            $($bounds)*
            $(Self: $crate::__private::diesel::query_builder::QueryFragment<
                <$inner as $crate::__private::diesel::Connection>::Backend,
            >,)+
        {
            fn walk_ast<'b>(
                &'b self,
                pass: $crate::__private::diesel::query_builder::AstPass<
                    '_,
                    'b,
                    <$connection as $crate::__private::diesel::Connection>::Backend,
                >,
            ) -> $crate::__private::diesel::QueryResult<()> {
                <<$connection as $crate::__private::diesel::Connection>::Backend>::walk_variant_ast(self, pass)
            }
        }
    };
}
