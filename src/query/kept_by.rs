//! Held rows that a keeper keeps: the link from the holder's handle to the keeper, through which
//! a release of the rows stops their renewals, as the keeper's own release does. The keeper
//! implements it; the query layer names only this trait, so that the layers point one way.
use std::fmt;
use std::sync::Arc;

use crate::Error;

/// The keeper's side of a kept claim, as a release through the holder's handle meets it.
pub(crate) trait Keeping<K>: Send + Sync {
    /// Releases what the keeper still holds of the claim, once, through `write`: its renewals
    /// stop, and neither the keeper nor the handle's drop releases it again. `None` when it was
    /// released before, or handed back. After an error it is renewed no more.
    fn release(&self, write: &mut dyn ReleaseWrite<K>) -> Result<Option<Vec<K>>, Error>;
}

/// The statements of a kept claim's release, on the connection it runs on.
pub(crate) trait ReleaseWrite<K> {
    /// The database's time, in microseconds since the epoch (a shortest hold is measured by it).
    fn database_time(&mut self) -> Result<i64, Error>;

    /// Releases the rows of `keys` the claim still holds, or, with `dated`, dates them that many
    /// microseconds before the database's now and leaves them the claim's; the keys changed.
    fn write(&mut self, keys: Vec<K>, dated: Option<i64>) -> Result<Vec<K>, Error>;
}

/// The keeper that keeps some held rows.
pub(crate) struct KeptBy<K>(pub(crate) Arc<dyn Keeping<K>>);

impl<K> Clone for KeptBy<K> {
    fn clone(&self) -> Self {
        Self(Arc::clone(&self.0))
    }
}

impl<K> fmt::Debug for KeptBy<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("KeptBy(..)")
    }
}

/// The same keeper's claim.
impl<K> PartialEq for KeptBy<K> {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}
