//! MySQL/MariaDB: a turn takes both of its locks in one multi-table `UPDATE`, and releases them
//! in another, each atomic on its own. In a transaction either would cost eight round trips,
//! because Diesel sends `BEGIN` and `COMMIT` through `batch_execute`, three round trips each;
//! these statements, prepared once, cost one.
use diesel::dsl;
use diesel::mysql::Mysql;
use diesel::prelude::*;
use diesel::query_builder::{AstPass, QueryFragment, QueryId};
use diesel::sql_types::{Nullable, Text};

use super::schema::{conversations, user_settings};
use diesel_lease::dsl::{Claimable, HeldBy, Now, Null, TextIs};
use diesel_lease::{Claim, ClaimLease, Lease, NoFence};

type Chats = conversations::table;
type Users = user_settings::table;
type ChatOfUser<'a> =
    dsl::And<dsl::Eq<conversations::id, &'a str>, dsl::Eq<conversations::user_id, &'a str>>;
type ChatAndUser<'a> = dsl::And<ChatOfUser<'a>, dsl::Eq<user_settings::user_id, &'a str>>;
type ChatHeldBy<'a> = dsl::And<HeldBy<'a, Chats>, TextIs<conversations::busy_owner, &'a str>>;
type UserHeldBy<'a> = dsl::And<HeldBy<'a, Users>, TextIs<user_settings::busy_owner, &'a str>>;

/// `UPDATE conversations STRAIGHT_JOIN user_settings ON <the chat's user> SET <chat>, <user>
/// WHERE <condition>`: one row of each table, both changed or neither. Its SQL is fixed by its
/// type (every value is bound), so it is prepared once.
#[derive(QueryId)]
struct OnBoth<Condition, ChatSet, UserSet> {
    on: dsl::Eq<user_settings::user_id, conversations::user_id>,
    condition: Condition,
    chat: ChatSet,
    user: UserSet,
}

impl<Condition, ChatSet, UserSet> OnBoth<Condition, ChatSet, UserSet>
where
    Self: QueryFragment<Mysql> + QueryId,
{
    fn new(condition: Condition, chat: ChatSet, user: UserSet) -> Self {
        Self {
            on: user_settings::user_id.eq(conversations::user_id),
            condition,
            chat,
            user,
        }
    }

    /// Whether both rows matched, and so changed: the statement is its own transaction.
    fn changed_both<C: Connection<Backend = Mysql>>(self, conn: &mut C) -> QueryResult<bool> {
        Ok(self.execute(conn)? == 2)
    }
}

impl<Condition, ChatSet, UserSet> QueryFragment<Mysql> for OnBoth<Condition, ChatSet, UserSet>
where
    Condition: QueryFragment<Mysql>,
    ChatSet: QueryFragment<Mysql>,
    UserSet: QueryFragment<Mysql>,
{
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Mysql>) -> QueryResult<()> {
        // STRAIGHT_JOIN locks the conversation first, then the user, as every other path does:
        // two turns never wait on each other in opposite orders.
        out.push_sql("UPDATE ");
        conversations::table.walk_ast(out.reborrow())?;
        out.push_sql(" STRAIGHT_JOIN ");
        user_settings::table.walk_ast(out.reborrow())?;
        out.push_sql(" ON ");
        self.on.walk_ast(out.reborrow())?;
        // A tuple walks as its elements, comma-separated.
        out.push_sql(" SET ");
        self.chat.walk_ast(out.reborrow())?;
        out.push_sql(", ");
        self.user.walk_ast(out.reborrow())?;
        out.push_sql(" WHERE ");
        self.condition.walk_ast(out.reborrow())
    }
}

impl<Condition, ChatSet, UserSet> diesel::query_dsl::RunQueryDslSupport
    for OnBoth<Condition, ChatSet, UserSet>
{
}

/// `table`.`column` = value: an assignment in a statement on two tables, where a column's name
/// alone is ambiguous (Diesel's changesets write it alone).
#[derive(QueryId)]
struct Qualified<Column, Value> {
    column: Column,
    value: Value,
}

impl<Col, Value> QueryFragment<Mysql> for Qualified<Col, Value>
where
    Col: Column + QueryFragment<Mysql>,
    Value: QueryFragment<Mysql>,
{
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Mysql>) -> QueryResult<()> {
        self.column.walk_ast(out.reborrow())?;
        out.push_sql(" = ");
        self.value.walk_ast(out)
    }
}

