//! The claims a keeper keeps on one table: renewed together, one statement a round (per 4,096
//! rows), each row under its own claim's token; released one claim at a time.
use std::collections::{HashMap, HashSet};
use std::hash::Hash;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use diesel::connection::{Connection, TransactionManager};
use diesel::r2d2::{ConnectionManager, Pool, R2D2Connection};

use super::drained::DrainedTable;
use super::release::KeeperRelease;
use super::renewal::{KeeperRenewal, RenewedRow};
use super::round::{KeeperRound, RoundRenewed};
use super::state::{lock, ClaimState};
use super::stats::Tally;
use crate::monotonic;
use crate::query::{DatedRenewal, Keeping, LeaseStatement, ReleaseWrite};
use crate::sql::NoChanges;
use crate::Holds;
use crate::{
    ClaimLease, DatabaseTime, Error, Guarded, HeldRows, LeaseQuery, Releasing, RunLeaseDsl,
};

/// The rows one renewal statement names at the most: a (key, token) pair binds a value for each
/// key column and one for the token, and 4,096 pairs of the widest key (four columns) bind 20,480
/// values, within every backend's limit (SQLite's is 32,766).
const MOST_PAIRS_IN_ONE_RENEWAL: usize = 4_096;

/// Rows of `Self` that a [`Keeper`](crate::Keeper) of `C` connections can keep: it renews them
/// in one statement a round (per 4,096 rows) and releases them, guarded by their tokens. Every table with lease
/// columns, on every backend whose feature is on.
///
/// ```
/// # include!("../doctest_setup.rs");
/// fn keepable<T: diesel_lease::Keepable<DocConnection>>() {}
/// # fn main() {
/// keepable::<jobs::table>();
/// # }
/// ```
#[diagnostic::on_unimplemented(
    message = "a keeper of `{C}` connections cannot keep rows of `{Self}`",
    note = "the table needs its lease columns (`claim_lease!`), and the connection's backend its diesel-lease feature"
)]
pub trait Keepable<C>: ClaimLease {
    /// Renews the rows named by `pairs` (a key, and the token of the claim that should hold
    /// it), in one `UPDATE`; gives back the rows it changed, with their tokens.
    #[doc(hidden)]
    fn renew_pairs(
        self,
        pairs: Vec<(Self::Key, String)>,
        conn: &mut C,
    ) -> Result<Vec<RenewedRow<Self>>, Error>;

    /// Renews the rows named by `pairs` as a round does, passing over the rows another
    /// transaction holds locked: what it renewed, and what it passed over.
    #[doc(hidden)]
    fn renew_round(
        self,
        pairs: Vec<(Self::Key, String)>,
        conn: &mut C,
    ) -> Result<RoundRenewed<Self::Key>, Error>;

    /// Releases `held`, or dates it `dated` microseconds before the database's now.
    #[doc(hidden)]
    fn release_held(
        held: HeldRows<Self>,
        dated: Option<i64>,
        conn: &mut C,
    ) -> Result<Vec<Self::Key>, Error>;

    /// The database's time, in microseconds since the epoch.
    #[doc(hidden)]
    fn database_time(conn: &mut C) -> Result<i64, Error>;

    /// Releases the rows named by `pairs` (a key, and the token of the claim that should hold
    /// it), in one `UPDATE`; gives back the keys of the rows it released.
    #[doc(hidden)]
    fn release_pairs(
        self,
        pairs: Vec<(Self::Key, String)>,
        conn: &mut C,
    ) -> Result<Vec<Self::Key>, Error>;
}

