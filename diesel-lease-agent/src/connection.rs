//! The statements of the agent locks, each written once, with the lease layer's public
//! changesets, predicates and reads, and stamped for each backend whose feature is on: on one
//! backend every bound resolves, so that a caller's code needs none but [`AgentConnection`].
use diesel::connection::{Connection, LoadConnection};
use diesel::dsl;
use diesel::prelude::*;
use diesel::query_dsl::methods::ExecuteDsl;

use super::reads::read_optional;
use super::schema::{conversations, user_settings};
use diesel_lease::dsl::TextIs;
use diesel_lease::{Age, Claim, ClaimLease, Lease, LeaseDsl, Refusal};

mod sealed {
    /// Proof that the caller is the agent locks: the statements of
    /// [`AgentBackend`](super::AgentBackend) skip the validation of
    /// [`AgentLocks`](crate::AgentLocks), so nothing else may call them.
    /// Named by `agent_multi_connection!`'s impls, which pass it on; constructible only here.
    #[derive(Debug, Clone, Copy)]
    pub struct Sealed(pub(crate) ());
}

pub use sealed::Sealed;

/// A connection the agent locks run on: `PgConnection`, `MysqlConnection`, `SqliteConnection`,
/// and r2d2's pooled connections of each, whose backend's feature is on. The one bound of code
/// generic over the connection.
///
/// ```
/// fn runs_agent_locks<C: diesel_lease_agent::AgentConnection>() {}
/// # #[cfg(feature = "sqlite")] {
/// runs_agent_locks::<diesel::SqliteConnection>();
/// runs_agent_locks::<diesel::r2d2::PooledConnection<diesel::r2d2::ConnectionManager<diesel::SqliteConnection>>>();
/// # }
/// # #[cfg(feature = "postgres")]
/// # runs_agent_locks::<diesel::PgConnection>();
/// # #[cfg(feature = "mysql")]
/// # runs_agent_locks::<diesel::MysqlConnection>();
/// ```
#[diagnostic::on_unimplemented(
    message = "the agent locks do not run on `{Self}`",
    note = "turn on diesel-lease-agent's Cargo feature for its backend: `postgres`, `mysql` or `sqlite`"
)]
pub trait AgentConnection: Connection<Backend: AgentBackend<Self>> {}

impl<C: Connection<Backend: AgentBackend<C>>> AgentConnection for C {}

/// A backend on which the agent locks run through connections `C`: its statements, for
/// [`AgentLocks`](super::AgentLocks) alone to call (they take a token no other crate can make).
///
/// ```
/// # #[cfg(feature = "sqlite")] {
/// fn runs<DB: diesel_lease_agent::AgentBackend<diesel::SqliteConnection>>() {}
/// runs::<diesel::sqlite::Sqlite>();
/// # }
/// ```
#[allow(missing_docs)] // the statements are sealed
pub trait AgentBackend<C>: diesel::backend::Backend {
    #[doc(hidden)]
    fn take_both(
        _: Sealed,
        conn: &mut C,
        chat: &str,
        user: &str,
        claim: &Claim,
        lease: Lease,
    ) -> QueryResult<Option<bool>>;
    #[doc(hidden)]
    fn release_both(
        _: Sealed,
        conn: &mut C,
        chat: &str,
        user: &str,
        claim: &Claim,
    ) -> QueryResult<Option<bool>>;
    #[doc(hidden)]
    fn claim_chat(
        _: Sealed,
        conn: &mut C,
        chat: &str,
        user: &str,
        claim: &Claim,
        lease: Lease,
    ) -> QueryResult<bool>;
    #[doc(hidden)]
    fn keep_chat(_: Sealed, conn: &mut C, chat: &str, claim: &Claim) -> QueryResult<bool>;
    #[doc(hidden)]
    fn claim_user(
        _: Sealed,
        conn: &mut C,
        user: &str,
        claim: &Claim,
        lease: Lease,
        dated_back: Age,
    ) -> QueryResult<bool>;
    #[doc(hidden)]
    fn create_user(_: Sealed, conn: &mut C, user: &str) -> QueryResult<()>;
    #[doc(hidden)]
    fn chat_holder(
        _: Sealed,
        conn: &mut C,
        chat: &str,
        lease: Lease,
    ) -> QueryResult<Option<(String, Refusal)>>;
    #[doc(hidden)]
    fn user_holder(
        _: Sealed,
        conn: &mut C,
        user: &str,
        lease: Lease,
    ) -> QueryResult<Option<Refusal>>;
    #[doc(hidden)]
    fn release_chat(_: Sealed, conn: &mut C, chat: &str, claim: &Claim) -> QueryResult<bool>;
    #[doc(hidden)]
    fn release_stale_chat(
        _: Sealed,
        conn: &mut C,
        chat: &str,
        claim: &Claim,
        lease: Lease,
    ) -> QueryResult<bool>;
    #[doc(hidden)]
    fn release_user(_: Sealed, conn: &mut C, user: &str, claim: &Claim) -> QueryResult<bool>;
    #[doc(hidden)]
    fn keep_user(
        _: Sealed,
        conn: &mut C,
        user: &str,
        claim: &Claim,
        dated_back: Age,
    ) -> QueryResult<bool>;
    #[doc(hidden)]
    fn holds_both(
        _: Sealed,
        conn: &mut C,
        chat: &str,
        user: &str,
        claim: &Claim,
    ) -> QueryResult<bool>;
    #[doc(hidden)]
    fn holds_fresh_chat(
        _: Sealed,
        conn: &mut C,
        chat: &str,
        reference: &str,
        lease: Lease,
    ) -> QueryResult<bool>;
}

