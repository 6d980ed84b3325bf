//! Rows named by who holds them, whatever their claims: everything an owner holds, or everything
//! a node's earlier lives held, released in one statement (a drain at shutdown, a clean-up at
//! start-up).
use diesel::connection::Connection;
use diesel::query_builder::AsChangeset;
use diesel::query_dsl::LoadQuery;
use diesel::Table;

use crate::backend::NativeLeaseQuery;
use crate::backend::{read, HeldWrite, LeaseBackend, WritesHeld};
use crate::query::LeaseStatement;
use crate::sql::{
    CachedUpdate, CountPerOwner, ForUpdate, NoChanges, NoLock, SelectWhere, TextIn, Where,
};
use crate::table::OwnerOf;
use crate::{Claim, ClaimLease, Error, Node, Released};

/// Rows of `T` named by who holds them, whatever their claims: built by
/// [`LeaseDsl::held_by_owner`](crate::LeaseDsl::held_by_owner) (`Owners` is the owner's name)
/// or [`LeaseDsl::held_by_earlier_lives_of`](crate::LeaseDsl::held_by_earlier_lives_of)
/// (`Owners` is the [`Node`]). Their holder's only write is [`release`](Self::release): a write
/// that is not the holder's own must never renew or change a row another life may hold.
///
/// ```
/// # include!("../doctest_setup.rs");
/// use diesel::prelude::*;
/// use diesel_lease::prelude::*;
///
/// # fn main() -> Result<(), diesel_lease::Error> {
/// # let conn = &mut jobs_connection()?;
/// let lease = Lease::from_secs(30)?;
/// jobs::table.claim_batch(10, lease).by(&Claim::new("worker-1")?).set(jobs::status.eq("running")).run::<Job>(conn)?;
/// // At shutdown, or when worker-1 is known gone: everything it holds goes back to the queue.
/// let freed = jobs::table.held_by_owner("worker-1").release().set(jobs::status.eq("queued")).run(conn)?;
/// assert_eq!(freed, [1]);
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct OwnedRows<T, Owners> {
    table: T,
    owners: Owners,
}

impl<T: ClaimLease, Owners: Clone> OwnedRows<T, Owners> {
    pub(crate) fn new(table: T, owners: Owners) -> Self {
        Self { table, owners }
    }

    /// The release of every row the owners hold, whatever their claims: owner, token and
    /// `claimed_at` set to `NULL`, with the caller's `.set(..)` in the same statement (back to
    /// `queued`, say). Run it for the keys of the rows released.
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// assert!(jobs::table.held_by_owner("worker-9").release().run(conn)?.is_empty(), "worker-9 holds nothing");
    /// # Ok(())
    /// # }
    /// ```
    pub fn release(&self) -> OwnerRelease<T, Owners, NoChanges<T>> {
        OwnerRelease {
            table: self.table,
            owners: self.owners.clone(),
            changes: NoChanges::default(),
        }
    }
}

/// The release of the rows named by who holds them: made by [`OwnedRows::release`], given the
/// caller's changes by [`set`](Self::set), run by `.run(conn)` for the keys of the rows released.
///
/// One `UPDATE` of the rows whose owner is one of those named, which waits for (never skips) a
/// row another statement holds locked, so that nothing they hold is left behind: `RETURNING`
/// on PostgreSQL and SQLite; on MySQL/MariaDB a locking read of the rows' keys and the `UPDATE`,
/// in a short READ COMMITTED transaction. Run it once the owner has stopped claiming (a claim it
/// makes meanwhile may be released too). It frees every row the owner holds, a row a keeper
/// released within its shortest hold too (dated to outlive the hold, it still names its owner):
/// a release by name ends a shortest hold. The owner names are compared exactly, byte for byte,
/// whatever the column's collation (see [`TextIs`](crate::dsl::TextIs)): a release by
/// `worker-1` leaves `Worker-1`'s rows held, on MySQL/MariaDB's case-insensitive default
/// collations too.
///
/// ```
/// # include!("../doctest_setup.rs");
/// # use diesel::prelude::*;
/// # use diesel_lease::prelude::*;
/// # fn main() -> Result<(), diesel_lease::Error> {
/// # let conn = &mut jobs_connection()?;
/// jobs::table.claim_row(1, Lease::from_secs(30)?).by(&Claim::new("worker-1")?).run::<Job>(conn)?;
/// let release: diesel_lease::__private::OwnerRelease<jobs::table, String, _> =
///     jobs::table.held_by_owner("worker-1").release().set(jobs::status.eq("queued"));
/// assert_eq!(release.run(conn)?, [1]);
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
#[must_use = "a release does nothing until it is run"]
pub struct OwnerRelease<T, Owners, Changes> {
    table: T,
    owners: Owners,
    changes: Changes,
}

