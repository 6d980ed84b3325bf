//! The keeper's renewal: every claim it keeps on a table renewed in one statement, each row
//! under its own claim's token. A statement of the library's, so that a keeper runs on every
//! connection the other statements run on.
use diesel::connection::Connection;
use diesel::expression_methods::EqAll;
use diesel::Table;

use crate::backend::NativeLeaseQuery;
use crate::backend::{HeldWrite, LeaseBackend, WritesHeld};
use crate::query::LeaseStatement;
use crate::sql::{CachedUpdate, SelectWhere, Where};
use crate::sql::{ForUpdateByKey, NoLock, NoReturning, PairsIn, PairsOf, PrimaryKeyAccess};
use crate::table::TokenOf;
use crate::{ClaimLease, Error, Renewed};

/// A key and the token of the claim that holds it, as a renewal reads them.
type KeyAndToken<T> = (<T as Table>::PrimaryKey, TokenOf<T>);

/// A row a renewal changed: its key, and the token that holds it.
pub type RenewedRow<T> = (<T as ClaimLease>::Key, Option<String>);

/// How a backend runs a [`KeeperRenewal`]: the `UPDATE` of the rows named by (key, token)
/// pairs, and the reads of them.
pub type PairRenewal<T> = HeldWrite<
    CachedUpdate<T, Where<PairsOf<T>>, Renewed<T>, NoReturning, PrimaryKeyAccess>,
    KeyAndToken<T>,
    SelectWhere<T, KeyAndToken<T>, PairsOf<T>, ForUpdateByKey>,
    SelectWhere<T, KeyAndToken<T>, PairsOf<T>, NoLock>,
    RenewedRow<T>,
>;

/// The statement a [`Keeper`](crate::Keeper) renews with: the rows named by `pairs` (a key, and
/// the token of the claim that should hold it), each renewed only while that claim holds it, in
/// one `UPDATE`. It gives back the rows it changed, with their tokens.
///
/// ```
/// # include!("../doctest_setup.rs");
/// use diesel_lease::prelude::*;
/// use diesel_lease::__private::KeeperRenewal;
///
/// # fn main() -> Result<(), diesel_lease::Error> {
/// # let conn = &mut jobs_connection()?;
/// let worker = Claim::new("worker-1")?;
/// let _won = jobs::table.claim_row(1, Lease::from_secs(30)?).by(&worker).returning(jobs::id).run::<i64>(conn)?;
/// let renewal = KeeperRenewal::new(jobs::table, vec![(1, worker.token().to_owned()), (1, "stale".into())]);
/// assert_eq!(renewal.run(conn)?, [(1, Some(worker.token().to_owned()))]);
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
#[must_use = "a renewal does nothing until it is run"]
pub struct KeeperRenewal<T: ClaimLease> {
    table: T,
    pairs: Vec<(T::Key, String)>,
}

impl<T: ClaimLease> KeeperRenewal<T> {
    /// The renewal of the rows of `table` named by `pairs`, each under its token.
    pub fn new(table: T, pairs: Vec<(T::Key, String)>) -> Self {
        Self { table, pairs }
    }
}

impl<T: ClaimLease> LeaseStatement<RenewedRow<T>> for KeeperRenewal<T> {
    type Output = Vec<RenewedRow<T>>;
}

impl<'q, T, C> NativeLeaseQuery<'q, C, RenewedRow<T>> for KeeperRenewal<T>
where
    T: ClaimLease,
    T::PrimaryKey: EqAll<T::Key>,
    C: Connection,
    C::Backend: LeaseBackend + WritesHeld<'q, C, PairRenewal<T>, RenewedRow<T>>,
{
    fn run_native(self, conn: &mut C) -> Result<Vec<RenewedRow<T>>, Error> {
        let table = self.table;
        let key_and_token = || (table.primary_key(), T::ClaimToken::default());
        let held = || PairsIn::of(table, self.pairs.clone());
        let only = match self.pairs.as_slice() {
            [(key, token)] => Some((key.clone(), Some(token.clone()))),
            _ => None,
        };
        let plan: PairRenewal<T> = HeldWrite {
            statement: CachedUpdate::by_keys(table, Where::new(held()), table.renewed()),
            returned: key_and_token(),
            locking: SelectWhere::new(table, key_and_token(), held()),
            read_back: SelectWhere::new(table, key_and_token(), held()),
            keeps_token: true,
            only,
        };
        Ok(C::Backend::write_held(plan, conn)?)
    }
}

impl<T: ClaimLease, C> crate::RunLeaseDsl<C> for KeeperRenewal<T> {}
