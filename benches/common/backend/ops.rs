// The operations of one backend, included into its module (`backend/pg.rs`, `mysql.rs`,
// `sqlite.rs`), where `B` is the backend and `Conn` its connection type.
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Text};
use diesel_lease::prelude::*;
use diesel_lease::{Keeper, Kept};

use crate::backend::{Backend, Ops};
use crate::hand_sql::{hand_statement, read_one, Bind, PreparedSql};
use crate::shared::{check, Res};
use crate::tables::{bench_growth, bench_kept, bench_leases, LeaseRow};

hand_statement!(HandClaim, <B as Backend>::CLAIM);
hand_statement!(HandReadBack, <B as Backend>::READ_BACK.unwrap_or_default());
hand_statement!(HandRenew, <B as Backend>::RENEW);
hand_statement!(HandRelease, <B as Backend>::RELEASE);
hand_statement!(HandClaimChat, <B as Backend>::CLAIM_CHAT);
hand_statement!(HandClaimUser, <B as Backend>::CLAIM_USER);
hand_statement!(HandReleaseChat, <B as Backend>::RELEASE_CHAT);
hand_statement!(HandReleaseUser, <B as Backend>::RELEASE_USER);
hand_statement!(
    HandAcquireBoth,
    <B as Backend>::ACQUIRE_BOTH.unwrap_or_default()
);
hand_statement!(
    HandReleaseBoth,
    <B as Backend>::RELEASE_BOTH.unwrap_or_default()
);

/// The binds of releasing one agent lock by hand: its key, then the token and the owner, each
/// twice, as the library's exact comparison binds them.
fn held_by<'a>(key: &'a str, token: &'a str) -> [Bind<'a>; 5] {
    use crate::suite::OWNER;
    [
        Bind::Text(key),
        Bind::Text(token),
        Bind::Text(token),
        Bind::Text(OWNER),
        Bind::Text(OWNER),
    ]
}

/// `sql`, releasing one agent lock, with the binds of [`held_by`], prepared at every execution.
fn release_uncached<'a>(
    sql: &'static str,
    key: &'a str,
    token: &'a str,
) -> impl RunQueryDsl<Conn>
       + diesel::query_builder::QueryFragment<<Conn as Connection>::Backend>
       + diesel::query_builder::QueryId
       + 'a {
    use crate::suite::OWNER;
    diesel::sql_query(sql)
        .bind::<Text, _>(key)
        .bind::<Text, _>(token)
        .bind::<Text, _>(token)
        .bind::<Text, _>(OWNER)
        .bind::<Text, _>(OWNER)
}

impl Ops for B {
    fn setup(conn: &mut Conn) -> Res<()> {
        fixtures::setup(conn)
    }

    fn teardown(conn: &mut Conn) -> Res<()> {
        fixtures::cleanup_agent_rows(conn)?;
        diesel::sql_query("DROP TABLE IF EXISTS bench_leases").execute(conn)?;
        Ok(())
    }

    fn free_rows(conn: &mut Conn) -> Res<()> {
        diesel::sql_query(
            "UPDATE bench_leases SET owner = NULL, claim_token = NULL, claimed_at = NULL, \
             status = 'queued' WHERE id <= 32",
        )
        .execute(conn)?;
        Ok(())
    }

    fn settings(conn: &mut Conn) -> Res<Vec<(String, String)>> {
        fixtures::settings(conn)
    }

    fn lib_cycle(conn: &mut Conn, id: i64, claim: &Claim, lease: Lease) -> Res<()> {
        let t = bench_leases::table;
        let won = t
            .claim_row(id, lease)
            .by(claim)
            .set(bench_leases::status.eq("running"))
            .run::<LeaseRow>(conn)?;
        check(won.is_won(), "the library's claim lost")?;
        let renewed = diesel_lease::update(t.find(id).filter(t.held_by(claim.token())))
            .set(t.renewed())
            .execute(conn)?;
        check(renewed == 1, "the library's renewal changed no row")?;
        let released = diesel_lease::update(t.find(id).filter(t.held_by(claim.token())))
            .set((t.released(), bench_leases::status.eq("queued")))
            .execute(conn)?;
        check(released == 1, "the library's release changed no row")
    }

    fn lib_cycle_diesel_update(conn: &mut Conn, id: i64, claim: &Claim, lease: Lease) -> Res<()> {
        let t = bench_leases::table;
        let won = B::diesel_update_claim(conn, id, claim, lease)?;
        check(won.is_some(), "the claim through diesel::update lost")?;
        let renewed = diesel::update(t.find(id).filter(t.held_by(claim.token())))
            .set(t.renewed())
            .execute(conn)?;
        check(
            renewed == 1,
            "the renewal through diesel::update changed no row",
        )?;
        let released = diesel::update(t.find(id).filter(t.held_by(claim.token())))
            .set((t.released(), bench_leases::status.eq("queued")))
            .execute(conn)?;
        check(
            released == 1,
            "the release through diesel::update changed no row",
        )
    }