impl<C, T> Keepable<C> for T
where
    T: ClaimLease,
    KeeperRenewal<T>: LeaseQuery<'static, C, RenewedRow<T>>
        + LeaseStatement<RenewedRow<T>, Output = Vec<RenewedRow<T>>>,
    KeeperRound<T>: LeaseQuery<'static, C, RenewedRow<T>>
        + LeaseStatement<RenewedRow<T>, Output = RoundRenewed<T::Key>>,
    Guarded<T, Releasing, NoChanges<T>, Vec<T::Key>>:
        LeaseQuery<'static, C, T::Key> + LeaseStatement<T::Key, Output = Vec<T::Key>>,
    Guarded<T, DatedRenewal, NoChanges<T>, Vec<T::Key>>:
        LeaseQuery<'static, C, T::Key> + LeaseStatement<T::Key, Output = Vec<T::Key>>,
    DatabaseTime: LeaseQuery<'static, C, i64> + LeaseStatement<i64, Output = i64>,
    KeeperRelease<T>: LeaseQuery<'static, C, T::Key> + LeaseStatement<T::Key, Output = Vec<T::Key>>,
{
    fn renew_pairs(
        self,
        pairs: Vec<(T::Key, String)>,
        conn: &mut C,
    ) -> Result<Vec<RenewedRow<T>>, Error> {
        KeeperRenewal::new(self, pairs).run::<RenewedRow<T>>(conn)
    }

    fn renew_round(
        self,
        pairs: Vec<(T::Key, String)>,
        conn: &mut C,
    ) -> Result<RoundRenewed<T::Key>, Error> {
        KeeperRound::new(self, pairs).run::<RenewedRow<T>>(conn)
    }

    fn release_held(
        held: HeldRows<T>,
        dated: Option<i64>,
        conn: &mut C,
    ) -> Result<Vec<T::Key>, Error> {
        match dated {
            Some(micros) => held.guarded(DatedRenewal::new(micros)).run(conn),
            None => held.release().run(conn),
        }
    }

    fn database_time(conn: &mut C) -> Result<i64, Error> {
        DatabaseTime.run::<i64>(conn)
    }

    fn release_pairs(
        self,
        pairs: Vec<(T::Key, String)>,
        conn: &mut C,
    ) -> Result<Vec<T::Key>, Error> {
        KeeperRelease::new(self, pairs).run::<T::Key>(conn)
    }
}

/// Releases what `state` still holds, once, through `write` (given the keys and, before the
/// shortest hold has passed, how far back to date them): the rows then keep their claim, dated so
/// that they outlive the lease just when the hold ends (by the database's clock at this release,
/// so never sooner); after it, they are freed. `None` when the claim was released before, or
/// handed back to the caller.
fn release_claim<K: Clone + Eq + Hash>(
    state: &ClaimState<K>,
    write: &mut dyn ReleaseWrite<K>,
) -> Result<Option<Vec<K>>, Error> {
    let _statement = state.statement();
    if state.is_off_the_keepers_hands() {
        return Ok(None);
    }
    let keys = state.held();
    let released = if keys.is_empty() {
        Vec::new()
    } else {
        let dated = match state.hold_until() {
            Some(hold_until) => {
                let left = hold_until.saturating_sub(write.database_time()?);
                let lease = *state.settings().lease().micros();
                (left > 0).then(|| lease.saturating_sub(left))
            }
            None => None,
        };
        write.write(keys, dated)?
    };
    state.mark_released(released.clone());
    Ok(Some(released))
}

/// A release through the holder's handle ([`Kept`](crate::Kept)'s `release`).
impl<K: Clone + Eq + Hash + Send + Sync> Keeping<K> for ClaimState<K> {
    fn release(&self, write: &mut dyn ReleaseWrite<K>) -> Result<Option<Vec<K>>, Error> {
        let released = release_claim(self, write);
        if released.is_err() {
            // It may have committed without its answer arriving: a renewal must not undo it.
            self.stop_renewing();
        }
        released
    }
}

/// The statements of the keeper's own release of a claim, on a connection of its pool.
struct KeeperWrite<'a, T: ClaimLease, C> {
    table: T,
    state: &'a ClaimState<T::Key>,
    conn: &'a mut C,
}

impl<T: Keepable<C>, C> ReleaseWrite<T::Key> for KeeperWrite<'_, T, C> {
    fn database_time(&mut self) -> Result<i64, Error> {
        T::database_time(self.conn)
    }

    fn write(&mut self, keys: Vec<T::Key>, dated: Option<i64>) -> Result<Vec<T::Key>, Error> {
        let held = HeldRows::new(self.table, self.state.claim().clone(), keys);
        T::release_held(held, dated, self.conn)
    }
}

