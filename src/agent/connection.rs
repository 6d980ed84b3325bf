//! The statements of the agent locks, each built once and run on any backend's connection.
use diesel::connection::Connection;
use diesel::dsl;
use diesel::prelude::*;
use diesel::query_dsl::methods::ExecuteDsl;
use diesel::query_dsl::LoadQuery;

use super::schema::{conversations, user_settings};
use crate::claim_lease::{
    Claimable, Fresh, HeldBy, Outlived, Released, Renewed, RenewedAgo, Taken, TakenAgo,
};
use crate::refusal::HolderRow;
use crate::sql_types::UtcTimestamp;
use crate::strategy::read_rows;
use crate::{Age, Claim, ClaimLease, Lease, MicrosSince, Now, RecoversFailedReads, UpdateOf};

type Chats = conversations::table;
type Users = user_settings::table;
type ChatById<'a> = dsl::Eq<conversations::id, &'a str>;
type UserById<'a> = dsl::Eq<user_settings::user_id, &'a str>;
pub(super) type ChatOfUser<'a> = dsl::And<ChatById<'a>, dsl::Eq<conversations::user_id, &'a str>>;
type ChatHeldBy<'a> = dsl::And<ChatById<'a>, HeldBy<'a, Chats>>;
type UserHeldBy<'a> = dsl::And<UserById<'a>, HeldBy<'a, Users>>;

pub(crate) type ClaimChat<'a> =
    UpdateOf<dsl::Filter<Chats, dsl::And<ChatOfUser<'a>, Claimable<Chats>>>, Taken<'a, Chats>>;
pub(crate) type KeepChat<'a> = UpdateOf<dsl::Filter<Chats, ChatHeldBy<'a>>, Renewed<Chats>>;
pub(crate) type ClaimUser<'a> =
    UpdateOf<dsl::Filter<Users, dsl::And<UserById<'a>, Claimable<Users>>>, TakenAgo<'a, Users>>;
pub(crate) type CreateUser = dsl::Values<
    dsl::insert_into<Users>,
    (
        dsl::Eq<user_settings::user_id, String>,
        dsl::Eq<user_settings::updated_at, Now<UtcTimestamp>>,
    ),
>;
pub(crate) type ChatHolder<'a> = dsl::Select<
    dsl::Filter<Chats, ChatById<'a>>,
    (
        conversations::user_id,
        (
            conversations::busy_owner,
            conversations::busy_turn_ref,
            MicrosSince<conversations::busy_since>,
            Fresh<Chats>,
        ),
    ),
>;
pub(crate) type UserHolder<'a> = dsl::Select<
    dsl::Filter<Users, UserById<'a>>,
    (
        user_settings::busy_owner,
        user_settings::busy_turn_ref,
        MicrosSince<user_settings::busy_since>,
        Fresh<Users>,
    ),
>;
pub(crate) type ReleaseChat<'a> = UpdateOf<dsl::Filter<Chats, ChatHeldBy<'a>>, Released<Chats>>;
pub(crate) type ReleaseStaleChat<'a> =
    UpdateOf<dsl::Filter<Chats, dsl::And<ChatHeldBy<'a>, Outlived<Chats>>>, Released<Chats>>;
pub(crate) type ReleaseUser<'a> = UpdateOf<dsl::Filter<Users, UserHeldBy<'a>>, Released<Users>>;
pub(crate) type KeepUser<'a> = UpdateOf<dsl::Filter<Users, UserHeldBy<'a>>, RenewedAgo<Users>>;
pub(crate) type HoldsBoth<'a> = dsl::select<
    dsl::And<
        dsl::exists<dsl::Filter<Chats, ChatHeldBy<'a>>>,
        dsl::exists<dsl::Filter<Users, UserHeldBy<'a>>>,
    >,
>;
pub(crate) type HoldsFreshChat<'a> =
    dsl::select<dsl::exists<dsl::Filter<Chats, dsl::And<ChatHeldBy<'a>, Fresh<Chats>>>>>;

mod sealed {
    /// Proof that the caller is this crate: the statement methods of
    /// [`AgentConnection`](super::AgentConnection) skip the validation of
    /// [`AgentLocks`](crate::agent::AgentLocks), so nothing else may call them.
    #[derive(Debug, Clone, Copy)]
    #[allow(unreachable_pub)] // named in a public trait, constructible only here
    pub struct Sealed(pub(crate) ());
}