    fn hold(conn: &mut Conn, id: i64, claim: &Claim) -> Res<()> {
        let t = bench_leases::table;
        diesel::update(t.find(id))
            .set(t.taken(claim))
            .execute(conn)?;
        Ok(())
    }

    fn lib_claim(conn: &mut Conn, id: i64, claim: Claim, lease: Lease) -> Res<bool> {
        let won = bench_leases::table
            .claim_row(id, lease)
            .by(&claim)
            .set(bench_leases::status.eq("running"))
            .run::<LeaseRow>(conn)?;
        Ok(won.is_won())
    }

    fn hand_claim<const CACHED: bool>(
        conn: &mut Conn,
        id: i64,
        owner: &str,
        token: &str,
        micros: i64,
    ) -> QueryResult<Option<LeaseRow>> {
        if CACHED {
            let claim = PreparedSql::<HandClaim, 5>::new([
                Bind::Text("running"),
                Bind::Text(owner),
                Bind::Text(token),
                Bind::BigInt(id),
                Bind::BigInt(micros),
            ]);
            if B::READ_BACK.is_none() {
                return claim.get_result(conn).optional();
            }
            if claim.execute(conn)? == 0 {
                return Ok(None);
            }
            // MySQL/MariaDB's read-back, after a failed read as the library's.
            return read_one(
                PreparedSql::<HandReadBack, 3>::new([
                    Bind::BigInt(id),
                    Bind::Text(token),
                    Bind::Text(token),
                ]),
                conn,
            )
            .optional();
        }
        let claim = diesel::sql_query(B::CLAIM)
            .bind::<Text, _>("running")
            .bind::<Text, _>(owner)
            .bind::<Text, _>(token)
            .bind::<BigInt, _>(id)
            .bind::<BigInt, _>(micros);
        match B::READ_BACK {
            None => claim.get_result(conn).optional(),
            Some(read_back) => {
                if claim.execute(conn)? == 0 {
                    return Ok(None);
                }
                diesel::sql_query(read_back)
                    .bind::<BigInt, _>(id)
                    .bind::<Text, _>(token)
                    .bind::<Text, _>(token)
                    .get_result(conn)
                    .optional()
            }
        }
    }

    fn hand_cycle<const CACHED: bool>(
        conn: &mut Conn,
        id: i64,
        owner: &str,
        token: &str,
        micros: i64,
    ) -> Res<()> {
        let won = B::hand_claim::<CACHED>(conn, id, owner, token, micros)?;
        check(won.is_some(), "the hand-written claim lost")?;
        let renewed = if CACHED {
            PreparedSql::<HandRenew, 3>::new([
                Bind::BigInt(id),
                Bind::Text(token),
                Bind::Text(token),
            ])
            .execute(conn)?
        } else {
            diesel::sql_query(B::RENEW)
                .bind::<BigInt, _>(id)
                .bind::<Text, _>(token)
                .bind::<Text, _>(token)
                .execute(conn)?
        };
        check(renewed == 1, "the hand-written renewal changed no row")?;
        let released = if CACHED {
            PreparedSql::<HandRelease, 4>::new([
                Bind::Text("queued"),
                Bind::BigInt(id),
                Bind::Text(token),
                Bind::Text(token),
            ])
            .execute(conn)?
        } else {
            diesel::sql_query(B::RELEASE)
                .bind::<Text, _>("queued")
                .bind::<BigInt, _>(id)
                .bind::<Text, _>(token)
                .bind::<Text, _>(token)
                .execute(conn)?
        };
        check(released == 1, "the hand-written release changed no row")
    }

