//! The SQL nodes diesel-lease's statements are made of, shared by every backend: the database's
//! clock, `AND`, exact text, lists of keys, plain and locking reads, cached updates, batch updates. Each
//! backend renders the few that differ its own way ([`LeaseBackend`](crate::backend::LeaseBackend)).
//!
//! A table author seldom names these: they appear in the types of the builders' parameters and
//! in the bounds of the backends.
mod and;
mod batch;
mod changes;
mod clock;
mod exact;
mod incremented;
mod keys;
mod select;
mod update;

pub use and::And;
pub(crate) use batch::batch_limit;
pub use batch::{BatchUpdate, NoOrder, OrderBy, MAX_BATCH_SIZE};
pub use changes::NoChanges;
pub use clock::{now, Ago, ClockMicros, MicrosSince, Now, Null};
pub(crate) use exact::walk_text_is;
pub use exact::{TextIn, TextIs};
pub use incremented::Incremented;
pub(crate) use keys::most_keys_in_one_statement;
pub use keys::{KeysIn, KeysOf, PairsIn, PairsOf};
pub use select::{
    CountPerOwner, ForUpdate, ForUpdateByKey, NoLock, PassingLocked, ReadLock, SelectWhere,
    SelectWhereId,
};
pub use update::{
    update, AnyIndex, IncompleteUpdate, NoReturning, PrimaryKeyAccess, Returning, Update, UpdateOf,
    Where,
};
