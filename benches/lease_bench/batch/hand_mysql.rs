//! MySQL/MariaDB's batch statements: candidates read without a lock, then short READ COMMITTED
//! transactions.
use crate::batch::prelude::*;

pub const NAME: &str = <crate::backend::Mysql as crate::backend::Backend>::NAME;
pub type Conn = MysqlConnection;
pub const DDL: &[&str] = &[
    "CREATE TABLE bench_jobs (id BIGINT PRIMARY KEY, status VARCHAR(16) NOT NULL, \
     owner VARCHAR(255), claim_token VARCHAR(255), claimed_at DATETIME(6), \
     INDEX bench_jobs_queue (status, id), INDEX bench_jobs_token (claim_token)) ENGINE = InnoDB",
];
pub const EMPTY: &str = "TRUNCATE TABLE bench_jobs";
pub const AFTER_FILL: Option<&str> = None;
pub const AFTER_FREE: Option<&str> = None;
/// Whether a batch claim locks its candidates in rounds, which the start-up check then also
/// compares past a first round that came back short.
pub const LOCKS_IN_ROUNDS: bool = true;
/// The key column, as key lists name it.
pub const KEY: &str = "`bench_jobs`.`id`";
pub const READ_COMMITTED: &str = "SET TRANSACTION ISOLATION LEVEL READ COMMITTED";
/// The candidates of a batch, read before its transaction without a lock.
pub const CANDIDATES: &str = "SELECT `bench_jobs`.`id` FROM `bench_jobs` WHERE (((`bench_jobs`.`claim_token` IS NULL) OR (`bench_jobs`.`claimed_at` < (UTC_TIMESTAMP(6) - INTERVAL ? MICROSECOND))) AND (`bench_jobs`.`status` = ?)) ORDER BY `bench_jobs`.`id` LIMIT ? OFFSET ?";
/// A round of the batch's locking: candidates locked through the primary key.
pub const LOCK_KEYS: &str = "SELECT `bench_jobs`.`id` FROM `bench_jobs` FORCE INDEX (PRIMARY) WHERE {keys} AND (((`bench_jobs`.`claim_token` IS NULL) OR (`bench_jobs`.`claimed_at` < (UTC_TIMESTAMP(6) - INTERVAL ? MICROSECOND))) AND (`bench_jobs`.`status` = ?)) LIMIT ? FOR UPDATE SKIP LOCKED";
pub const CLAIM_KEYS: &str = "UPDATE `bench_jobs` FORCE INDEX (PRIMARY) SET `status` = ?, `owner` = ?, `claim_token` = ?, `claimed_at` = UTC_TIMESTAMP(6) WHERE ({keys} AND (((`bench_jobs`.`claim_token` IS NULL) OR (`bench_jobs`.`claimed_at` < (UTC_TIMESTAMP(6) - INTERVAL ? MICROSECOND))) AND (`bench_jobs`.`status` = ?)))";
pub const READ_BACK: &str = "SELECT `bench_jobs`.`id`, `bench_jobs`.`id`, NULL FROM `bench_jobs` WHERE ({keys} AND (`bench_jobs`.`claim_token` = ? AND CAST(CONVERT(`bench_jobs`.`claim_token` USING utf8mb4) AS BINARY) = ?))";
pub const LOCK_HELD: &str = "SELECT `bench_jobs`.`id` FROM `bench_jobs` FORCE INDEX (PRIMARY) WHERE ({keys} AND (`bench_jobs`.`claim_token` = ? AND CAST(CONVERT(`bench_jobs`.`claim_token` USING utf8mb4) AS BINARY) = ?)) FOR UPDATE";
pub const RELEASE: &str = "UPDATE `bench_jobs` FORCE INDEX (PRIMARY) SET `status` = ?, `owner` = NULL, `claim_token` = NULL, `claimed_at` = NULL WHERE ({keys} AND (`bench_jobs`.`claim_token` = ? AND CAST(CONVERT(`bench_jobs`.`claim_token` USING utf8mb4) AS BINARY) = ?))";

