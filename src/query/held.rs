//! The writes of a holder: renewing, writing to and releasing the rows its claim holds, each in
//! one statement guarded by the claim's token, which says which rows it changed.
use std::marker::PhantomData;

use diesel::connection::Connection;
use diesel::expression_methods::EqAll;
use diesel::query_builder::AsChangeset;
use diesel::Table;

use crate::backend::NativeLeaseQuery;
use crate::backend::{HeldWrite, LeaseBackend, WritesHeld};
use crate::query::kept_by::{KeptBy, ReleaseWrite};
use crate::query::{DatabaseTime, LeaseStatement};
use crate::sql::{
    most_keys_in_one_statement, Both, CachedUpdate, ForUpdateByKey, KeysIn, KeysOf, NoChanges,
    NoLock, NoReturning, PrimaryKeyAccess, SelectWhere, Where,
};
use crate::table::token_is;
use crate::{Claim, ClaimLease, Error, KeyType, Released, Renewed, RenewedAgo, TokenIs};

/// Rows of `T` that a claim holds, named by their keys: the rows a holder renews, writes to and
/// releases. A [`Won`](crate::Won) or a [`Batch`](crate::Batch) gives its own; a claim known by
/// its token alone (another process's, an operator's) names them with
/// [`LeaseDsl::held_rows`](crate::LeaseDsl::held_rows).
///
/// ```
/// # include!("../doctest_setup.rs");
/// # use diesel::prelude::*;
/// # use diesel_lease::prelude::*;
/// # fn main() -> Result<(), diesel_lease::Error> {
/// # let conn = &mut jobs_connection()?;
/// let worker = Claim::new("worker-1")?;
/// let _batch = jobs::table.claim_batch(10, Lease::from_secs(30)?).by(&worker).returning(jobs::id).run::<i64>(conn)?;
/// // Later, knowing only the claim and the keys:
/// let finished = jobs::table.held_rows(&worker, vec![1, 2]).release().set(jobs::status.eq("done")).run(conn)?;
/// assert_eq!(finished, [1], "job 2 does not exist, so it is not held");
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct HeldRows<T: ClaimLease> {
    table: T,
    claim: Claim,
    keys: Vec<T::Key>,
    /// The keeper that keeps the rows (a [`Kept`](crate::Kept) handle's), which their release
    /// goes through.
    kept: Option<KeptBy<T::Key>>,
}

/// Itself, so that what takes any holder (`keeper.keep(..)`) takes held rows as they are.
///
/// ```
/// # include!("../doctest_setup.rs");
/// # use diesel_lease::prelude::*;
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let pool = jobs_pool()?;
/// let lease = Lease::from_secs(30)?;
/// let keeper = Keeper::start(pool.clone(), KeeperSettings::new(lease))?;
/// let claim = Claim::new("w")?;
/// jobs::table.claim_row(1, lease).by(&claim).run::<Job>(&mut pool.get()?)?;
/// let kept = keeper.keep(jobs::table.held_rows(&claim, vec![1]))?;
/// assert_eq!(kept.held().keys(), [1]);
/// # Ok(())
/// # }
/// ```
impl<T: ClaimLease> AsRef<HeldRows<T>> for HeldRows<T> {
    fn as_ref(&self) -> &HeldRows<T> {
        self
    }
}

impl<T: ClaimLease> HeldRows<T> {
    pub(crate) fn new(table: T, claim: Claim, keys: Vec<T::Key>) -> Self {
        Self {
            table,
            claim,
            keys,
            kept: None,
        }
    }

    /// The same rows, kept by `keeper`: their release goes through it.
    pub(crate) fn kept_by(self, keeper: KeptBy<T::Key>) -> Self {
        Self {
            kept: Some(keeper),
            ..self
        }
    }

    /// The table.
    pub(crate) fn table(&self) -> T {
        self.table
    }

    /// The claim that holds the rows.
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// let worker = Claim::new("worker-1")?;
    /// assert_eq!(jobs::table.held_rows(&worker, vec![1]).claim(), &worker);
    /// # Ok(())
    /// # }
    /// ```
    pub fn claim(&self) -> &Claim {
        &self.claim
    }