/// The three lease columns of `T`, set to `owner`, `token` and `claimed_at`, qualified. Tables
/// with a fence would bump it on a take, so this serves tables without one alone.
type LeaseColumnsSet<T, Owner, Token, ClaimedAt> = (
    Qualified<<T as ClaimLease>::Owner, Owner>,
    Qualified<<T as ClaimLease>::ClaimToken, Token>,
    Qualified<<T as ClaimLease>::ClaimedAt, ClaimedAt>,
);

fn lease_columns_set<T: ClaimLease<Fence = NoFence>, Owner, Token, ClaimedAt>(
    owner: Owner,
    token: Token,
    claimed_at: ClaimedAt,
) -> LeaseColumnsSet<T, Owner, Token, ClaimedAt> {
    (
        Qualified {
            column: T::Owner::default(),
            value: owner,
        },
        Qualified {
            column: T::ClaimToken::default(),
            value: token,
        },
        Qualified {
            column: T::ClaimedAt::default(),
            value: claimed_at,
        },
    )
}

type Bound<'a> = dsl::AsExprOf<&'a str, Nullable<Text>>;
type NullText = Null<Nullable<Text>>;
/// [`ClaimLease::taken`], qualified.
type Taken<'a, T> = LeaseColumnsSet<T, Bound<'a>, Bound<'a>, Now<<T as ClaimLease>::Clock>>;
/// [`ClaimLease::released`], qualified.
type Released<T> = LeaseColumnsSet<T, NullText, NullText, Null<<T as ClaimLease>::Clock>>;

fn taken<T: ClaimLease<Fence = NoFence>>(claim: &Claim) -> Taken<'_, T> {
    lease_columns_set::<T, _, _, _>(
        claim.owner().into_sql::<Nullable<Text>>(),
        claim.token().into_sql::<Nullable<Text>>(),
        Now::default(),
    )
}

fn released<T: ClaimLease<Fence = NoFence>>() -> Released<T> {
    lease_columns_set::<T, _, _, _>(Null::default(), Null::default(), Null::default())
}

/// Takes both locks of a turn when both are free, in one statement; whether it did. A statement
/// that loses a write conflict outside the caller's transaction (a deadlock victim, a Galera
/// certification failure) was rolled back alone, and took nothing.
pub(super) fn take_both<C: Connection<Backend = Mysql>>(
    conn: &mut C,
    chat: &str,
    user: &str,
    claim: &Claim,
    lease: Lease,
) -> QueryResult<Option<bool>> {
    let (chats, users) = (conversations::table, user_settings::table);
    let both_free: dsl::And<ChatAndUser<'_>, dsl::And<Claimable<Chats>, Claimable<Users>>> =
        of_user(chat, user).and(chats.claimable(lease).and(users.claimable(lease)));
    let statement = OnBoth::new(both_free, taken::<Chats>(claim), taken::<Users>(claim));
    match statement.changed_both(conn) {
        Err(diesel::result::Error::DatabaseError(
            diesel::result::DatabaseErrorKind::SerializationFailure,
            _,
        )) if super::transaction::in_no_transaction(conn) => Ok(Some(false)),
        won => won.map(Some),
    }
}

/// Releases both locks of a turn that holds both, in one statement; whether it did. Each lock
/// must be `claim`'s, its node's as well as its token's, as in every other holder's statement.
pub(super) fn release_both<C: Connection<Backend = Mysql>>(
    conn: &mut C,
    chat: &str,
    user: &str,
    claim: &Claim,
) -> QueryResult<Option<bool>> {
    let (chats, users) = (conversations::table, user_settings::table);
    let owner = claim.owner();
    let chat_held: ChatHeldBy<'_> = chats
        .held_by(claim.token())
        .and(TextIs::new(conversations::busy_owner, owner));
    let user_held: UserHeldBy<'_> = users
        .held_by(claim.token())
        .and(TextIs::new(user_settings::busy_owner, owner));
    let both_held: dsl::And<ChatAndUser<'_>, dsl::And<ChatHeldBy<'_>, UserHeldBy<'_>>> =
        of_user(chat, user).and(chat_held.and(user_held));
    let statement = OnBoth::new(both_held, released::<Chats>(), released::<Users>());
    statement.changed_both(conn).map(Some)
}

/// The conversation `chat` of `user`, and `user`'s settings row.
fn of_user<'a>(chat: &'a str, user: &'a str) -> ChatAndUser<'a> {
    conversations::id
        .eq(chat)
        .and(conversations::user_id.eq(user))
        .and(user_settings::user_id.eq(user))
}