/// The claims kept on one table, whatever the table and its key type: renewed each round,
/// released when the keeper stops.
pub(super) trait TableKeeping: Send + Sync {
    /// Renews every claim still to renew; how many statements were sent.
    fn renew_round(&self) -> usize;
    /// Releases every claim, as the keeper stops: it has no one to tell of an error, and the
    /// leases run out on their own.
    fn release_all(&self);
    /// Releases every claim kept now, all at once where it can: what it released.
    fn drain(&self) -> Result<DrainedTable, Error>;
}

/// Releasing one claim whose handle was dropped, or whose keeper stopped.
pub(super) trait ReleasesUnattended<K>: Send + Sync {
    /// Releases what `state` still holds, with no one to hear of an error but operators. It
    /// waits for a pool connection no longer than a renewal interval (after a renewal of the
    /// claim in flight, if any), so that a drop never hangs on an exhausted pool: a lease it
    /// could not release is renewed no more, and runs out on its own.
    fn release_unattended(&self, state: &ClaimState<K>);
}

pub(super) struct TableClaims<C: R2D2Connection + 'static, T: ClaimLease> {
    pub(super) pool: Pool<ConnectionManager<C>>,
    pub(super) table: T,
    pub(super) claims: Mutex<Vec<Arc<ClaimState<T::Key>>>>,
    pub(super) tally: Arc<Tally>,
}

impl<C, T> TableClaims<C, T>
where
    C: R2D2Connection + 'static,
    T: Keepable<C>,
{
    /// One renewal of the rows `claims` still hold, now, in one statement for every
    /// [`MOST_PAIRS_IN_ONE_RENEWAL`] rows; how many statements it sent, or the error when the
    /// renewal could not be made. Each claim's statement lock is held while they run, so that no
    /// release of one crosses them.
    pub(super) fn renew(
        &self,
        claims: &[Arc<ClaimState<T::Key>>],
        renewal: Renewal,
    ) -> Result<usize, Error> {
        let now = monotonic::instant();
        let wanting: Vec<&Arc<ClaimState<T::Key>>> =
            claims.iter().filter(|state| state.to_renew(now)).collect();
        if wanting.is_empty() {
            return Ok(0);
        }
        // A connection first, then the statement locks: the order a release takes them in (its
        // connection in hand, it waits for the lock), so that neither waits for what the other
        // holds. The claims to renew are chosen again under the locks: one released, or left to
        // run out, while the round waited must not be renewed after its release returned.
        let mut conn = match self.pool.get() {
            Ok(conn) => conn,
            Err(error) => return Err(self.unconfirmed(wanting, error.into())),
        };
        let _statements: Vec<_> = wanting.iter().map(|state| state.statement()).collect();
        let now = monotonic::instant();
        let renewing: Vec<&Arc<ClaimState<T::Key>>> = wanting
            .into_iter()
            .filter(|state| state.to_renew(now))
            .collect();
        let pairs = held_pairs(&renewing);
        if pairs.is_empty() {
            return Ok(0);
        }
        // The lease runs from the database's clock at the statement; the request's start on
        // ours is no later, so trusting from it can only end the trust sooner.
        let request_start = monotonic::instant();
        let statements = pairs.len().div_ceil(MOST_PAIRS_IN_ONE_RENEWAL);
        let renewed = broken_on_error(&mut *conn, |conn| {
            let mut round = RoundRenewed::default();
            for pairs in pairs.chunks(MOST_PAIRS_IN_ONE_RENEWAL) {
                match renewal {
                    Renewal::Waiting => round
                        .renewed
                        .extend(self.table.renew_pairs(pairs.to_vec(), conn)?),
                    Renewal::PassingLocked => {
                        let part = self.table.renew_round(pairs.to_vec(), conn)?;
                        round.renewed.extend(part.renewed);
                        round.locked.extend(part.locked);
                    }
                }
            }
            Ok(round)
        });
        match renewed {
            Ok(RoundRenewed {
                renewed: rows,
                locked,
            }) => {
                let confirmed = monotonic::instant();
                let margins: Vec<_> = renewing
                    .iter()
                    .filter_map(|state| state.margin_at(confirmed))
                    .collect();
                let (renewed, passed_over) = (by_token(&rows), by_token(&locked));
                for state in renewing {
                    let token = state.claim().token();
                    let renewed = renewed.get(token).map_or(&[][..], Vec::as_slice);
                    let locked = passed_over.get(token).map_or(&[][..], Vec::as_slice);
                    crate::events::emit_renewed::<T>(state.claim(), renewed.len());
                    if !locked.is_empty() {
                        crate::events::emit_passed_over::<T>(state.claim(), locked.len());
                    }
                    state.renewed(renewed, locked, request_start);
                }
                self.tally.renewed(rows.len(), margins);
                self.tally.passed_over(locked.len());
                Ok(statements)
            }
            Err(error) => Err(self.unconfirmed(renewing, error)),
        }
    }

    /// A renewal of `claims` could not be made: the error is theirs, and it leaves their trust
    /// deadline where it was, since unreachable means lost in time.
    fn unconfirmed<'a>(
        &self,
        claims: impl IntoIterator<Item = &'a Arc<ClaimState<T::Key>>>,
        error: Error,
    ) -> Error {
        let conflict = match &error {
            Error::Database(
                lost @ diesel::result::Error::DatabaseError(
                    diesel::result::DatabaseErrorKind::SerializationFailure,
                    _,
                ),
            ) => {
                let table = crate::events::table_name::<T>();
                crate::conflicts::lost(crate::conflicts::Operation::Renewal, table, None, lost);
                true
            }
            _ => false,
        };
        self.tally.failed(conflict);
        let now = monotonic::instant();
        for state in claims {
            state.unconfirmed(&error, now);
        }
        error
    }

    /// Releases `state` through a pool connection, waiting for one no longer than `wait`.
    fn release_waiting(&self, state: &ClaimState<T::Key>, wait: Duration) -> Result<(), Error> {
        let mut conn = self.pool.get_timeout(wait)?;
        broken_on_error(&mut *conn, |conn| {
            release_claim(
                state,
                &mut KeeperWrite {
                    table: self.table,
                    state,
                    conn,
                },
            )
            .map(drop)
        })
    }
}

