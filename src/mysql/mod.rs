//! MySQL/MariaDB: `DATETIME(6)` columns holding UTC, and `UTC_TIMESTAMP(6)`.
//!
//! `NOW()` and `CURRENT_TIMESTAMP` follow the session's `time_zone` and `TIMESTAMP` columns are
//! shifted by it; `UTC_TIMESTAMP(6)` into `DATETIME(6)` is the same whatever a session sets.
//! MySQL has no `RETURNING`: a claim's matched-row count (Diesel always asks for matched, not
//! changed, rows) says whether it won, then the row is read by the claim's token.
//!
//! Give the token column a binary collation (`VARCHAR(255) COLLATE utf8mb4_bin`): the default
//! collations compare text ignoring case, so `T1` would hold a row claimed by `t1`.
//!
//! ```
//! # fn main() {}
//! fn clock<ST: diesel_lease::TimestampOn<diesel::mysql::Mysql>>() {}
//! ```
use chrono::{DateTime, NaiveDateTime, Utc};
use diesel::deserialize::{self, FromSql};
use diesel::mysql::{Mysql, MysqlType, MysqlValue};
use diesel::query_builder::{AstPass, QueryFragment};
use diesel::query_dsl::methods::ExecuteDsl;
use diesel::query_dsl::LoadQuery;
use diesel::result::{DatabaseErrorKind, Error as DieselError};
use diesel::sql_types::{BigInt, Datetime, HasSqlType};
use diesel::QueryResult;

use crate::sql_types::UtcTimestamp;
use diesel::connection::CacheSize;
use diesel::dsl::SqlTypeOf;
use diesel::expression::Expression;
use diesel::query_builder::AsChangeset;
use diesel::sql_types::SqlType;
use diesel::{Connection, OptionalExtension, RunQueryDsl};

use crate::strategy::{in_no_transaction, read_rows};
use crate::{
    BatchUpdateParts, Candidates, ClaimLease, DatabaseClock, KeyedBatchUpdate, KeyedReadBack,
    RecoversFailedReads, ReleasesRows, ReportsWinners, RunsBatchUpdates, TimestampOn,
};

impl crate::ListsRowValues for Mysql {
    const ROW_LIST_OPEN: &'static str = "(";
}

impl DatabaseClock for Mysql {
    fn walk_now(mut out: AstPass<'_, '_, Self>) -> QueryResult<()> {
        out.push_sql("UTC_TIMESTAMP(6)");
        Ok(())
    }

    fn walk_ago<'b>(micros: &'b i64, mut out: AstPass<'_, 'b, Self>) -> QueryResult<()> {
        out.push_sql("(UTC_TIMESTAMP(6) - INTERVAL ");
        out.push_bind_param::<BigInt, _>(micros)?;
        out.push_sql(" MICROSECOND)");
        Ok(())
    }

    fn walk_micros_since<'b, T: QueryFragment<Self>>(
        timestamp: &'b T,
        mut out: AstPass<'_, 'b, Self>,
    ) -> QueryResult<()> {
        out.push_sql("TIMESTAMPDIFF(MICROSECOND, ");
        timestamp.walk_ast(out.reborrow())?;
        out.push_sql(", UTC_TIMESTAMP(6))");
        Ok(())
    }

    fn walk_clock_micros(mut out: AstPass<'_, '_, Self>) -> QueryResult<()> {
        // Two DATETIMEs in UTC: no session time zone takes part.
        out.push_sql("TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6))");
        Ok(())
    }
}

impl TimestampOn<Mysql> for Datetime {}
impl TimestampOn<Mysql> for UtcTimestamp {}

impl HasSqlType<UtcTimestamp> for Mysql {
    fn metadata(_lookup: &mut ()) -> MysqlType {
        MysqlType::DateTime
    }
}

impl FromSql<UtcTimestamp, Mysql> for DateTime<Utc> {
    fn from_sql(value: MysqlValue<'_>) -> deserialize::Result<Self> {
        <NaiveDateTime as FromSql<Datetime, Mysql>>::from_sql(value).map(|utc| utc.and_utc())
    }
}

/// A prepared statement whose result failed after the server sent its column header (the error
/// read by `mysql_stmt_store_result`: an expression's error, a lock wait timeout, a deadlock) is
/// left by MariaDB Connector/C 3.3 unable to run again: once Diesel frees its result, its next
/// execution waits for ever for the rest of a result the server has already ended. Diesel keeps
/// it in the connection's statement cache, so every later run of the same SQL would hang.
/// Dropping the cache closes each statement (`COM_STMT_CLOSE`, which the server does not answer,
/// so it cannot wait) and each is prepared anew when next run; it is safe inside a transaction,
/// whose rollback still follows. Diesel cannot tell whether a user had turned the cache off, so
/// it is on afterwards. `docs/upstream/mysql-statement-hang.md` has a reproduction.
impl RecoversFailedReads for Mysql {
    fn after_failed_read<C: Connection<Backend = Self>>(conn: &mut C) {
        conn.set_prepared_statement_cache_size(CacheSize::Disabled);
        conn.set_prepared_statement_cache_size(CacheSize::Unbounded);
    }
}