    /// The keys of the rows.
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// assert_eq!(jobs::table.held_rows(&Claim::new("w")?, vec![1, 2]).keys(), [1, 2]);
    /// # Ok(())
    /// # }
    /// ```
    pub fn keys(&self) -> &[T::Key] {
        &self.keys
    }

    pub(crate) fn guarded<Kind, A>(&self, kind: Kind) -> Guarded<T, Kind, NoChanges<T>, A> {
        Guarded {
            held: self.clone(),
            kind,
            changes: NoChanges::default(),
            answer: PhantomData,
        }
    }
}

/// A write to rows a claim holds, guarded by its token: [`Renewing`], [`Releasing`] or
/// [`Writing`], with the caller's own changes; run it for what it changed (`Vec` of the keys of
/// the rows; `bool`, whether the one row was still held).
///
/// ```
/// # include!("../doctest_setup.rs");
/// # use diesel::prelude::*;
/// # use diesel_lease::prelude::*;
/// # fn main() -> Result<(), diesel_lease::Error> {
/// # let conn = &mut jobs_connection()?;
/// let worker = Claim::new("w")?;
/// let won = jobs::table.claim_row(1, Lease::from_secs(30)?).by(&worker).run::<Job>(conn)?.won().expect("free");
/// // A renewal that also records progress, in one statement.
/// assert!(won.renew().set(jobs::status.eq("half way")).run(conn)?);
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
#[must_use = "a write does nothing until it is run"]
pub struct Guarded<T: ClaimLease, Kind, Changes, A> {
    held: HeldRows<T>,
    kind: Kind,
    changes: Changes,
    answer: PhantomData<A>,
}

impl<T: ClaimLease, Kind, A> Guarded<T, Kind, NoChanges<T>, A> {
    /// The caller's own changes, in the same statement as the lease's. They read each row as it
    /// was before the write, on every backend.
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use diesel::prelude::*;
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let won = jobs::table.claim_row(1, Lease::from_secs(30)?).by(&Claim::new("w")?).run::<Job>(conn)?.won().expect("free");
    /// assert!(won.release().set(jobs::status.eq("done")).run(conn)?);
    /// # Ok(())
    /// # }
    /// ```
    pub fn set<Changes: AsChangeset<Target = T>>(
        self,
        changes: Changes,
    ) -> Guarded<T, Kind, Changes, A> {
        Guarded {
            held: self.held,
            kind: self.kind,
            changes,
            answer: PhantomData,
        }
    }
}

/// A holder's write waiting for its changes: [`set`](Self::set) gives them.
///
/// ```
/// # include!("../doctest_setup.rs");
/// # use diesel::prelude::*;
/// # use diesel_lease::prelude::*;
/// # fn main() -> Result<(), diesel_lease::Error> {
/// let write = jobs::table.held_rows(&Claim::new("w")?, vec![1]).update();
/// let _ready = write.set(jobs::status.eq("running"));
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
#[must_use = "a write does nothing until it is given its changes and run"]
pub struct IncompleteWrite<T: ClaimLease, A> {
    held: HeldRows<T>,
    answer: PhantomData<A>,
}

impl<T: ClaimLease, A> IncompleteWrite<T, A> {
    pub(crate) fn new(held: HeldRows<T>) -> Self {
        Self {
            held,
            answer: PhantomData,
        }
    }

    /// The changes: anything `diesel::update(..).set(..)` takes, on the table's other columns.
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use diesel::prelude::*;
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let won = jobs::table.claim_row(1, Lease::from_secs(30)?).by(&Claim::new("w")?).run::<Job>(conn)?.won().expect("free");
    /// assert!(won.update().set(jobs::status.eq("running")).run(conn)?);
    /// # Ok(())
    /// # }
    /// ```
    pub fn set<Changes: AsChangeset<Target = T>>(
        self,
        changes: Changes,
    ) -> Guarded<T, Writing, Changes, A> {
        Guarded {
            held: self.held,
            kind: Writing,
            changes,
            answer: PhantomData,
        }
    }
}