pub(crate) use sealed::Sealed;

/// A connection the agent locks run on: `PgConnection`, `MysqlConnection`, `SqliteConnection`,
/// and r2d2's pooled connections of each.
///
/// Implemented for every connection whose backend can run the lock statements. Its methods are
/// the statements themselves, for [`AgentLocks`](super::AgentLocks) alone to call: they take a
/// token no other crate can make.
///
/// ```
/// fn runs_agent_locks<C: diesel_lease::agent::AgentConnection>() {}
/// # #[cfg(feature = "sqlite")] {
/// runs_agent_locks::<diesel::SqliteConnection>();
/// runs_agent_locks::<diesel::r2d2::PooledConnection<diesel::r2d2::ConnectionManager<diesel::SqliteConnection>>>();
/// # }
/// # #[cfg(feature = "postgres")]
/// # runs_agent_locks::<diesel::PgConnection>();
/// # #[cfg(feature = "mysql")]
/// # runs_agent_locks::<diesel::MysqlConnection>();
/// ```
#[allow(private_interfaces)]
pub trait AgentConnection: Connection {
    #[doc(hidden)]
    fn take_both(
        &mut self,
        _: Sealed,
        chat: &str,
        user: &str,
        claim: &Claim,
        ttl: Lease,
    ) -> QueryResult<Option<bool>>;
    #[doc(hidden)]
    fn release_both(
        &mut self,
        _: Sealed,
        chat: &str,
        user: &str,
        reference: &str,
    ) -> QueryResult<Option<bool>>;
    #[doc(hidden)]
    fn claim_chat(
        &mut self,
        _: Sealed,
        chat: &str,
        user: &str,
        claim: &Claim,
        ttl: Lease,
    ) -> QueryResult<bool>;
    #[doc(hidden)]
    fn keep_chat(&mut self, _: Sealed, chat: &str, reference: &str) -> QueryResult<bool>;
    #[doc(hidden)]
    fn claim_user(
        &mut self,
        _: Sealed,
        user: &str,
        claim: &Claim,
        ttl: Lease,
        dated_back: Age,
    ) -> QueryResult<bool>;
    #[doc(hidden)]
    fn create_user(&mut self, _: Sealed, user: &str) -> QueryResult<()>;
    #[doc(hidden)]
    fn chat_holder(
        &mut self,
        _: Sealed,
        chat: &str,
        ttl: Lease,
    ) -> QueryResult<Option<(String, HolderRow)>>;
    #[doc(hidden)]
    fn user_holder(&mut self, _: Sealed, user: &str, ttl: Lease) -> QueryResult<Option<HolderRow>>;
    #[doc(hidden)]
    fn release_chat(&mut self, _: Sealed, chat: &str, reference: &str) -> QueryResult<bool>;
    #[doc(hidden)]
    fn release_stale_chat(
        &mut self,
        _: Sealed,
        chat: &str,
        reference: &str,
        ttl: Lease,
    ) -> QueryResult<bool>;
    #[doc(hidden)]
    fn release_user(&mut self, _: Sealed, user: &str, reference: &str) -> QueryResult<bool>;
    #[doc(hidden)]
    fn keep_user(
        &mut self,
        _: Sealed,
        user: &str,
        reference: &str,
        dated_back: Age,
    ) -> QueryResult<bool>;
    #[doc(hidden)]
    fn holds_both(
        &mut self,
        _: Sealed,
        chat: &str,
        user: &str,
        reference: &str,
    ) -> QueryResult<bool>;
    #[doc(hidden)]
    fn holds_fresh_chat(
        &mut self,
        _: Sealed,
        chat: &str,
        reference: &str,
        ttl: Lease,
    ) -> QueryResult<bool>;
}