/// The statements of [`AgentBackend`] for `$backend`; `$both` is the module whose `take_both`
/// and `release_both` change both locks in one statement, where the backend has one.
macro_rules! agent_statements {
    ($feature:literal, $backend:ty, $both:path) => {
        #[cfg(feature = $feature)]
        impl<C: LoadConnection<Backend = $backend>> AgentBackend<C> for $backend {
            fn take_both(
                _: Sealed,
                conn: &mut C,
                chat: &str,
                user: &str,
                claim: &Claim,
                lease: Lease,
            ) -> QueryResult<Option<bool>> {
                use $both as both;
                both::take_both(conn, chat, user, claim, lease)
            }

            fn release_both(
                _: Sealed,
                conn: &mut C,
                chat: &str,
                user: &str,
                claim: &Claim,
            ) -> QueryResult<Option<bool>> {
                use $both as both;
                both::release_both(conn, chat, user, claim)
            }

            fn claim_chat(
                _: Sealed,
                conn: &mut C,
                chat: &str,
                user: &str,
                claim: &Claim,
                lease: Lease,
            ) -> QueryResult<bool> {
                let chats = conversations::table;
                let of_user = conversations::id
                    .eq(chat)
                    .and(conversations::user_id.eq(user));
                let claimable = chats.filter(of_user.and(chats.claimable(lease)));
                changed_any(
                    diesel_lease::update(claimable).set(chats.taken(claim)),
                    conn,
                )
            }

            fn keep_chat(_: Sealed, conn: &mut C, chat: &str, claim: &Claim) -> QueryResult<bool> {
                let chats = conversations::table;
                let held = chats.filter(chat_held_by(chat, claim));
                changed_any(diesel_lease::update(held).set(chats.renewed()), conn)
            }

            fn claim_user(
                _: Sealed,
                conn: &mut C,
                user: &str,
                claim: &Claim,
                lease: Lease,
                dated_back: Age,
            ) -> QueryResult<bool> {
                let users = user_settings::table;
                let claimable =
                    users.filter(user_settings::user_id.eq(user).and(users.claimable(lease)));
                changed_any(
                    diesel_lease::update(claimable).set(users.taken_ago(claim, dated_back)),
                    conn,
                )
            }

            fn create_user(_: Sealed, conn: &mut C, user: &str) -> QueryResult<()> {
                // Owned: Diesel's insert statements execute only when their values are 'static.
                diesel::insert_into(user_settings::table)
                    .values((
                        user_settings::user_id.eq(user.to_owned()),
                        user_settings::updated_at.eq(diesel_lease::now()),
                    ))
                    .execute(conn)
                    .map(drop)
            }

            fn chat_holder(
                _: Sealed,
                conn: &mut C,
                chat: &str,
                lease: Lease,
            ) -> QueryResult<Option<(String, Refusal)>> {
                let chats = conversations::table;
                let read = chats
                    .filter(conversations::id.eq(chat))
                    .select((conversations::user_id, chats.holder(lease)));
                read_optional(read, conn)
            }

            fn user_holder(
                _: Sealed,
                conn: &mut C,
                user: &str,
                lease: Lease,
            ) -> QueryResult<Option<Refusal>> {
                let users = user_settings::table;
                let read = users
                    .filter(user_settings::user_id.eq(user))
                    .select(users.holder(lease));
                read_optional(read, conn)
            }

            fn release_chat(
                _: Sealed,
                conn: &mut C,
                chat: &str,
                claim: &Claim,
            ) -> QueryResult<bool> {
                let chats = conversations::table;
                let held = chats.filter(chat_held_by(chat, claim));
                changed_any(diesel_lease::update(held).set(chats.released()), conn)
            }

            fn release_stale_chat(
                _: Sealed,
                conn: &mut C,
                chat: &str,
                claim: &Claim,
                lease: Lease,
            ) -> QueryResult<bool> {
                let chats = conversations::table;
                let stale = chats.filter(chat_held_by(chat, claim).and(chats.outlived(lease)));
                changed_any(diesel_lease::update(stale).set(chats.released()), conn)
            }

            fn release_user(
                _: Sealed,
                conn: &mut C,
                user: &str,
                claim: &Claim,
            ) -> QueryResult<bool> {
                let users = user_settings::table;
                let held = users.filter(user_held_by(user, claim));
                changed_any(diesel_lease::update(held).set(users.released()), conn)
            }

            fn keep_user(
                _: Sealed,
                conn: &mut C,
                user: &str,
                claim: &Claim,
                dated_back: Age,
            ) -> QueryResult<bool> {
                let users = user_settings::table;
                let held = users.filter(user_held_by(user, claim));
                changed_any(
                    diesel_lease::update(held).set(users.renewed_ago(dated_back)),
                    conn,
                )
            }

            fn holds_both(
                _: Sealed,
                conn: &mut C,
                chat: &str,
                user: &str,
                claim: &Claim,
            ) -> QueryResult<bool> {
                let chat = dsl::exists(conversations::table.filter(chat_held_by(chat, claim)));
                let user = dsl::exists(user_settings::table.filter(user_held_by(user, claim)));
                Ok(read_optional(diesel::select(chat.and(user)), conn)?.unwrap_or(false))
            }

            fn holds_fresh_chat(
                _: Sealed,
                conn: &mut C,
                chat: &str,
                reference: &str,
                lease: Lease,
            ) -> QueryResult<bool> {
                let fresh = chat_of_turn(chat, reference).and(conversations::table.fresh(lease));
                let read = diesel::select(dsl::exists(conversations::table.filter(fresh)));
                Ok(read_optional(read, conn)?.unwrap_or(false))
            }
        }
    };
}