/// What a guarded write does to the lease columns, beside the caller's changes.
///
/// ```
/// # include!("../doctest_setup.rs");
/// use diesel_lease::__private::{Releasing, Renewing, WriteKind, Writing};
///
/// fn keeps_the_token<K: WriteKind<jobs::table>>() -> bool {
///     K::KEEPS_TOKEN
/// }
/// # fn main() {
/// assert!(keeps_the_token::<Renewing>() && keeps_the_token::<Writing>() && !keeps_the_token::<Releasing>());
/// # }
/// ```
pub trait WriteKind<T: ClaimLease> {
    /// The lease columns' changes.
    type Changes: AsChangeset<Target = T>;
    /// Whether the rows keep their claim's token after the write.
    const KEEPS_TOKEN: bool;

    /// The lease columns' changes on `table`.
    fn changes(&self, table: T) -> Self::Changes;

    /// Tells operators that the write changed `rows` rows held by `claim` (the `tracing`
    /// feature's events).
    fn tell(claim: &Claim, rows: usize);
}

/// A renewal: `claimed_at` set to the database's now.
///
/// ```
/// let _renewal = diesel_lease::__private::Renewing;
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Renewing;

/// A release: owner, token and `claimed_at` set to `NULL`.
///
/// ```
/// let _release = diesel_lease::__private::Releasing;
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Releasing;

/// A holder's write: the lease columns left as they are.
///
/// ```
/// let _write = diesel_lease::__private::Writing;
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Writing;

/// A renewal dated by the database's clock: `claimed_at` set to now less some microseconds,
/// which may be negative (a time to come). What a [`Keeper`](crate::Keeper)'s release before its
/// shortest hold has passed writes: the rows stay their claim's, and outlive the lease just when
/// the hold ends.
///
/// ```
/// # include!("../doctest_setup.rs");
/// fn keeps_the_token<K: diesel_lease::__private::WriteKind<jobs::table>>() -> bool {
///     K::KEEPS_TOKEN
/// }
/// # fn main() {
/// assert!(keeps_the_token::<diesel_lease::__private::DatedRenewal>());
/// # }
/// ```
#[derive(Debug, Clone, Copy)]
pub struct DatedRenewal(i64);

impl DatedRenewal {
    /// Dated `micros` microseconds before the database's now.
    pub(crate) fn new(micros: i64) -> Self {
        Self(micros)
    }
}

impl<T: ClaimLease> WriteKind<T> for Renewing {
    type Changes = Renewed<T>;
    const KEEPS_TOKEN: bool = true;

    fn changes(&self, table: T) -> Renewed<T> {
        table.renewed()
    }

    fn tell(claim: &Claim, rows: usize) {
        crate::events::emit_renewed::<T>(claim, rows);
    }
}

impl<T: ClaimLease> WriteKind<T> for Releasing {
    type Changes = Released<T>;
    const KEEPS_TOKEN: bool = false;

    fn changes(&self, table: T) -> Released<T> {
        table.released()
    }

    fn tell(claim: &Claim, rows: usize) {
        crate::events::emit_released::<T>(claim, rows);
    }
}

impl<T: ClaimLease> WriteKind<T> for Writing {
    type Changes = NoChanges<T>;
    const KEEPS_TOKEN: bool = true;

    fn changes(&self, _: T) -> NoChanges<T> {
        NoChanges::default()
    }

    fn tell(_: &Claim, _: usize) {}
}

impl<T: ClaimLease> WriteKind<T> for DatedRenewal {
    type Changes = RenewedAgo<T>;
    const KEEPS_TOKEN: bool = true;

    fn changes(&self, _: T) -> RenewedAgo<T> {
        use diesel::ExpressionMethods;
        T::ClaimedAt::default().eq(crate::sql::Ago::micros(self.0))
    }

    fn tell(claim: &Claim, rows: usize) {
        crate::events::emit_released::<T>(claim, rows);
    }
}

