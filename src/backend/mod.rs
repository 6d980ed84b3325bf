//! What a backend implements for diesel-lease: its clock, how it lists row values, what a
//! connection needs after a failed read, its lease columns' DDL, how it runs each operation
//! (`ClaimsRow`, `ClaimsBatch`, `WritesHeld`) and how it reads a table's health (`ReadsHealth`).
//! Implemented in `src/pg`, `src/mysql` and `src/sqlite`, each behind its Cargo feature; a table
//! author never implements or names these traits.
pub(crate) mod bounds;
pub(crate) mod ddl;
pub(crate) mod health;
pub(crate) mod ops;
pub(crate) mod reads;
#[cfg(any(feature = "postgres", feature = "sqlite"))]
mod returning;
pub(crate) mod runs;

use diesel::backend::Backend;
use diesel::connection::Connection;
use diesel::query_builder::{AstPass, QueryFragment};
use diesel::result::{DatabaseErrorKind, Error as DieselError};
use diesel::sql_types::{BigInt, HasSqlType, Text};
use diesel::QueryResult;

// A backend's DDL, which `LeaseBackend` gathers: public only through `crate::__private::backend`.
pub(crate) use ddl::LeaseDdl;
// Public only through `crate::__private::backend`: the bounds of the SQL nodes.
pub(crate) use bounds::{SupportsReturning, TimestampOn};
// Public only through `crate::__private::backend`: the reads every statement of the library
// makes, and whether a connection is in a transaction of the caller's.
pub(crate) use reads::{in_no_transaction, read, read_optional};
// The strategy a backend implements and the plans it is handed: named by the library's bounds
// and macros, never by users, so public only through `crate::__private::backend`.
pub(crate) use health::{HealthPlan, ReadsHealth, TableName};
pub(crate) use ops::{
    BatchInOneStatement, BatchParts, BatchPlan, ClaimsBatch, ClaimsRow, HeldWrite,
    ReturnsSelection, RowClaim, WritesHeld,
};
pub(crate) use runs::runs_natively;
pub(crate) use runs::{NativeLeaseQuery, RunsStatement};

/// A backend diesel-lease runs on: PostgreSQL, MySQL/MariaDB and SQLite, each behind its Cargo
/// feature. How it spells the database's clock and a list of row values, and what a connection
/// needs after a statement that returns rows failed.
///
/// Each clock is read once per statement, so every row and every comparison of one statement sees
/// the same instant: `statement_timestamp()` on PostgreSQL (the time the statement arrived, not the
/// transaction's start), `UTC_TIMESTAMP(6)` on MySQL/MariaDB (whatever the session's time zone),
/// `strftime('%Y-%m-%d %H:%M:%f', 'now')` on SQLite (the one text format the library writes).
///
/// ```
/// # include!("../doctest_setup.rs");
/// fn runs_leases<DB: diesel_lease::backend::LeaseBackend>() {}
/// # fn main() {
/// runs_leases::<DocBackend>();
/// # }
/// ```
#[diagnostic::on_unimplemented(
    message = "diesel-lease does not run on `{Self}`",
    label = "a backend whose diesel-lease feature is off",
    note = "turn on diesel-lease's Cargo feature for this backend: `postgres`, `mysql` or `sqlite`"
)]
pub trait LeaseBackend: Backend + HasSqlType<BigInt> + HasSqlType<Text> + LeaseDdl {
    /// What opens a list of row values after `IN`: `(VALUES ` on PostgreSQL and SQLite (which
    /// take row values only from a subquery), `(` on MySQL/MariaDB.
    const ROW_LIST_OPEN: &'static str;

    /// The most values one statement may bind: 65,535 on PostgreSQL (the protocol's count) and
    /// MySQL/MariaDB (a prepared statement's), 32,766 on SQLite (its bundled build's
    /// `SQLITE_MAX_VARIABLE_NUMBER`). A holder's write of more keys is split into parts.
    const MOST_BOUND_VALUES: usize;

    /// The most key values (keys times their columns) one statement names, below
    /// [`MOST_BOUND_VALUES`](Self::MOST_BOUND_VALUES) where a longer key list would make the
    /// server read more rows than it names: MariaDB's range optimizer gives up on a range past
    /// `optimizer_max_sel_arg_weight` (32,000 by default) and scans the whole index, locking what
    /// it passes. A holder's write of more is split into parts, as one past the binds is.
    const MOST_KEY_VALUES: usize = usize::MAX;

    /// `body` in one transaction of the library's (a savepoint inside a transaction of the
    /// caller's): the parts of a split write commit together or not at all. MySQL/MariaDB run
    /// it at READ COMMITTED, as the library's other transactions there.
    fn all_or_nothing<C, R>(
        conn: &mut C,
        body: impl FnOnce(&mut C) -> QueryResult<R>,
    ) -> QueryResult<R>
    where
        C: Connection<Backend = Self>,
    {
        conn.transaction(body)
    }