impl<C, T> TableKeeping for TableClaims<C, T>
where
    C: R2D2Connection + 'static,
    T: Keepable<C>,
{
    fn renew_round(&self) -> usize {
        let claims: Vec<Arc<ClaimState<T::Key>>> = {
            let mut claims = lock(&self.claims);
            claims.retain(|state| !state.is_done());
            claims.clone()
        };
        // An error is kept for `check` to report; the trust deadline does the rest.
        self.renew(&claims, Renewal::PassingLocked).unwrap_or(1)
    }

    fn release_all(&self) {
        for state in lock(&self.claims).drain(..) {
            self.release_unattended(&state);
        }
    }

    fn drain(&self) -> Result<DrainedTable, Error> {
        // A connection first, then the claims' statement locks, as a round takes them.
        let mut conn = self.pool.get()?;
        let claims: Vec<Arc<ClaimState<T::Key>>> = lock(&self.claims).drain(..).collect();
        // Together, in one statement: the claims freed at once whose rows no other claim names
        // (a row one claim lost to another of this keeper's, not yet seen lost, would be released
        // under the token that holds it, and told as released by both). Alone: the others, and
        // the claims within their shortest hold, each dated by the database's clock.
        let mut named = HashSet::new();
        let (together, alone): (Vec<_>, Vec<_>) = claims.iter().partition(|state| {
            state.hold_until().is_none() && state.held().into_iter().all(|key| named.insert(key))
        });
        let mut drained = DrainedTable {
            table: crate::events::table_name::<T>(),
            claims: 0,
            rows: 0,
            statements: 0,
        };
        let stop_all = |error: Error| {
            // A release may have committed without its answer arriving: renewals must not undo it.
            for state in &claims {
                state.stop_renewing();
            }
            error
        };
        {
            let _statements: Vec<_> = together.iter().map(|state| state.statement()).collect();
            let together: Vec<_> = together
                .into_iter()
                .filter(|state| !state.is_off_the_keepers_hands())
                .collect();
            let pairs = held_pairs(&together);
            // A failed part may have committed without its answer arriving: the claims whose
            // every row a part released are released, the others renewed no more.
            let mut released = HashSet::with_capacity(pairs.len());
            let sent = broken_on_error(&mut *conn, |conn| {
                for pairs in pairs.chunks(MOST_PAIRS_IN_ONE_RENEWAL) {
                    released.extend(self.table.release_pairs(pairs.to_vec(), conn)?);
                }
                Ok(())
            });
            drained.statements += pairs.len().div_ceil(MOST_PAIRS_IN_ONE_RENEWAL);
            for state in together {
                let held = state.held();
                let rows: Vec<T::Key> = held
                    .iter()
                    .filter(|key| released.contains(*key))
                    .cloned()
                    .collect();
                if sent.is_err() && rows.len() < held.len() {
                    continue;
                }
                crate::events::emit_released::<T>(state.claim(), rows.len());
                drained.claims += 1;
                drained.rows += rows.len();
                state.mark_released(rows);
            }
            sent.map_err(stop_all)?;
        }
        for state in alone {
            let released = broken_on_error(&mut *conn, |conn| {
                release_claim(
                    state,
                    &mut KeeperWrite {
                        table: self.table,
                        state,
                        conn,
                    },
                )
            })
            .map_err(stop_all)?;
            if let Some(rows) = released {
                drained.claims += 1;
                drained.rows += rows.len();
                drained.statements += usize::from(!rows.is_empty());
            }
        }
        Ok(drained)
    }
}