impl<T: ClaimLease, Owners> OwnerRelease<T, Owners, NoChanges<T>> {
    /// The caller's own changes, set on the released rows by the same statement. They read each
    /// row as it was before the release, on every backend.
    ///
    /// See [`OwnerRelease`] for an example.
    pub fn set<Changes: AsChangeset<Target = T>>(
        self,
        changes: Changes,
    ) -> OwnerRelease<T, Owners, Changes> {
        OwnerRelease {
            table: self.table,
            owners: self.owners,
            changes,
        }
    }
}

/// The rows whose owner is one of a list, exactly.
type OwnerIn<T> = TextIn<OwnerOf<T>>;

/// The plan of a release of the rows that owners hold, with the caller's `Changes`.
pub(crate) type OwnerReleasePlan<T, Changes> = HeldWrite<
    CachedUpdate<T, Where<OwnerIn<T>>, (Changes, Released<T>)>,
    <T as Table>::PrimaryKey,
    SelectWhere<T, <T as Table>::PrimaryKey, OwnerIn<T>, ForUpdate>,
    SelectWhere<T, <T as Table>::PrimaryKey, OwnerIn<T>, NoLock>,
    <T as ClaimLease>::Key,
>;

impl<T: ClaimLease, Owners, Changes> LeaseStatement<T::Key> for OwnerRelease<T, Owners, Changes> {
    type Output = Vec<T::Key>;
}

/// Everything one owner holds. An owner name that is not one is refused before anything is sent.
impl<'q, T, Changes, C> NativeLeaseQuery<'q, C, T::Key> for OwnerRelease<T, String, Changes>
where
    T: ClaimLease,
    Changes: AsChangeset<Target = T>,
    C: Connection,
    C::Backend: LeaseBackend + WritesHeld<'q, C, OwnerReleasePlan<T, Changes>, T::Key>,
{
    fn run_native(self, conn: &mut C) -> Result<Vec<T::Key>, Error> {
        let owner = Claim::check_text(&self.owners).map_err(Error::InvalidOwner)?;
        release_owned(self.table, vec![owner.to_owned()], self.changes, conn)
    }
}

/// Everything a node's earlier lives hold: the owners of the table's held rows are read (one row
/// an owner, grouped exactly), those that name an earlier life of the node exactly are kept, and
/// their rows released in one statement. An earlier life is gone (its process ended before this one
/// started), so none of its rows can be claimed between the two.
impl<'q, T, Changes, C> NativeLeaseQuery<'q, C, T::Key> for OwnerRelease<T, Node, Changes>
where
    T: ClaimLease,
    Changes: AsChangeset<Target = T>,
    C: Connection,
    C::Backend: LeaseBackend + WritesHeld<'q, C, OwnerReleasePlan<T, Changes>, T::Key>,
    CountPerOwner<T>: LoadQuery<'q, C, (Option<String>, i64)>,
{
    fn run_native(self, conn: &mut C) -> Result<Vec<T::Key>, Error> {
        let owners: Vec<(Option<String>, i64)> = read(CountPerOwner::new(self.table), conn)?;
        let lives: Vec<String> = owners
            .into_iter()
            .filter_map(|(owner, _)| owner)
            .filter(|owner| self.owners.is_earlier_life(owner))
            .collect();
        release_owned(self.table, lives, self.changes, conn)
    }
}

/// Releases every row of `table` that one of `owners` holds, with `changes`: the keys released.
fn release_owned<'q, T, Changes, C>(
    table: T,
    owners: Vec<String>,
    changes: Changes,
    conn: &mut C,
) -> Result<Vec<T::Key>, Error>
where
    T: ClaimLease,
    Changes: AsChangeset<Target = T>,
    C: Connection,
    C::Backend: WritesHeld<'q, C, OwnerReleasePlan<T, Changes>, T::Key>,
{
    if owners.is_empty() {
        return Ok(Vec::new());
    }
    let owner_in = || TextIn::new(T::Owner::default(), owners.clone());
    let plan: OwnerReleasePlan<T, Changes> = HeldWrite {
        statement: CachedUpdate::new(table, Where::new(owner_in()), (changes, table.released())),
        returned: table.primary_key(),
        locking: SelectWhere::new(table, table.primary_key(), owner_in()),
        read_back: SelectWhere::new(table, table.primary_key(), owner_in()),
        keeps_token: false,
        only: None,
    };
    let released = C::Backend::write_held(plan, conn)?;
    crate::events::emit_released_by_owners::<T>(&owners, released.len());
    Ok(released)
}

impl<T: ClaimLease, Owners, Changes, C> crate::RunLeaseDsl<C> for OwnerRelease<T, Owners, Changes> {}