    /// Writes the database's current time.
    fn walk_now(out: AstPass<'_, '_, Self>) -> QueryResult<()>;

    /// Writes the database's current time minus `micros` microseconds, bound as a parameter.
    fn walk_ago<'b>(micros: &'b i64, out: AstPass<'_, 'b, Self>) -> QueryResult<()>;

    /// Writes how many microseconds ago `timestamp` was, by the database's clock, as a BIGINT
    /// (`NULL` when `timestamp` is).
    fn walk_micros_since<'b, T: QueryFragment<Self>>(
        timestamp: &'b T,
        out: AstPass<'_, 'b, Self>,
    ) -> QueryResult<()>;

    /// Writes the database's current time as microseconds since the Unix epoch, a BIGINT: a
    /// reading that can be kept and compared with a later one, whatever the session's time zone.
    fn walk_clock_micros(out: AstPass<'_, '_, Self>) -> QueryResult<()>;

    /// Writes `text` (a text column) as compared byte for byte, whatever its collation: what
    /// [`TextIs`](crate::dsl::TextIs) compares a value with, and what reads grouped by owner
    /// group by. `(text)::text COLLATE "C"` on PostgreSQL (a nondeterministic collation, or
    /// `citext`, would ignore case), `CAST(CONVERT(text USING utf8mb4) AS BINARY)` on
    /// MySQL/MariaDB (the default collations ignore case, and every collation but a `NO PAD`
    /// one ignores trailing spaces; a binary string is compared with the bound value's UTF-8
    /// bytes, whatever the column's character set), `text COLLATE BINARY` on SQLite (a column
    /// may be declared `NOCASE` or `RTRIM`).
    fn walk_exact_text<'b, T: QueryFragment<Self>>(
        text: &'b T,
        out: AstPass<'_, 'b, Self>,
    ) -> QueryResult<()>;

    /// Writes, after the table of an `UPDATE` of rows named by their keys, that it reaches them
    /// through the primary key: nothing, except on MySQL/MariaDB, whose plan may otherwise scan
    /// (and lock) rows outside the list.
    fn walk_primary_key_access(out: AstPass<'_, '_, Self>) -> QueryResult<()> {
        let _ = out;
        Ok(())
    }

    /// Writes the locking clause of a read that locks the rows it reads, to change them in the
    /// same transaction, and passes over the rows another transaction holds locked: how a
    /// keeper's round renews what it can without waiting for a worker's open transaction.
    /// `None` where a writer locks the whole database (SQLite): there is no row to pass over,
    /// and the round is one statement that waits for the database as every write does.
    const LOCK_PASSING_LOCKED: Option<&'static str>;

    /// What `conn` needs after a statement that returns rows failed on it with a database error,
    /// before that statement may run on it again: nothing, except on MySQL/MariaDB. (So a
    /// PostgreSQL statement cache turned off for a pooler stays off.)
    fn after_failed_read<C: Connection<Backend = Self>>(conn: &mut C) {
        let _ = conn;
    }
}

/// A guarded write of one row, named by its key and token: `row` if the `UPDATE` matched, since
/// no other row can. The count of matched rows is the answer, on every backend, without
/// `RETURNING` or a read back.
pub(crate) fn write_one<C, S, Row>(statement: S, row: Row, conn: &mut C) -> QueryResult<Vec<Row>>
where
    C: Connection,
    S: diesel::query_dsl::methods::ExecuteDsl<C>,
{
    let matched = S::execute(statement, conn)?;
    Ok(if matched > 0 { vec![row] } else { Vec::new() })
}

/// A claim, reap or renewal that lost a write conflict outside a transaction of the caller's has
/// changed nothing: a deadlock victim on MySQL/MariaDB, a Galera certification failure, a
/// serialization failure on PostgreSQL. The statement was rolled back alone, so it is a lost race
/// like any other, but one that is counted and told ([`crate::LostConflicts`]): its only trace.
/// Inside the caller's transaction the whole transaction is gone, and the caller must hear of it.
pub(crate) fn lost_conflict_changes_nothing<C: Connection, Changed: Default>(
    result: QueryResult<Changed>,
    conn: &mut C,
    lost: (crate::conflicts::Operation, &str, Option<&crate::Claim>),
) -> QueryResult<Changed> {
    match result {
        Err(error @ DieselError::DatabaseError(DatabaseErrorKind::SerializationFailure, _))
            if in_no_transaction(conn) =>
        {
            let (operation, table, claim) = lost;
            crate::conflicts::lost(operation, table, claim, &error);
            Ok(Changed::default())
        }
        other => other,
    }
}