impl<C, T> ReleasesUnattended<T::Key> for TableClaims<C, T>
where
    C: R2D2Connection + 'static,
    T: Keepable<C>,
{
    fn release_unattended(&self, state: &ClaimState<T::Key>) {
        if state.is_off_the_keepers_hands() {
            // Released by its handle already, or handed back: no connection to wait for.
            return;
        }
        if let Err(error) = self.release_waiting(state, state.settings().renews_every()) {
            // No handle is left to release it: renewals stop, so that the lease runs out.
            let rows = state.stop_renewing();
            crate::events::emit_not_released::<T>(state.claim(), rows, &error);
        }
    }
}

/// How a renewal meets a row another transaction holds locked.
#[derive(Debug, Clone, Copy)]
pub(super) enum Renewal {
    /// It waits for it: a claim's first renewal, on the caller's thread as it keeps the claim.
    Waiting,
    /// It passes over it, so that no claim waits for another's row: a round's.
    PassingLocked,
}

/// The keys of `rows` by the token that holds them, so that each claim looks only at its own.
fn by_token<K>(rows: &[(K, Option<String>)]) -> HashMap<&str, Vec<&K>> {
    let mut by_token: HashMap<&str, Vec<&K>> = HashMap::new();
    for (key, token) in rows {
        if let Some(token) = token {
            by_token.entry(token).or_default().push(key);
        }
    }
    by_token
}

/// The rows `claims` still hold, each as its key and the token of the claim that holds it: what
/// a renewal or a drain names, every row under its own claim's token.
fn held_pairs<K: Clone + Eq + Hash>(claims: &[&Arc<ClaimState<K>>]) -> Vec<(K, String)> {
    claims
        .iter()
        .flat_map(|state| {
            let token = state.claim().token().to_owned();
            state
                .held()
                .into_iter()
                .map(move |key| (key, token.clone()))
        })
        .collect()
}

/// `work` on `conn`; when it fails, `conn` is marked broken, so that the pool closes it instead
/// of handing it to the next renewal. After a failed statement it may be a connection the server
/// killed, and r2d2 asks Diesel, which judges a connection broken by its transaction state
/// alone: on MySQL/MariaDB, a pool that does not test connections on checkout would hand the
/// dead one to every renewal after.
pub(super) fn broken_on_error<C: Connection, R>(
    conn: &mut C,
    work: impl FnOnce(&mut C) -> Result<R, Error>,
) -> Result<R, Error> {
    let done = work(conn);
    if done.is_err() {
        C::TransactionManager::transaction_manager_status_mut(conn).set_in_error();
    }
    done
}
