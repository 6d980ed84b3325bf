//! The agent locks on an enum of Diesel's `#[derive(MultiConnection)]`: each of their statements
//! dispatched at run time to the connection inside, as `multi_connection!` does for the lease
//! layer's.

/// Lets the agent locks run on `$connection`, an enum of Diesel's
/// `#[derive(diesel::MultiConnection)]`, beside [`multi_connection!`](diesel_lease::multi_connection)
/// (which the locks' keeper needs): the same variants, and the connection each holds.
///
/// ```
/// # include!("doctest_setup.rs");
/// # #[cfg(feature = "sqlite")]
/// # mod example {
/// # use super::*;
/// use diesel_lease_agent::{AgentLocks, TurnRef};
/// use diesel_lease::Lease;
///
/// #[derive(diesel::MultiConnection)]
/// pub enum AnyConnection {
///     // A variant per backend: `Postgresql(diesel::PgConnection)`, `Mysql(..)`, ..
///     Sqlite(diesel::SqliteConnection),
/// }
///
/// diesel_lease::multi_connection!(AnyConnection { Sqlite(diesel::SqliteConnection) });
/// diesel_lease_agent::agent_multi_connection!(AnyConnection { Sqlite(diesel::SqliteConnection) });
///
/// # pub fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let conn = &mut AnyConnection::Sqlite(agent_connection()?);
/// let locks = AgentLocks::new("node-a", Lease::from_secs(120)?)?;
/// let turn = TurnRef::new("turn-1")?;
/// locks.acquire(conn, "chat-1", "user-1", &turn)?;
/// assert!(locks.held(conn, "chat-1", "user-1", &turn)?);
/// locks.release(conn, "chat-1", "user-1", &turn)?;
/// # Ok(())
/// # }
/// # }
/// # #[cfg(feature = "sqlite")]
/// # fn main() -> Result<(), Box<dyn std::error::Error>> { example::main() }
/// # #[cfg(not(feature = "sqlite"))]
/// # fn main() {}
/// ```
#[macro_export]
macro_rules! agent_multi_connection {
    ($connection:ident $variants:tt) => {
        // For the enum and for whatever holds it (a pool's connection).
        impl<C: $crate::__lease::__private::backend::AsMulti<$connection>> $crate::AgentBackend<C>
            for <$connection as $crate::__lease::__private::diesel::Connection>::Backend
        {
            $crate::__agent_statement_on_variants!($connection $variants
                take_both(chat: &str, user: &str, claim: &$crate::__lease::Claim, lease: $crate::__lease::Lease) -> Option<bool>);
            $crate::__agent_statement_on_variants!($connection $variants
                release_both(chat: &str, user: &str, claim: &$crate::__lease::Claim) -> Option<bool>);
            $crate::__agent_statement_on_variants!($connection $variants
                claim_chat(chat: &str, user: &str, claim: &$crate::__lease::Claim, lease: $crate::__lease::Lease) -> bool);
            $crate::__agent_statement_on_variants!($connection $variants
                keep_chat(chat: &str, claim: &$crate::__lease::Claim) -> bool);
            $crate::__agent_statement_on_variants!($connection $variants
                claim_user(user: &str, claim: &$crate::__lease::Claim, lease: $crate::__lease::Lease, dated_back: $crate::__lease::Age) -> bool);
            $crate::__agent_statement_on_variants!($connection $variants
                create_user(user: &str) -> ());
            $crate::__agent_statement_on_variants!($connection $variants
                chat_holder(chat: &str, lease: $crate::__lease::Lease) -> Option<(String, $crate::__lease::Refusal)>);
            $crate::__agent_statement_on_variants!($connection $variants
                user_holder(user: &str, lease: $crate::__lease::Lease) -> Option<$crate::__lease::Refusal>);
            $crate::__agent_statement_on_variants!($connection $variants
                release_chat(chat: &str, claim: &$crate::__lease::Claim) -> bool);
            $crate::__agent_statement_on_variants!($connection $variants
                release_stale_chat(chat: &str, claim: &$crate::__lease::Claim, lease: $crate::__lease::Lease) -> bool);
            $crate::__agent_statement_on_variants!($connection $variants
                release_user(user: &str, claim: &$crate::__lease::Claim) -> bool);
            $crate::__agent_statement_on_variants!($connection $variants
                keep_user(user: &str, claim: &$crate::__lease::Claim, dated_back: $crate::__lease::Age) -> bool);
            $crate::__agent_statement_on_variants!($connection $variants
                holds_both(chat: &str, user: &str, claim: &$crate::__lease::Claim) -> bool);
            $crate::__agent_statement_on_variants!($connection $variants
                holds_fresh_chat(chat: &str, reference: &str, lease: $crate::__lease::Lease) -> bool);
        }
    };
}

/// One statement of [`agent_multi_connection!`]: run on the connection inside, passing on the
/// agent locks' seal.
#[doc(hidden)]
#[macro_export]
macro_rules! __agent_statement_on_variants {
    ($connection:ident $variants:tt $name:ident($($arg:ident: $type:ty),*) -> $output:ty) => {
        fn $name(
            seal: $crate::Sealed,
            conn: &mut C,
            $($arg: $type),*
        ) -> $crate::__lease::__private::diesel::QueryResult<$output> {
            $crate::__agent_dispatch!(conn, $connection $variants, $name(seal, conn, $($arg),*))
        }
    };
}

/// The `match` of [`__agent_statement_on_variants!`]: `$call`'s arguments, whole, in each arm.
#[doc(hidden)]
#[macro_export]
macro_rules! __agent_dispatch {
    ($conn:ident, $connection:ident { $($variant:ident($inner:ty)),+ $(,)? }, $name:ident $call:tt) => {
        match $crate::__lease::__private::backend::AsMulti::as_multi($conn) {
            $($connection::$variant($conn) => <
                <$inner as $crate::__lease::__private::diesel::Connection>::Backend
                    as $crate::AgentBackend<$inner>
            >::$name $call,)+
        }
    };
}
