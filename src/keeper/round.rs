//! A keeper round's renewal of one table: every claim kept there, each row under its own claim's
//! token, passing over the rows another transaction holds locked (a worker's own open
//! transaction on its job row) instead of waiting for them, so that one locked row delays no
//! other claim's renewal.
use diesel::connection::Connection;
use diesel::expression_methods::EqAll;
use diesel::query_dsl::methods::ExecuteDsl;
use diesel::query_dsl::LoadQuery;
use diesel::Table;

use super::renewal::{KeeperRenewal, PairRenewal, RenewedRow};
use crate::backend::NativeLeaseQuery;
use crate::backend::{read, LeaseBackend, WritesHeld};
use crate::query::LeaseStatement;
use crate::sql::{CachedUpdate, PrimaryKeyAccess, SelectWhere, Where};
use crate::sql::{KeysIn, KeysOf, NoLock, NoReturning, PairsIn, PairsOf, PassingLocked};
use crate::table::TokenOf;
use crate::{ClaimLease, Error, Renewed};

/// A key and the token of the claim that holds it, as a round reads them.
type KeyAndToken<T> = (<T as Table>::PrimaryKey, TokenOf<T>);

/// The read that locks the named rows no other transaction holds locked, passing over the rest.
type LockPassingLocked<T> = SelectWhere<T, KeyAndToken<T>, PairsOf<T>, PassingLocked>;

/// The renewal of the rows that read locked, by their keys.
type RenewLocked<T> = CachedUpdate<T, Where<KeysOf<T>>, Renewed<T>, NoReturning, PrimaryKeyAccess>;

/// The plain read of the named rows a round did not renew: those still held by their token were
/// passed over, locked by another transaction; the others are lost.
type StillHeld<T> = SelectWhere<T, KeyAndToken<T>, PairsOf<T>, NoLock>;

/// What a keeper's round did to the rows it named on one table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoundRenewed<K> {
    /// The rows it renewed, each with the token that holds it.
    pub renewed: Vec<(K, Option<String>)>,
    /// The rows it passed over, locked by another transaction: still held by their token, not
    /// renewed this round.
    pub locked: Vec<(K, Option<String>)>,
}

/// The statement a [`Keeper`](crate::Keeper)'s round renews a table with: the rows named by
/// `pairs` (a key, and the token of the claim that should hold it), each renewed only while that
/// claim holds it. Where rows lock one by one (PostgreSQL, MySQL/MariaDB), a short transaction
/// of the library's locks the named rows that no other transaction holds locked
/// (`FOR UPDATE SKIP LOCKED`) and renews those by key, so that it never waits for a row lock; a
/// row it passed over and a row it did not find are then told apart by a plain read. On SQLite,
/// where a writer locks the whole database, it is [`KeeperRenewal`]'s one statement.
///
/// ```
/// # include!("../doctest_setup.rs");
/// use diesel_lease::prelude::*;
/// use diesel_lease::__private::{KeeperRound, RoundRenewed};
///
/// # fn main() -> Result<(), diesel_lease::Error> {
/// # let conn = &mut jobs_connection()?;
/// let worker = Claim::new("worker-1")?;
/// let _won = jobs::table.claim_row(1, Lease::from_secs(30)?).by(&worker).returning(jobs::id).run::<i64>(conn)?;
/// let round = KeeperRound::new(jobs::table, vec![(1, worker.token().to_owned())]);
/// let RoundRenewed { renewed, locked } = round.run(conn)?;
/// assert_eq!((renewed, locked), (vec![(1, Some(worker.token().to_owned()))], vec![]));
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
#[must_use = "a renewal does nothing until it is run"]
pub struct KeeperRound<T: ClaimLease> {
    table: T,
    pairs: Vec<(T::Key, String)>,
}

/// Nothing renewed, nothing passed over, whatever the key.
impl<K> Default for RoundRenewed<K> {
    fn default() -> Self {
        Self {
            renewed: Vec::new(),
            locked: Vec::new(),
        }
    }
}

impl<T: ClaimLease> KeeperRound<T> {
    /// The renewal of the rows of `table` named by `pairs`, each under its token.
    pub fn new(table: T, pairs: Vec<(T::Key, String)>) -> Self {
        Self { table, pairs }
    }
}

impl<T: ClaimLease> LeaseStatement<RenewedRow<T>> for KeeperRound<T> {
    type Output = RoundRenewed<T::Key>;
}

impl<'q, T, C> NativeLeaseQuery<'q, C, RenewedRow<T>> for KeeperRound<T>
where
    T: ClaimLease,
    T::PrimaryKey: EqAll<T::Key>,
    C: Connection,
    C::Backend: LeaseBackend + WritesHeld<'q, C, PairRenewal<T>, RenewedRow<T>>,
    LockPassingLocked<T>: LoadQuery<'q, C, RenewedRow<T>>,
    RenewLocked<T>: ExecuteDsl<C>,
    StillHeld<T>: LoadQuery<'q, C, RenewedRow<T>>,
{
    fn run_native(self, conn: &mut C) -> Result<RoundRenewed<T::Key>, Error> {
        let Self { table, pairs } = self;
        let key_and_token = || (table.primary_key(), T::ClaimToken::default());
        if <C::Backend as LeaseBackend>::LOCK_PASSING_LOCKED.is_none() {
            // A writer locks the whole database: no row is passed over, and a row the renewal
            // did not change is lost.
            return Ok(RoundRenewed {
                renewed: KeeperRenewal::new(table, pairs).run_native(conn)?,
                locked: Vec::new(),
            });
        }
        let renewed = <C::Backend as LeaseBackend>::all_or_nothing(conn, |conn| {
            let lock = LockPassingLocked::<T>::new(
                table,
                key_and_token(),
                PairsIn::of(table, pairs.clone()),
            );
            let locked: Vec<RenewedRow<T>> = read(lock, conn)?;
            if !locked.is_empty() {
                let keys = locked.iter().map(|(key, _)| key.clone()).collect();
                let renew = CachedUpdate::by_keys(
                    table,
                    Where::new(KeysIn::of(table, keys)),
                    table.renewed(),
                );
                ExecuteDsl::execute(renew, conn)?;
            }
            Ok(locked)
        })?;
        if renewed.len() == pairs.len() {
            return Ok(RoundRenewed {
                renewed,
                locked: Vec::new(),
            });
        }
        let missing: Vec<(T::Key, String)> = {
            let changed: std::collections::HashSet<&T::Key> =
                renewed.iter().map(|(key, _)| key).collect();
            pairs
                .into_iter()
                .filter(|(key, _)| !changed.contains(key))
                .collect()
        };
        let still_held = StillHeld::<T>::new(table, key_and_token(), PairsIn::of(table, missing));
        let locked = read(still_held, conn)?;
        Ok(RoundRenewed { renewed, locked })
    }
}

impl<T: ClaimLease, C> crate::RunLeaseDsl<C> for KeeperRound<T> {}