#[allow(private_interfaces, private_bounds)]
impl<C> AgentConnection for C
where
    C: Connection,
    C::Backend: BothLocksAtOnce<C> + RecoversFailedReads,
    for<'a> ClaimChat<'a>: ExecuteDsl<C>,
    for<'a> KeepChat<'a>: ExecuteDsl<C>,
    for<'a> ClaimUser<'a>: ExecuteDsl<C>,
    CreateUser: ExecuteDsl<C>,
    for<'a> ChatHolder<'a>: LoadQuery<'a, C, (String, HolderRow)>,
    for<'a> UserHolder<'a>: LoadQuery<'a, C, HolderRow>,
    for<'a> ReleaseChat<'a>: ExecuteDsl<C>,
    for<'a> ReleaseStaleChat<'a>: ExecuteDsl<C>,
    for<'a> ReleaseUser<'a>: ExecuteDsl<C>,
    for<'a> KeepUser<'a>: ExecuteDsl<C>,
    for<'a> HoldsBoth<'a>: LoadQuery<'a, C, bool>,
    for<'a> HoldsFreshChat<'a>: LoadQuery<'a, C, bool>,
{
    fn take_both(
        &mut self,
        _: Sealed,
        chat: &str,
        user: &str,
        claim: &Claim,
        ttl: Lease,
    ) -> QueryResult<Option<bool>> {
        C::Backend::take_both(self, chat, user, claim, ttl)
    }

    fn release_both(
        &mut self,
        _: Sealed,
        chat: &str,
        user: &str,
        reference: &str,
    ) -> QueryResult<Option<bool>> {
        C::Backend::release_both(self, chat, user, reference)
    }

    fn claim_chat(
        &mut self,
        _: Sealed,
        chat: &str,
        user: &str,
        claim: &Claim,
        ttl: Lease,
    ) -> QueryResult<bool> {
        let chats = conversations::table;
        let of_user = conversations::id
            .eq(chat)
            .and(conversations::user_id.eq(user));
        let statement: ClaimChat<'_> =
            crate::update(chats.filter(of_user.and(chats.claimable(ttl)))).set(chats.taken(claim));
        changed_any(statement, self)
    }

    fn keep_chat(&mut self, _: Sealed, chat: &str, reference: &str) -> QueryResult<bool> {
        let chats = conversations::table;
        let statement: KeepChat<'_> =
            crate::update(chats.filter(chat_held_by(chat, reference))).set(chats.renewed());
        changed_any(statement, self)
    }

    fn claim_user(
        &mut self,
        _: Sealed,
        user: &str,
        claim: &Claim,
        ttl: Lease,
        dated_back: Age,
    ) -> QueryResult<bool> {
        let users = user_settings::table;
        let statement: ClaimUser<'_> =
            crate::update(users.filter(user_settings::user_id.eq(user).and(users.claimable(ttl))))
                .set(users.taken_ago(claim, dated_back));
        changed_any(statement, self)
    }

    fn create_user(&mut self, _: Sealed, user: &str) -> QueryResult<()> {
        // Owned: Diesel's insert statements execute only when their values are 'static.
        let statement: CreateUser = diesel::insert_into(user_settings::table).values((
            user_settings::user_id.eq(user.to_owned()),
            user_settings::updated_at.eq(Now::default()),
        ));
        statement.execute(self).map(drop)
    }

    fn chat_holder(
        &mut self,
        _: Sealed,
        chat: &str,
        ttl: Lease,
    ) -> QueryResult<Option<(String, HolderRow)>> {
        let chats = conversations::table;
        let query: ChatHolder<'_> = chats.filter(conversations::id.eq(chat)).select((
            conversations::user_id,
            (
                conversations::busy_owner,
                conversations::busy_turn_ref,
                MicrosSince::new(conversations::busy_since),
                chats.fresh(ttl),
            ),
        ));
        read_rows(self, |conn| query.get_result(conn).optional())
    }

    fn user_holder(&mut self, _: Sealed, user: &str, ttl: Lease) -> QueryResult<Option<HolderRow>> {
        let users = user_settings::table;
        let query: UserHolder<'_> = users.filter(user_settings::user_id.eq(user)).select((
            user_settings::busy_owner,
            user_settings::busy_turn_ref,
            MicrosSince::new(user_settings::busy_since),
            users.fresh(ttl),
        ));
        read_rows(self, |conn| query.get_result(conn).optional())
    }

    fn release_chat(&mut self, _: Sealed, chat: &str, reference: &str) -> QueryResult<bool> {
        let chats = conversations::table;
        let statement: ReleaseChat<'_> =
            crate::update(chats.filter(chat_held_by(chat, reference))).set(chats.released());
        changed_any(statement, self)
    }

    fn release_stale_chat(
        &mut self,
        _: Sealed,
        chat: &str,
        reference: &str,
        ttl: Lease,
    ) -> QueryResult<bool> {
        let chats = conversations::table;
        let stale = chat_held_by(chat, reference).and(chats.outlived(ttl));
        let statement: ReleaseStaleChat<'_> =
            crate::update(chats.filter(stale)).set(chats.released());
        changed_any(statement, self)
    }

    fn release_user(&mut self, _: Sealed, user: &str, reference: &str) -> QueryResult<bool> {
        let users = user_settings::table;
        let statement: ReleaseUser<'_> =
            crate::update(users.filter(user_held_by(user, reference))).set(users.released());
        changed_any(statement, self)
    }

    fn keep_user(
        &mut self,
        _: Sealed,
        user: &str,
        reference: &str,
        dated_back: Age,
    ) -> QueryResult<bool> {
        let users = user_settings::table;
        let statement: KeepUser<'_> = crate::update(users.filter(user_held_by(user, reference)))
            .set(users.renewed_ago(dated_back));
        changed_any(statement, self)
    }

    fn holds_both(
        &mut self,
        _: Sealed,
        chat: &str,
        user: &str,
        reference: &str,
    ) -> QueryResult<bool> {
        let query: HoldsBoth<'_> = diesel::select(
            dsl::exists(conversations::table.filter(chat_held_by(chat, reference))).and(
                dsl::exists(user_settings::table.filter(user_held_by(user, reference))),
            ),
        );
        read_rows(self, |conn| query.get_result(conn))
    }

    fn holds_fresh_chat(
        &mut self,
        _: Sealed,
        chat: &str,
        reference: &str,
        ttl: Lease,
    ) -> QueryResult<bool> {
        let fresh = chat_held_by(chat, reference).and(conversations::table.fresh(ttl));
        let query: HoldsFreshChat<'_> =
            diesel::select(dsl::exists(conversations::table.filter(fresh)));
        read_rows(self, |conn| query.get_result(conn))
    }
}