/// What a guarded write answers, named by the answer itself: `Vec<K>`, the keys of the rows it
/// changed; `bool`, whether its one row was still held.
///
/// ```
/// use diesel_lease::__private::Answer;
///
/// assert_eq!(<Vec<i64> as Answer<i64>>::answer(vec![7]), [7]);
/// assert!(<bool as Answer<i64>>::answer(vec![7]));
/// ```
pub trait Answer<K> {
    /// The answer, from the keys of the rows changed.
    fn answer(changed: Vec<K>) -> Self;
}

impl<K> Answer<K> for Vec<K> {
    fn answer(changed: Vec<K>) -> Vec<K> {
        changed
    }
}

impl<K> Answer<K> for bool {
    fn answer(changed: Vec<K>) -> bool {
        !changed.is_empty()
    }
}

/// The rows named that the claim still holds.
type Guard<T> = Both<KeysOf<T>, TokenIs<T>>;

/// The plan of a guarded write with the lease columns' `LeaseChanges` and the caller's `Changes`.
pub(crate) type GuardedPlan<T, Changes, LeaseChanges> = HeldWrite<
    CachedUpdate<T, Where<Guard<T>>, (Changes, LeaseChanges), NoReturning, PrimaryKeyAccess>,
    <T as Table>::PrimaryKey,
    SelectWhere<T, <T as Table>::PrimaryKey, Guard<T>, ForUpdateByKey>,
    SelectWhere<T, <T as Table>::PrimaryKey, Guard<T>, NoLock>,
    <T as ClaimLease>::Key,
>;

impl<T, Kind, Changes, A> LeaseStatement<T::Key> for Guarded<T, Kind, Changes, A>
where
    T: ClaimLease,
    A: Answer<T::Key>,
{
    type Output = A;
}

// A missing bound is named as the public one, `LeaseQuery`, never the backend's trait inside it.
#[diagnostic::do_not_recommend]
impl<'q, T, Kind, Changes, A, C> NativeLeaseQuery<'q, C, T::Key> for Guarded<T, Kind, Changes, A>
where
    T: ClaimLease,
    T::PrimaryKey: EqAll<T::Key>,
    Kind: WriteKind<T>,
    Changes: AsChangeset<Target = T> + Clone,
    A: Answer<T::Key>,
    C: Connection,
    C::Backend: LeaseBackend
        + WritesHeld<'q, C, GuardedPlan<T, Changes, Kind::Changes>, T::Key>
        // A kept claim's release dates its rows instead, before its shortest hold has passed.
        + WritesHeld<'q, C, GuardedPlan<T, Changes, RenewedAgo<T>>, T::Key>,
    DatabaseTime: NativeLeaseQuery<'q, C, i64>,
{
    fn run_native(self, conn: &mut C) -> Result<A, Error> {
        let Guarded {
            held,
            kind,
            changes,
            ..
        } = self;
        let changed = match &held.kept {
            // A release of kept rows goes through their keeper, which stops renewing them.
            Some(keeper) if !Kind::KEEPS_TOKEN => {
                let mut write = KeptWrite {
                    held: &held,
                    kind: &kind,
                    changes,
                    conn,
                };
                keeper.0.release(&mut write)?.unwrap_or_default()
            }
            _ => write_keys(&held, &kind, changes, &held.keys, conn)?,
        };
        Ok(A::answer(changed))
    }
}

/// The statements of a kept claim's release, on the caller's connection, with the caller's
/// changes.
struct KeptWrite<'a, T: ClaimLease, Kind, Changes, C> {
    held: &'a HeldRows<T>,
    kind: &'a Kind,
    changes: Changes,
    conn: &'a mut C,
}

