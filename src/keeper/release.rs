//! The keeper's drain: every claim it keeps on a table released in one statement, each row
//! under its own claim's token. A statement of the library's, so that a keeper drains on every
//! connection the other statements run on.
use diesel::connection::Connection;
use diesel::expression_methods::EqAll;
use diesel::Table;

use crate::backend::NativeLeaseQuery;
use crate::backend::{HeldWrite, LeaseBackend, WritesHeld};
use crate::query::LeaseStatement;
use crate::sql::{CachedUpdate, SelectWhere, Where};
use crate::sql::{ForUpdateByKey, NoLock, NoReturning, PairsIn, PairsOf, PrimaryKeyAccess};
use crate::{ClaimLease, Error, Released};

/// How a backend runs a [`KeeperRelease`]: the `UPDATE` of the rows named by (key, token) pairs,
/// and the locking read of them where there is no `RETURNING`.
pub type PairRelease<T> = HeldWrite<
    CachedUpdate<T, Where<PairsOf<T>>, Released<T>, NoReturning, PrimaryKeyAccess>,
    <T as Table>::PrimaryKey,
    SelectWhere<T, <T as Table>::PrimaryKey, PairsOf<T>, ForUpdateByKey>,
    SelectWhere<T, <T as Table>::PrimaryKey, PairsOf<T>, NoLock>,
    <T as ClaimLease>::Key,
>;

/// The statement a [`Keeper`](crate::Keeper) drains with
/// ([`Keeper::drain`](crate::Keeper::drain)): the rows named by `pairs` (a key, and the token of
/// the claim that should hold it), each released only while that claim holds it, in one
/// `UPDATE`. It gives back the keys of the rows it released.
///
/// ```
/// # include!("../doctest_setup.rs");
/// use diesel_lease::prelude::*;
/// use diesel_lease::__private::KeeperRelease;
///
/// # fn main() -> Result<(), diesel_lease::Error> {
/// # let conn = &mut jobs_connection()?;
/// let worker = Claim::new("worker-1")?;
/// let _won = jobs::table.claim_row(1, Lease::from_secs(30)?).by(&worker).returning(jobs::id).run::<i64>(conn)?;
/// let release = KeeperRelease::new(jobs::table, vec![(1, "stale".into()), (1, worker.token().to_owned())]);
/// assert_eq!(release.run(conn)?, [1]);
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
#[must_use = "a release does nothing until it is run"]
pub struct KeeperRelease<T: ClaimLease> {
    table: T,
    pairs: Vec<(T::Key, String)>,
}

impl<T: ClaimLease> KeeperRelease<T> {
    /// The release of the rows of `table` named by `pairs`, each under its token.
    pub fn new(table: T, pairs: Vec<(T::Key, String)>) -> Self {
        Self { table, pairs }
    }
}

impl<T: ClaimLease> LeaseStatement<T::Key> for KeeperRelease<T> {
    type Output = Vec<T::Key>;
}

impl<'q, T, C> NativeLeaseQuery<'q, C, T::Key> for KeeperRelease<T>
where
    T: ClaimLease,
    T::PrimaryKey: EqAll<T::Key>,
    C: Connection,
    C::Backend: LeaseBackend + WritesHeld<'q, C, PairRelease<T>, T::Key>,
{
    fn run_native(self, conn: &mut C) -> Result<Vec<T::Key>, Error> {
        let table = self.table;
        let held = || PairsIn::of(table, self.pairs.clone());
        let only = match self.pairs.as_slice() {
            [(key, _)] => Some(key.clone()),
            _ => None,
        };
        let plan: PairRelease<T> = HeldWrite {
            statement: CachedUpdate::by_keys(table, Where::new(held()), table.released()),
            returned: table.primary_key(),
            locking: SelectWhere::new(table, table.primary_key(), held()),
            read_back: SelectWhere::new(table, table.primary_key(), held()),
            keeps_token: false,
            only,
        };
        Ok(C::Backend::write_held(plan, conn)?)
    }
}

impl<T: ClaimLease, C> crate::RunLeaseDsl<C> for KeeperRelease<T> {}