    fn hand_acquire<const CACHED: bool>(
        conn: &mut Conn,
        chat: &str,
        user: &str,
        token: &str,
    ) -> Res<()> {
        use crate::suite::{AGENT_LEASE_MICROS, OWNER};
        if let Some(sql) = B::ACQUIRE_BOTH {
            let claimed = if CACHED {
                PreparedSql::<HandAcquireBoth, 9>::new([
                    Bind::Text(OWNER),
                    Bind::Text(token),
                    Bind::Text(OWNER),
                    Bind::Text(token),
                    Bind::Text(chat),
                    Bind::Text(user),
                    Bind::Text(user),
                    Bind::BigInt(AGENT_LEASE_MICROS),
                    Bind::BigInt(AGENT_LEASE_MICROS),
                ])
                .execute(conn)?
            } else {
                diesel::sql_query(sql)
                    .bind::<Text, _>(OWNER)
                    .bind::<Text, _>(token)
                    .bind::<Text, _>(OWNER)
                    .bind::<Text, _>(token)
                    .bind::<Text, _>(chat)
                    .bind::<Text, _>(user)
                    .bind::<Text, _>(user)
                    .bind::<BigInt, _>(AGENT_LEASE_MICROS)
                    .bind::<BigInt, _>(AGENT_LEASE_MICROS)
                    .execute(conn)?
            };
            return check(
                claimed == 2,
                "the hand-written acquire took fewer than both locks",
            );
        }
        conn.transaction::<_, diesel::result::Error, _>(|conn| {
            let chat_claimed = if CACHED {
                PreparedSql::<HandClaimChat, 5>::new([
                    Bind::Text(OWNER),
                    Bind::Text(token),
                    Bind::Text(chat),
                    Bind::Text(user),
                    Bind::BigInt(AGENT_LEASE_MICROS),
                ])
                .execute(conn)?
            } else {
                diesel::sql_query(B::CLAIM_CHAT)
                    .bind::<Text, _>(OWNER)
                    .bind::<Text, _>(token)
                    .bind::<Text, _>(chat)
                    .bind::<Text, _>(user)
                    .bind::<BigInt, _>(AGENT_LEASE_MICROS)
                    .execute(conn)?
            };
            if chat_claimed == 0 {
                return Err(diesel::result::Error::RollbackTransaction);
            }
            let user_claimed = if CACHED {
                PreparedSql::<HandClaimUser, 5>::new([
                    Bind::Text(OWNER),
                    Bind::Text(token),
                    Bind::BigInt(0),
                    Bind::Text(user),
                    Bind::BigInt(AGENT_LEASE_MICROS),
                ])
                .execute(conn)?
            } else {
                diesel::sql_query(B::CLAIM_USER)
                    .bind::<Text, _>(OWNER)
                    .bind::<Text, _>(token)
                    .bind::<BigInt, _>(0i64)
                    .bind::<Text, _>(user)
                    .bind::<BigInt, _>(AGENT_LEASE_MICROS)
                    .execute(conn)?
            };
            if user_claimed == 0 {
                return Err(diesel::result::Error::RollbackTransaction);
            }
            Ok(())
        })?;
        Ok(())
    }

    fn hand_release<const CACHED: bool>(
        conn: &mut Conn,
        chat: &str,
        user: &str,
        token: &str,
    ) -> Res<()> {
        use crate::suite::OWNER;
        if let Some(sql) = B::RELEASE_BOTH {
            let released = if CACHED {
                PreparedSql::<HandReleaseBoth, 11>::new([
                    Bind::Text(chat),
                    Bind::Text(user),
                    Bind::Text(user),
                    Bind::Text(token),
                    Bind::Text(token),
                    Bind::Text(OWNER),
                    Bind::Text(OWNER),
                    Bind::Text(token),
                    Bind::Text(token),
                    Bind::Text(OWNER),
                    Bind::Text(OWNER),
                ])
                .execute(conn)?
            } else {
                diesel::sql_query(sql)
                    .bind::<Text, _>(chat)
                    .bind::<Text, _>(user)
                    .bind::<Text, _>(user)
                    .bind::<Text, _>(token)
                    .bind::<Text, _>(token)
                    .bind::<Text, _>(OWNER)
                    .bind::<Text, _>(OWNER)
                    .bind::<Text, _>(token)
                    .bind::<Text, _>(token)
                    .bind::<Text, _>(OWNER)
                    .bind::<Text, _>(OWNER)
                    .execute(conn)?
            };
            return check(
                released == 2,
                "the hand-written release found the locks gone",
            );
        }
        let released = conn.transaction::<_, diesel::result::Error, _>(|conn| {
            let (chat, user) = if CACHED {
                (
                    PreparedSql::<HandReleaseChat, 5>::new(held_by(chat, token)).execute(conn)?,
                    PreparedSql::<HandReleaseUser, 5>::new(held_by(user, token)).execute(conn)?,
                )
            } else {
                (
                    release_uncached(B::RELEASE_CHAT, chat, token).execute(conn)?,
                    release_uncached(B::RELEASE_USER, user, token).execute(conn)?,
                )
            };
            Ok(chat == 1 && user == 1)
        })?;
        check(released, "the hand-written release found the locks gone")
    }

    fn hand_release_chat<const CACHED: bool>(conn: &mut Conn, chat: &str, token: &str) -> Res<()> {
        if CACHED {
            PreparedSql::<HandReleaseChat, 5>::new(held_by(chat, token)).execute(conn)?;
        } else {
            release_uncached(B::RELEASE_CHAT, chat, token).execute(conn)?;
        }
        Ok(())
    }

    fn agent_rows(conn: &mut Conn, prefix: &str, count: usize) -> Res<Vec<(String, String)>> {
        fixtures::agent_rows(conn, prefix, count)
    }