impl<'q, S, Selection, ReadBack, C, R> ReportsWinners<'q, S, Selection, ReadBack, C, R> for Mysql
where
    C: diesel::Connection<Backend = Mysql>,
    S: ExecuteDsl<C>,
    ReadBack: LoadQuery<'q, C, R>,
{
    /// No transaction around the two: inside one, InnoDB would keep the row lock of every
    /// refused claim until the COMMIT, queueing contenders. Should the lease run out and another
    /// claim take a row in between, the read does not find it: the claim has lost that row, and
    /// the token guards every later write of the loser.
    fn winner(
        statement: S,
        _: Selection,
        read_back: ReadBack,
        conn: &mut C,
    ) -> QueryResult<Option<R>> {
        if S::execute(statement, conn)? == 0 {
            return Ok(None);
        }
        read_rows(conn, |conn| read_back.get_result(conn).optional())
    }
}

impl<'q, S, Keys, Locking, C, Key> ReleasesRows<'q, S, Keys, Locking, C, Key> for Mysql
where
    C: diesel::Connection<Backend = Mysql>,
    S: ExecuteDsl<C>,
    Locking: LoadQuery<'q, C, Key>,
{
    /// The rows the token still holds are locked first, so the `UPDATE` changes exactly those,
    /// and their keys are the answer. One row needs no transaction: whether the `UPDATE` matched
    /// it is the answer.
    fn released(
        statement: S,
        _: Keys,
        locking: Locking,
        only: Option<Key>,
        conn: &mut C,
    ) -> QueryResult<Vec<Key>> {
        if let Some(key) = only {
            let matched = S::execute(statement, conn)?;
            return Ok(if matched > 0 { vec![key] } else { Vec::new() });
        }
        short_transaction(conn, |conn| {
            let held: Vec<Key> = read_rows(conn, |conn| locking.load(conn))?;
            if !held.is_empty() {
                S::execute(statement, conn)?;
            }
            Ok(held)
        })
    }
}

/// The renewal, then a read of its rows back by their (key, token) pairs, with no transaction
/// around the two: a row that carries the claim's token after the `UPDATE` is one the `UPDATE`
/// renewed, since only the claim ever wrote that token, and a row renewed then taken from the
/// claim (released behind its back) is read as lost, as it is. The pairs find their rows by key
/// (one pair as two equalities, several as row-value lists), so the `UPDATE` locks those
/// rows alone.
impl<S, KeyAndToken, ReadBack, C, Row> crate::RenewsRows<S, KeyAndToken, ReadBack, C, Row> for Mysql
where
    C: diesel::Connection<Backend = Mysql>,
    S: ExecuteDsl<C>,
    ReadBack: LoadQuery<'static, C, Row>,
{
    fn renewed(
        statement: S,
        _: KeyAndToken,
        read_back: ReadBack,
        conn: &mut C,
    ) -> QueryResult<Vec<Row>> {
        if S::execute(statement, conn)? == 0 {
            return Ok(Vec::new());
        }
        read_rows(conn, |conn| read_back.load(conn))
    }
}

/// A batch (a claim, a reap) is a short transaction at READ COMMITTED: the candidates' keys are
/// locked with `FOR UPDATE SKIP LOCKED`, so concurrent batches take different rows rather than
/// queue on each other; the `UPDATE` then names those keys, so InnoDB locks rows by key equality
/// alone and no gap; the rows it changed are read back by those keys and what it left on them
/// (the batch's token, a reap's `NULL`) before the COMMIT, still locked. (MariaDB refuses
/// `LIMIT` in an `IN` subquery, MySQL an `UPDATE` that selects from its own table, and an
/// `UPDATE .. ORDER BY .. LIMIT` waits on every locked row it scans.)
impl<'q, T, F, O, Set, Selection, Changed, C, R>
    RunsBatchUpdates<'q, BatchUpdateParts<T, F, O, Set, Selection, Changed>, C, R> for Mysql