impl<'q, T, Kind, Changes, C> ReleaseWrite<T::Key> for KeptWrite<'_, T, Kind, Changes, C>
where
    T: ClaimLease,
    T::PrimaryKey: EqAll<T::Key>,
    Kind: WriteKind<T>,
    Changes: AsChangeset<Target = T> + Clone,
    C: Connection,
    C::Backend: LeaseBackend
        + WritesHeld<'q, C, GuardedPlan<T, Changes, Kind::Changes>, T::Key>
        + WritesHeld<'q, C, GuardedPlan<T, Changes, RenewedAgo<T>>, T::Key>,
    DatabaseTime: NativeLeaseQuery<'q, C, i64>,
{
    fn database_time(&mut self) -> Result<i64, Error> {
        DatabaseTime.run_native(self.conn)
    }

    fn write(&mut self, keys: Vec<T::Key>, dated: Option<i64>) -> Result<Vec<T::Key>, Error> {
        let changes = self.changes.clone();
        match dated {
            Some(micros) => {
                let dated = DatedRenewal::new(micros);
                write_keys(self.held, &dated, changes, &keys, self.conn)
            }
            None => write_keys(self.held, self.kind, changes, &keys, self.conn),
        }
    }
}

/// The guarded write of the rows of `keys` that `held`'s claim still holds, in one statement, or
/// in one transaction of a statement a part when one statement cannot bind them all: the keys of
/// the rows it changed. Operators hear of it.
fn write_keys<'q, T, Kind, Changes, C>(
    held: &HeldRows<T>,
    kind: &Kind,
    changes: Changes,
    keys: &[T::Key],
    conn: &mut C,
) -> Result<Vec<T::Key>, Error>
where
    T: ClaimLease,
    T::PrimaryKey: EqAll<T::Key>,
    Kind: WriteKind<T>,
    Changes: AsChangeset<Target = T> + Clone,
    C: Connection,
    C::Backend: LeaseBackend + WritesHeld<'q, C, GuardedPlan<T, Changes, Kind::Changes>, T::Key>,
{
    let most = most_keys_in_one_statement(
        <C::Backend as LeaseBackend>::MOST_BOUND_VALUES,
        <C::Backend as LeaseBackend>::MOST_KEY_VALUES,
        <T::KeySqlType as KeyType>::COLUMNS,
    );
    let changed = if keys.len() <= most {
        write_part(held, kind, changes, keys, conn)?
    } else {
        // More keys than one statement binds: a statement a part, all in one transaction, so
        // that the write lands whole or not at all, as one statement would.
        C::Backend::all_or_nothing(conn, |conn| {
            let mut changed = Vec::with_capacity(keys.len());
            for part in keys.chunks(most) {
                changed.extend(write_part(held, kind, changes.clone(), part, conn)?);
            }
            Ok(changed)
        })?
    };
    Kind::tell(&held.claim, changed.len());
    Ok(changed)
}

/// One statement of a guarded write, of the rows of `keys` that `held`'s claim still holds:
/// the keys of the rows it changed.
fn write_part<'q, T, Kind, Changes, C>(
    held: &HeldRows<T>,
    kind: &Kind,
    changes: Changes,
    keys: &[T::Key],
    conn: &mut C,
) -> diesel::QueryResult<Vec<T::Key>>
where
    T: ClaimLease,
    T::PrimaryKey: EqAll<T::Key>,
    Kind: WriteKind<T>,
    Changes: AsChangeset<Target = T>,
    C: Connection,
    C::Backend: WritesHeld<'q, C, GuardedPlan<T, Changes, Kind::Changes>, T::Key>,
{
    if keys.is_empty() {
        return Ok(Vec::new());
    }
    let table = held.table;
    let guard = || Both::new(KeysIn::of(table, keys.to_vec()), token_is::<T>(&held.claim));
    let only = match keys {
        [key] => Some(key.clone()),
        _ => None,
    };
    let plan: GuardedPlan<T, Changes, Kind::Changes> = HeldWrite {
        statement: CachedUpdate::by_keys(
            table,
            Where::new(guard()),
            (changes, kind.changes(table)),
        ),
        returned: table.primary_key(),
        locking: SelectWhere::new(table, table.primary_key(), guard()),
        read_back: SelectWhere::new(table, table.primary_key(), guard()),
        keeps_token: Kind::KEEPS_TOKEN,
        only,
    };
    C::Backend::write_held(plan, conn)
}

impl<T: ClaimLease, Kind, Changes, A, C> crate::RunLeaseDsl<C> for Guarded<T, Kind, Changes, A> {}