hand_statement!(HandCandidates, CANDIDATES);
keyed_statement!(HandLockKeys, KEY, LOCK_KEYS);
keyed_statement!(HandClaimKeys, KEY, CLAIM_KEYS);
keyed_statement!(HandReadBack, KEY, READ_BACK);
keyed_statement!(HandLockHeld, KEY, LOCK_HELD);
keyed_statement!(HandRelease, KEY, RELEASE);
hand_statement!(HandCommit, "COMMIT");

/// `body` in a short READ COMMITTED transaction, as the library runs its own: begun by
/// Diesel's transaction manager, committed by a prepared `COMMIT` (one round trip, where
/// Diesel's plain-text one is three), rolled back as Diesel's `transaction` does.
fn short_transaction<T>(
    conn: &mut Conn,
    body: impl FnOnce(&mut Conn) -> QueryResult<T>,
) -> QueryResult<T> {
    use diesel::connection::{
        AnsiTransactionManager, TransactionDepthChange, TransactionManager,
        TransactionManagerStatus,
    };
    conn.batch_execute(READ_COMMITTED)?;
    AnsiTransactionManager::begin_transaction(conn)?;
    let commit = |conn: &mut Conn| -> QueryResult<()> {
        PreparedSql::<HandCommit, 0>::new([]).execute(conn)?;
        match AnsiTransactionManager::transaction_manager_status_mut(conn) {
            TransactionManagerStatus::Valid(status) => {
                status.change_transaction_depth(TransactionDepthChange::DecreaseDepth)
            }
            TransactionManagerStatus::InError => {
                Err(diesel::result::Error::BrokenTransactionManager)
            }
        }
    };
    match body(conn).and_then(|done| commit(conn).map(|()| done)) {
        Ok(done) => Ok(done),
        Err(error) => match AnsiTransactionManager::rollback_transaction(conn) {
            Ok(()) | Err(diesel::result::Error::BrokenTransactionManager) => Err(error),
            Err(rollback_error) => Err(rollback_error),
        },
    }
}

/// The further windows of candidates a batch reads at the most, as the library.
const MOST_FURTHER_WINDOWS: i64 = 16;

/// How many candidates a batch of `n` reads, as the library: four times its size and 16.
fn window(n: i64) -> i64 {
    n.saturating_mul(4).saturating_add(16)
}

