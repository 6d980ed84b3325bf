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
/// on that connection alone; a [`Keeper`](crate::Keeper) of a pool of `$connection`s keeps
/// claims of any backend. A wait ([`Waiting`](crate::Waiting)) runs there with no entry of its
/// own: it is made of the claims and reads above, and sees a transaction of `$connection`'s as
/// the caller's. The lease columns' changesets and predicates (`taken`, `outlived`,
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
        $crate::__statement_on_variants!($connection $variants ClaimRow[T, F, Changes, Selection, By] { T: $crate::ClaimLease, });
        $crate::__statement_on_variants!($connection $variants ClaimBatch[T, F, O, Changes, Selection, By] { T: $crate::ClaimLease, });
        $crate::__statement_on_variants!($connection $variants Guarded[T, Kind, Changes, A] { T: $crate::ClaimLease, });
        $crate::__statement_on_variants!($connection $variants Reap[T, F, O, Changes] { T: $crate::ClaimLease, });
        $crate::__statement_on_variants!($connection $variants OwnerRelease[T, Owners, Changes] { T: $crate::ClaimLease, });
        $crate::__statement_on_variants!($connection $variants Holders[T, Which] { T: $crate::ClaimLease, });
        $crate::__statement_on_variants!($connection $variants HeldPerOwner[T] { T: $crate::ClaimLease, });
        $crate::__statement_on_variants!($connection $variants Why[T, F] { T: $crate::ClaimLease, });
        $crate::__statement_on_variants!($connection $variants KeptRelease[T, Changes] { T: $crate::ClaimLease, });
        $crate::__statement_on_variants!($connection $variants KeeperRenewal[T] { T: $crate::ClaimLease, });
        $crate::__statement_on_variants!($connection $variants KeeperRound[T] { T: $crate::ClaimLease, });
        $crate::__statement_on_variants!($connection $variants KeeperRelease[T] { T: $crate::ClaimLease, });
        $crate::__statement_on_variants!($connection $variants DatabaseTime[] {});
        $crate::__statement_on_variants!($connection $variants Health[T] { T: $crate::__diesel::Table, });
        $crate::__node_on_variants!($connection $variants Now[ST] {});
        $crate::__node_on_variants!($connection $variants Ago[ST] {});
        $crate::__node_on_variants!($connection $variants MicrosSince[T] {});
        $crate::__node_on_variants!($connection $variants ClockMicros[] {});
        $crate::__node_on_variants!($connection $variants KeysIn[Key, One, ST] { ST: $crate::KeyType, });
        $crate::__node_on_variants!($connection $variants PairsIn[Key, One, Token, ST] { ST: $crate::KeyType, });
        $crate::__node_on_variants!($connection $variants TextIs[Column, Value] {});
        $crate::__node_on_variants!($connection $variants TextIn[Column] {});
    };
}

/// One statement of [`multi_connection!`]: run on the connection inside.
#[doc(hidden)]
#[macro_export]
macro_rules! __statement_on_variants {
    (
        $connection:ident { $($variant:ident($inner:ty)),+ $(,)? }
        $statement:ident [$($param:ident),*] { $($bounds:tt)* }
    ) => {
        impl<'q, LeaseRow, $($param),*> $crate::LeaseQuery<'q, $connection, LeaseRow>
            for $crate::$statement<$($param),*>
        where
            $($bounds)*
            $(Self: $crate::LeaseQuery<'q, $inner, LeaseRow>,)+
        {
            fn run_lease(
                self,
                conn: &mut $connection,
            ) -> ::core::result::Result<
                <Self as $crate::LeaseStatement<LeaseRow>>::Output,
                $crate::Error,
            > {
                match conn {
                    $($connection::$variant(conn) => {
                        <Self as $crate::LeaseQuery<'q, $inner, LeaseRow>>::run_lease(self, conn)
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
        impl<$($param),*> $crate::__diesel::query_builder::QueryFragment<
            <$connection as $crate::__diesel::Connection>::Backend,
        > for $crate::sql::$node<$($param),*>
        where
            $($bounds)*
            $(Self: $crate::__diesel::query_builder::QueryFragment<
                <$inner as $crate::__diesel::Connection>::Backend,
            >,)+
        {
            fn walk_ast<'b>(
                &'b self,
                pass: $crate::__diesel::query_builder::AstPass<
                    '_,
                    'b,
                    <$connection as $crate::__diesel::Connection>::Backend,
                >,
            ) -> $crate::__diesel::QueryResult<()> {
                <<$connection as $crate::__diesel::Connection>::Backend>::walk_variant_ast(self, pass)
            }
        }
    };
}