agent_statements!("postgres", diesel::pg::Pg, in_a_transaction);
agent_statements!("sqlite", diesel::sqlite::Sqlite, in_a_transaction);
agent_statements!("mysql", diesel::mysql::Mysql, super::mysql);

/// PostgreSQL and SQLite have no statement that changes both locks at once, nor need one: a
/// transaction costs them a round trip at each end, no more.
#[cfg(any(feature = "postgres", feature = "sqlite"))]
mod in_a_transaction {
    use diesel::QueryResult;

    use diesel_lease::{Claim, Lease};

    pub(super) fn take_both<C>(
        _: &mut C,
        _: &str,
        _: &str,
        _: &Claim,
        _: Lease,
    ) -> QueryResult<Option<bool>> {
        Ok(None)
    }

    pub(super) fn release_both<C>(
        _: &mut C,
        _: &str,
        _: &str,
        _: &Claim,
    ) -> QueryResult<Option<bool>> {
        Ok(None)
    }
}

/// Runs an update; whether it changed (on MySQL: matched) any row.
fn changed_any<S: ExecuteDsl<C>, C: Connection>(statement: S, conn: &mut C) -> QueryResult<bool> {
    Ok(S::execute(statement, conn)? > 0)
}

type ChatOfTurn<'a> = dsl::And<
    dsl::Eq<conversations::id, &'a str>,
    diesel_lease::dsl::HeldBy<'a, conversations::table>,
>;
type ChatHeldBy<'a> = dsl::And<ChatOfTurn<'a>, TextIs<conversations::busy_owner, &'a str>>;
type UserHeldBy<'a> = dsl::And<
    dsl::And<
        dsl::Eq<user_settings::user_id, &'a str>,
        diesel_lease::dsl::HeldBy<'a, user_settings::table>,
    >,
    TextIs<user_settings::busy_owner, &'a str>,
>;

/// The conversation's lock as the turn `reference` holds it, on whichever node: what
/// [`fresh`](super::AgentLocks::fresh) asks about.
fn chat_of_turn<'a>(chat: &'a str, reference: &'a str) -> ChatOfTurn<'a> {
    conversations::id
        .eq(chat)
        .and(conversations::table.held_by(reference))
}

/// The conversation's lock as `claim` holds it: its token and its node, since a turn's reference
/// is the caller's and may reach two nodes (a request retried onto another).
fn chat_held_by<'a>(chat: &'a str, claim: &'a Claim) -> ChatHeldBy<'a> {
    chat_of_turn(chat, claim.token()).and(TextIs::new(conversations::busy_owner, claim.owner()))
}

/// The user's lock as `claim` holds it: its token and its node.
fn user_held_by<'a>(user: &'a str, claim: &'a Claim) -> UserHeldBy<'a> {
    user_settings::user_id
        .eq(user)
        .and(user_settings::table.held_by(claim.token()))
        .and(TextIs::new(user_settings::busy_owner, claim.owner()))
}