/// The claim of up to `n` queued jobs for `owner` under `token`, as the library makes it: the
/// first candidates in the queue's order, read without a lock; then, in a READ COMMITTED
/// transaction, those locked through the primary key in rounds, skipping rows other claims
/// hold (the first round the first `n`, `LIMIT n`; while short, the next 4 × missing,
/// `LIMIT` missing); the rows locked claimed by key and read back by key and token. The keys
/// won.
pub fn hand_claim(conn: &mut Conn, n: i64, owner: &str, token: &str) -> QueryResult<Vec<i64>> {
    let candidates_from = |offset: i64, conn: &mut Conn| -> QueryResult<Vec<i64>> {
        let candidates: Vec<Id> = read(
            ByText(PreparedSql::<HandCandidates, 4>::new([
                Bind::BigInt(LEASE_MICROS),
                Bind::Text("queued"),
                Bind::BigInt(window(n)),
                Bind::BigInt(offset),
            ])),
            conn,
        )?;
        Ok(ids(candidates))
    };
    let wanted = usize::try_from(n).unwrap_or(usize::MAX);
    // Locks, of `candidates`, rows until `taken` has `wanted`: the first round of the first
    // window asks for exactly the rows missing, later rounds look at four times as many.
    let lock_some =
        |candidates: &[i64], first_window: bool, taken: &mut Vec<i64>, conn: &mut Conn| {
            let mut rest = candidates;
            while taken.len() < wanted && !rest.is_empty() {
                let missing = wanted - taken.len();
                let look = if first_window && taken.is_empty() && rest.len() == candidates.len() {
                    missing
                } else {
                    missing.saturating_mul(4)
                };
                let (round, later) = rest.split_at(look.min(rest.len()));
                rest = later;
                let locked: Vec<Id> = read(
                    KeyedSql::<HandLockKeys, 0, 3>::new(
                        [],
                        round,
                        [
                            Bind::BigInt(LEASE_MICROS),
                            Bind::Text("queued"),
                            Bind::BigInt(i64::try_from(missing).unwrap_or(i64::MAX)),
                        ],
                    ),
                    conn,
                )?;
                taken.extend(ids(locked));
            }
            QueryResult::Ok(())
        };
    let claimed = (|| {
        let candidates = candidates_from(0, conn)?;
        if candidates.is_empty() {
            return Ok(Vec::new());
        }
        short_transaction(conn, |conn| {
            let mut taken: Vec<i64> = Vec::with_capacity(wanted);
            lock_some(&candidates, true, &mut taken, conn)?;
            // Every candidate held by other claims: the next windows, as the library reads
            // them, up to 16.
            let mut last_read = candidates.len();
            for further in 1..=MOST_FURTHER_WINDOWS {
                if taken.len() >= wanted || i64::try_from(last_read) != Ok(window(n)) {
                    break;
                }
                let more = candidates_from(window(n).saturating_mul(further), conn)?;
                lock_some(&more, false, &mut taken, conn)?;
                last_read = more.len();
            }
            if taken.is_empty() {
                return Ok(Vec::new());
            }
            KeyedSql::<HandClaimKeys, 3, 2>::new(
                [Bind::Text("running"), Bind::Text(owner), Bind::Text(token)],
                &taken,
                [Bind::BigInt(LEASE_MICROS), Bind::Text("queued")],
            )
            .execute(conn)?;
            read(
                KeyedSql::<HandReadBack, 0, 2>::new(
                    [],
                    &taken,
                    [Bind::Text(token), Bind::Text(token)],
                ),
                conn,
            )
        })
    })();
    lost_conflict_claims_nothing(claimed)
}

/// The release of `keys` that `token` holds, setting `status`: the keys released. One key:
/// the `UPDATE` alone, whose matched count says whether the token still held the row.
/// Several: lock the rows the token still holds, then update them.
pub fn hand_release(
    conn: &mut Conn,
    keys: &[i64],
    token: &str,
    status: &str,
) -> QueryResult<Vec<i64>> {
    let release = KeyedSql::<HandRelease, 1, 2>::new(
        [Bind::Text(status)],
        keys,
        [Bind::Text(token), Bind::Text(token)],
    );
    if let [key] = keys {
        let matched = release.execute(conn)?;
        return Ok(if matched > 0 { vec![*key] } else { Vec::new() });
    }
    short_transaction(conn, |conn| {
        let held: Vec<Id> = read(
            KeyedSql::<HandLockHeld, 0, 2>::new([], keys, [Bind::Text(token), Bind::Text(token)]),
            conn,
        )?;
        let held = ids(held);
        if !held.is_empty() {
            release.execute(conn)?;
        }
        Ok(held)
    })
}

/// The claim of one row composed from the library's changesets; MySQL has no `RETURNING`,
/// so the row is read back by its key and the claim's token: with `get_result`, or
/// (`COLLECT`) with `load`, as the library does.
pub fn bare_claim_row<const COLLECT: bool>(
    conn: &mut Conn,
    id: i64,
    lease: Lease,
    claim: &Claim,
) -> QueryResult<Option<JobRow>> {
    let t = bench_jobs::table;
    let claimed = diesel_lease::update(t.find(id).filter(t.claimable(lease)))
        .set((bench_jobs::status.eq("running"), t.taken(claim)))
        .execute(conn)?;
    if claimed == 0 {
        return Ok(None);
    }
    let read_back = t
        .find(id)
        .filter(t.held_by(claim.token()))
        .select((bench_jobs::all_columns, no_fence()));
    let won: Option<(JobRow, Option<i64>)> = if COLLECT {
        read(read_back, conn)?.pop()
    } else {
        read_one(read_back, conn).optional()?
    };
    Ok(won.map(|(row, _)| row))
}
