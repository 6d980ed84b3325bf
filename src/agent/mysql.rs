//! MySQL/MariaDB: a turn takes both of its locks in one multi-table `UPDATE`, atomic on its own.
//! In a transaction it would cost eight round trips, because Diesel sends `BEGIN` and `COMMIT`
//! through `batch_execute`, three round trips each; this statement, prepared once, costs one.
use diesel::dsl;
use diesel::mysql::Mysql;
use diesel::prelude::*;
use diesel::query_builder::{AstPass, QueryFragment, QueryId};
use diesel::sql_types::{Nullable, Text};

use super::connection::{ChatOfUser, TakesBothLocks};
use super::schema::{conversations, user_settings};
use crate::claim_lease::Claimable;
use crate::{Claim, ClaimLease, Lease, NoFence, Now};

type Chats = conversations::table;
type Users = user_settings::table;
type ChatAndUser<'a> = dsl::And<ChatOfUser<'a>, dsl::Eq<user_settings::user_id, &'a str>>;

/// `UPDATE conversations STRAIGHT_JOIN user_settings ON <the chat's user> SET <both takes>
/// WHERE <the chat of the user> AND <both claimable>`: one row of each table, both or neither.
/// Its SQL is fixed by its type (every value is bound), so it is prepared once.
struct TakeBoth<'a> {
    on: dsl::Eq<user_settings::user_id, conversations::user_id>,
    condition: dsl::And<ChatAndUser<'a>, dsl::And<Claimable<Chats>, Claimable<Users>>>,
    chat: QualifiedTake<'a, Chats>,
    user: QualifiedTake<'a, Users>,
}

/// `table`.`column` = value: an assignment in a statement on two tables, where a column's name
/// alone is ambiguous (Diesel's changesets write it alone).
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

type Bound<'a> = dsl::AsExprOf<&'a str, Nullable<Text>>;

/// [`ClaimLease::taken`], qualified: owner, token and claimed_at at the database's now. Tables
/// with a fence would bump it too, so this takes tables without one alone.
type QualifiedTake<'a, T> = (
    Qualified<<T as ClaimLease>::Owner, Bound<'a>>,
    Qualified<<T as ClaimLease>::ClaimToken, Bound<'a>>,
    Qualified<<T as ClaimLease>::ClaimedAt, Now<<T as ClaimLease>::Clock>>,
);

fn qualified_take<T: ClaimLease<Fence = NoFence>>(claim: &Claim) -> QualifiedTake<'_, T> {
    (
        Qualified {
            column: T::Owner::default(),
            value: claim.owner().into_sql::<Nullable<Text>>(),
        },
        Qualified {
            column: T::ClaimToken::default(),
            value: claim.token().into_sql::<Nullable<Text>>(),
        },
        Qualified {
            column: T::ClaimedAt::default(),
            value: Now::default(),
        },
    )
}

impl QueryFragment<Mysql> for TakeBoth<'_> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Mysql>) -> QueryResult<()> {
        // STRAIGHT_JOIN locks the conversation first, then the user, as every other path does:
        // two acquirers never wait on each other in opposite orders.
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

impl QueryId for TakeBoth<'_> {
    type QueryId = TakeBoth<'static>;
    const HAS_STATIC_QUERY_ID: bool = true;
}

impl<C> RunQueryDsl<C> for TakeBoth<'_> {}

impl<C: Connection<Backend = Mysql>> TakesBothLocks<C> for Mysql {
    fn take_both(
        conn: &mut C,
        chat: &str,
        user: &str,
        claim: &Claim,
        ttl: Lease,
    ) -> QueryResult<Option<bool>> {
        let (chats, users) = (conversations::table, user_settings::table);
        let statement = TakeBoth {
            on: user_settings::user_id.eq(conversations::user_id),
            condition: conversations::id
                .eq(chat)
                .and(conversations::user_id.eq(user))
                .and(user_settings::user_id.eq(user))
                .and(chats.claimable(ttl).and(users.claimable(ttl))),
            chat: qualified_take::<Chats>(claim),
            user: qualified_take::<Users>(claim),
        };
        // Both rows matched and changed, or neither: the statement is its own transaction.
        let won = crate::strategy::lost_conflict_claims_nothing(
            statement.execute(conn).map(|matched| matched == 2),
            conn,
        )?;
        Ok(Some(won))
    }
}