/// A backend on which a turn may take, or release, both of its locks in one statement, without
/// a transaction: whether it changed both (`None`: the backend has no such statement).
pub(crate) trait BothLocksAtOnce<C> {
    fn take_both(
        conn: &mut C,
        chat: &str,
        user: &str,
        claim: &Claim,
        ttl: Lease,
    ) -> QueryResult<Option<bool>>;

    fn release_both(
        conn: &mut C,
        chat: &str,
        user: &str,
        reference: &str,
    ) -> QueryResult<Option<bool>>;
}

/// PostgreSQL and SQLite: a transaction costs them a round trip at each end, no more.
macro_rules! both_locks_in_a_transaction {
    ($($feature:literal $backend:ty),+) => {$(
        #[cfg(feature = $feature)]
        impl<C> BothLocksAtOnce<C> for $backend {
            fn take_both(_: &mut C, _: &str, _: &str, _: &Claim, _: Lease) -> QueryResult<Option<bool>> {
                Ok(None)
            }

            fn release_both(_: &mut C, _: &str, _: &str, _: &str) -> QueryResult<Option<bool>> {
                Ok(None)
            }
        }
    )+};
}

both_locks_in_a_transaction!("postgres" diesel::pg::Pg, "sqlite" diesel::sqlite::Sqlite);

/// Runs an update; whether it changed (on MySQL: matched) any row.
fn changed_any<S: ExecuteDsl<C>, C: Connection>(statement: S, conn: &mut C) -> QueryResult<bool> {
    Ok(S::execute(statement, conn)? > 0)
}

fn chat_held_by<'a>(chat: &'a str, reference: &'a str) -> ChatHeldBy<'a> {
    conversations::id
        .eq(chat)
        .and(conversations::table.held_by(reference))
}

fn user_held_by<'a>(user: &'a str, reference: &'a str) -> UserHeldBy<'a> {
    user_settings::user_id
        .eq(user)
        .and(user_settings::table.held_by(reference))
}