    fn count_holders(conn: &mut Conn) -> Res<i64> {
        fixtures::count_holders(conn)
    }

    fn growth_setup(conn: &mut Conn, rows: i64, done: i64) -> Res<()> {
        fixtures::growth_setup(conn, rows, done)
    }

    fn growth_cycle(conn: &mut Conn, batch: usize, lease: Lease, then: &'static str) -> Res<usize> {
        Self::growth_cycle_from(conn, batch, lease, then, None)
    }

    fn growth_cycle_from(
        conn: &mut Conn,
        batch: usize,
        lease: Lease,
        then: &'static str,
        cursor: Option<&diesel_lease::ClaimCursor<i64>>,
    ) -> Res<usize> {
        let claim = bench_growth::table
            .claim_batch(batch, lease)
            .by(&Claim::new(crate::suite::OWNER)?)
            .filter(bench_growth::status.eq("queued"));
        let claimed = match cursor {
            Some(cursor) => claim
                .from_cursor(cursor)
                .set(bench_growth::status.eq("running"))
                .returning(bench_growth::id)
                .run::<i64>(conn)?,
            None => claim
                .order_by(bench_growth::id)
                .set(bench_growth::status.eq("running"))
                .returning(bench_growth::id)
                .run::<i64>(conn)?,
        };
        if claimed.is_empty() {
            return Ok(0);
        }
        let finished = claimed
            .release()
            .set(bench_growth::status.eq(then))
            .run(conn)?;
        check(
            finished.len() == claimed.len(),
            "a finish found its job taken",
        )?;
        Ok(finished.len())
    }

    fn growth_teardown(conn: &mut Conn) -> Res<()> {
        diesel::sql_query("DROP TABLE IF EXISTS bench_growth").execute(conn)?;
        Ok(())
    }

    fn growth_plan(conn: &mut Conn) -> Res<String> {
        fixtures::growth_plan(conn)
    }

    fn kept_setup(conn: &mut Conn, rows: i64) -> Res<()> {
        fixtures::kept_setup(conn, rows)
    }

    fn kept_teardown(conn: &mut Conn) -> Res<()> {
        diesel::sql_query("DROP TABLE IF EXISTS bench_kept").execute(conn)?;
        Ok(())
    }

    fn kept_take(conn: &mut Conn, rows: i64, claim: &Claim) -> Res<()> {
        let t = bench_kept::table;
        let taken = diesel::update(t.filter(bench_kept::id.le(rows)))
            .set(t.taken(claim))
            .execute(conn)?;
        check(
            taken == rows as usize,
            "bench_kept: fewer rows taken than asked",
        )
    }

    fn kept_free(conn: &mut Conn) -> Res<()> {
        let t = bench_kept::table;
        diesel::update(t).set(t.released()).execute(conn)?;
        Ok(())
    }

    fn renew_each(conn: &mut Conn, ids: &[i64], token: &str) -> Res<()> {
        let t = bench_kept::table;
        for id in ids {
            let renewed = diesel_lease::update(t.find(id).filter(t.held_by(token)))
                .set(t.renewed())
                .execute(conn)?;
            check(renewed == 1, "a renewal of one row changed no row")?;
        }
        Ok(())
    }

    fn keep(keeper: &Keeper<Conn>, claim: Claim, ids: Vec<i64>) -> Res<Kept<bench_kept::table>> {
        Ok(keeper.keep(bench_kept::table.held_rows(&claim, ids))?)
    }

    fn kept_release(conn: &mut Conn, kept: &Kept<bench_kept::table>) -> Res<Vec<i64>> {
        Ok(kept.release().run(conn)?)
    }

    fn kept_claim(conn: &mut Conn, id: i64, claim: Claim, lease: Lease) -> Res<Claim> {
        let t = bench_kept::table;
        let won = t
            .claim_row(id, lease)
            .by(&claim)
            .returning((bench_kept::id, bench_kept::claim_token))
            .run::<(i64, Option<String>)>(conn)?;
        match won {
            Claimed::Won(won) => Ok(won.claim().clone()),
            _ => Err("the claim of a kept cycle lost".into()),
        }
    }

    fn bare_renew_release(conn: &mut Conn, id: i64, claim: &Claim) -> Res<()> {
        let t = bench_kept::table;
        let renewed = diesel_lease::update(t.find(id).filter(t.held_by(claim.token())))
            .set(t.renewed())
            .execute(conn)?;
        check(renewed == 1, "the bare renewal changed no row")?;
        let released = diesel_lease::update(t.find(id).filter(t.held_by(claim.token())))
            .set(t.released())
            .execute(conn)?;
        check(released == 1, "the bare release changed no row")
    }
}
