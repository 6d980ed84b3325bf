//! What a scenario asks of a connection (db.rs's `FaultConn`), implemented once, by a macro,
//! for the three backends' connections.
use std::time::Duration;

use diesel::dsl::{count_star, min};
use diesel::prelude::*;
use diesel_lease::prelude::*;
use diesel_lease::sqlite::SqlitePragmas;
use diesel_lease::Node;
use diesel_lease_agent::schema::{conversations, user_settings};

use crate::db::{
    chat, fault_jobs, fault_takeovers, user, FaultConn, JobCounts, Kind, Number, PoolBuilder,
    Takeovers,
};

macro_rules! fault_conn {
    ($conn:ty, $kind:expr, $customized:expr) => {
        fault_conn!($conn, $kind, $customized, $customized);
    };
    ($conn:ty, $kind:expr, $customized:expr, $pooled:expr) => {
        impl FaultConn for $conn {
            const KIND: Kind = $kind;

            fn customized(builder: PoolBuilder<Self>) -> PoolBuilder<Self> {
                $customized(builder)
            }

            fn pooled(builder: PoolBuilder<Self>) -> PoolBuilder<Self> {
                $pooled(builder)
            }

            fn claim_jobs(
                &mut self,
                size: usize,
                lease: Lease,
                worker: &str,
            ) -> Result<Batch<i64, fault_jobs::table>, diesel_lease::Error> {
                fault_jobs::table
                    .claim_batch(size, lease)
                    .by(&Claim::new(worker)?)
                    .filter(fault_jobs::status.ne("done"))
                    .order_by(fault_jobs::id)
                    .set(fault_jobs::status.eq("running"))
                    .returning(fault_jobs::id)
                    .run::<i64>(self)
            }

            fn free_earlier_lives(&mut self, node: &Node) -> Result<Vec<i64>, diesel_lease::Error> {
                fault_jobs::table
                    .held_by_earlier_lives_of(node)
                    .release()
                    .set(fault_jobs::status.eq("queued"))
                    .run(self)
            }

            fn finish_jobs(
                &mut self,
                batch: &Batch<i64, fault_jobs::table>,
            ) -> Result<Vec<i64>, diesel_lease::Error> {
                batch
                    .release()
                    .set((
                        fault_jobs::status.eq("done"),
                        fault_jobs::done_count.eq(fault_jobs::done_count + 1),
                    ))
                    .run(self)
            }

            fn open_jobs(&mut self) -> QueryResult<i64> {
                fault_jobs::table
                    .filter(fault_jobs::status.ne("done"))
                    .count()
                    .get_result(self)
            }

            fn insert_jobs(&mut self, count: i64) -> QueryResult<()> {
                let rows: Vec<_> = (1..=count)
                    .map(|id| (fault_jobs::id.eq(id), fault_jobs::status.eq("queued")))
                    .collect();
                for chunk in rows.chunks(500) {
                    diesel::insert_into(fault_jobs::table)
                        .values(chunk)
                        .execute(self)?;
                }
                Ok(())
            }

            fn job_counts(&mut self) -> QueryResult<JobCounts> {
                let open = self.open_jobs()?;
                let twice = fault_jobs::table
                    .filter(fault_jobs::done_count.gt(1))
                    .count()
                    .get_result(self)?;
                // Each claim bumps its rows' fences; summed here, as SUM is NUMERIC on some backends.
                let fences: Vec<i64> = fault_jobs::table.select(fault_jobs::fence).load(self)?;
                let jobs = i64::try_from(fences.len()).unwrap_or(i64::MAX);
                Ok(JobCounts {
                    jobs,
                    open,
                    twice,
                    claims: fences.iter().sum(),
                })
            }

            fn takeovers(&mut self, table: &str, lease: Lease) -> QueryResult<Takeovers> {
                let of_table = fault_takeovers::table.filter(fault_takeovers::tbl.eq(table));
                let (count, min_age): (i64, Option<i64>) = of_table
                    .select((count_star(), min(fault_takeovers::age_us)))
                    .get_result(self)?;
                let lease_us = i64::try_from(lease.as_duration().as_micros()).unwrap_or(i64::MAX);
                let early = of_table
                    .filter(fault_takeovers::age_us.lt(lease_us))
                    .count()
                    .get_result(self)?;
                let unknown = of_table
                    .filter(fault_takeovers::age_us.is_null())
                    .count()
                    .get_result(self)?;
                let min_age = min_age.map(|us| Duration::from_micros(us.max(0).unsigned_abs()));
                Ok(Takeovers {
                    count,
                    min_age,
                    early,
                    unknown,
                })
            }

            fn clock(&mut self) -> QueryResult<chrono::DateTime<chrono::Utc>> {
                diesel::select(diesel_lease::now::<diesel_lease::sql_types::UtcTimestamp>())
                    .get_result(self)
            }

            fn number(&mut self, sql: &str) -> QueryResult<Option<i64>> {
                diesel::sql_query(sql)
                    .get_result::<Number>(self)
                    .map(|row| row.n)
            }

            fn numbers(&mut self, sql: &str) -> QueryResult<Vec<Option<i64>>> {
                diesel::sql_query(sql)
                    .load::<Number>(self)
                    .map(|rows| rows.into_iter().map(|row| row.n).collect())
            }

            fn guarded_write(
                &mut self,
                token: &str,
                ids: &[i64],
                fresh: Option<Lease>,
            ) -> QueryResult<usize> {
                let held = fault_jobs::table
                    .filter(fault_jobs::id.eq_any(ids.to_vec()))
                    .filter(fault_jobs::table.held_by(token));
                let count = fault_jobs::done_count.eq(fault_jobs::done_count + 1);
                match fresh {
                    Some(lease) => diesel::update(held.filter(fault_jobs::table.fresh(lease)))
                        .set(count)
                        .execute(self),
                    None => diesel::update(held).set(count).execute(self),
                }
            }

            fn migrate_agent(&mut self) -> Result<(), diesel_lease_agent::Error> {
                diesel_lease_agent::run_migrations(self)
            }

            fn reset_chats(&mut self, chats: usize, users: usize) -> QueryResult<()> {
                diesel::delete(conversations::table).execute(self)?;
                diesel::delete(user_settings::table).execute(self)?;
                let users: Vec<_> = (0..users)
                    .map(|n| user_settings::user_id.eq(user(n)))
                    .collect();
                diesel::insert_into(user_settings::table)
                    .values(&users)
                    .execute(self)?;
                let chats: Vec<_> = (0..chats)
                    .map(|n| {
                        (
                            conversations::id.eq(chat(n)),
                            conversations::user_id.eq(user(n % users.len())),
                        )
                    })
                    .collect();
                diesel::insert_into(conversations::table)
                    .values(&chats)
                    .execute(self)?;
                Ok(())
            }

            fn locked_chats(&mut self) -> QueryResult<Vec<(String, String, String)>> {
                let locked: Vec<(String, String, Option<String>)> = conversations::table
                    .filter(conversations::busy_turn_ref.is_not_null())
                    .select((
                        conversations::id,
                        conversations::user_id,
                        conversations::busy_turn_ref,
                    ))
                    .load(self)?;
                Ok(locked
                    .into_iter()
                    .filter_map(|(chat, user, turn)| Some((chat, user, turn?)))
                    .collect())
            }

            fn locked_counts(&mut self) -> QueryResult<(i64, i64)> {
                let chats = conversations::table
                    .filter(conversations::busy_turn_ref.is_not_null())
                    .count()
                    .get_result(self)?;
                let users = user_settings::table
                    .filter(user_settings::busy_turn_ref.is_not_null())
                    .count()
                    .get_result(self)?;
                Ok((chats, users))
            }
        }
    };
}

fault_conn!(
    diesel::PgConnection,
    Kind::Postgres,
    std::convert::identity,
    |builder: PoolBuilder<_>| {
        builder.connection_customizer(Box::new(diesel_lease::pg::PgTransactionPooling::default()))
    }
);
fault_conn!(diesel::MysqlConnection, Kind::Mysql, std::convert::identity);
fault_conn!(
    diesel::SqliteConnection,
    Kind::Sqlite,
    |builder: PoolBuilder<_>| {
        builder.connection_customizer(Box::new(
            SqlitePragmas::default().busy_timeout(Duration::from_secs(30)),
        ))
    }
);