where
    C: Connection<Backend = Mysql>,
    T: ClaimLease,
    T::PrimaryKey: Expression,
    SqlTypeOf<T::PrimaryKey>: KeyType,
    F: Clone,
    O: Clone,
    KeyOf<T>: Clone,
    Set: AsChangeset<Target = T>,
    Candidates<T, F, O>: LoadQuery<'q, C, KeyOf<T>>,
    KeyedBatchUpdate<T, F, Set, KeyOf<T>>: ExecuteDsl<C>,
    KeyedReadBack<T, Selection, KeyOf<T>, Changed>: LoadQuery<'q, C, R>,
{
    fn run_batch(
        parts: BatchUpdateParts<T, F, O, Set, Selection, Changed>,
        conn: &mut C,
    ) -> QueryResult<Vec<R>> {
        short_transaction(conn, |conn| {
            let keys: Vec<KeyOf<T>> = read_rows(conn, |conn| parts.candidates().load(conn))?;
            if keys.is_empty() {
                return Ok(Vec::new());
            }
            let (update, read_back) = parts.by_keys(keys);
            update.execute(conn)?;
            read_rows(conn, |conn| read_back.load(conn))
        })
    }
}

/// The Rust value of a primary key's SQL type, which a batch claim reads and binds back.
///
/// ```
/// fn key<ST: diesel_lease::mysql::KeyType>() {}
/// key::<diesel::sql_types::BigInt>();
/// key::<diesel::sql_types::Text>();
/// ```
pub trait KeyType: SqlType {
    /// The key's Rust type.
    type Value;
}

macro_rules! key_types {
    ($($sql:ty => $value:ty),+ $(,)?) => {$(
        impl KeyType for $sql {
            type Value = $value;
        }
    )+};
}

key_types!(
    diesel::sql_types::BigInt => i64,
    diesel::sql_types::Integer => i32,
    diesel::sql_types::SmallInt => i16,
    diesel::sql_types::Text => String,
    diesel::sql_types::Binary => Vec<u8>,
    diesel::sql_types::Unsigned<diesel::sql_types::BigInt> => u64,
    diesel::sql_types::Unsigned<diesel::sql_types::Integer> => u32,
);

type KeyOf<T> = <SqlTypeOf<<T as diesel::Table>::PrimaryKey> as KeyType>::Value;

/// `body` in a short transaction of the library's own, at READ COMMITTED: its locking reads take
/// no gap locks and keep no lock on rows they pass over. Inside a transaction of the caller's,
/// `body` runs in a savepoint and the caller's isolation stands.
///
/// A COMMIT that loses a write conflict (a Galera certification failure, error 1213) is a
/// serialization failure, as the same error of any statement is: Diesel sends COMMIT as plain
/// text, and reports an error of plain text as `Unknown`, so it is told by its message.
fn short_transaction<C, T>(
    conn: &mut C,
    body: impl FnOnce(&mut C) -> QueryResult<T>,
) -> QueryResult<T>
where
    C: Connection<Backend = Mysql>,
{
    if in_no_transaction(conn) {
        conn.batch_execute("SET TRANSACTION ISOLATION LEVEL READ COMMITTED")?;
    }
    conn.transaction(body).map_err(|error| match error {
        DieselError::DatabaseError(DatabaseErrorKind::Unknown, info)
            if info.message().starts_with(LOST_CONFLICT) =>
        {
            DieselError::DatabaseError(DatabaseErrorKind::SerializationFailure, info)
        }
        other => other,
    })
}

/// The message of MySQL's and MariaDB's error 1213 (`ER_LOCK_DEADLOCK`), in the servers' default
/// language; under another `lc_messages` the error stays `Unknown`, as Diesel reports it.
const LOST_CONFLICT: &str = "Deadlock found when trying to get lock";

/// `VARCHAR(255)` owner and token in utf8mb4 with a binary collation, a `DATETIME(6)` claimed_at;
/// several columns per `ALTER TABLE`, and `DROP INDEX .. ON` its table.
impl crate::LeaseDdl for Mysql {
    const OWNER_TYPE: &'static str = "VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin";
    const CLAIM_TOKEN_TYPE: &'static str = "VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin";
    const CLAIMED_AT_TYPE: &'static str = "DATETIME(6)";
    const QUOTE: char = '`';
    const ONE_COLUMN_PER_ALTER: bool = false;
    const DROP_INDEX_NAMES_TABLE: bool = true;

    fn advice(_table: &str, claimed_at: &str) -> String {
        format!(
            "-- MySQL/MariaDB: owner and token have a binary collation, so that they compare exactly\n\
             -- (the default collations ignore case: token T1 would hold a row claimed by t1).\n\
             -- {claimed_at} is DATETIME(6) holding UTC: a TIMESTAMP would shift with the session's time_zone.\n"
        )
    }
}
