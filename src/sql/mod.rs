//! The SQL nodes diesel-lease's statements are made of, shared by every backend: the database's
//! clock, `AND`, exact text, lists of keys, plain and locking reads, cached updates, batch updates. Each
//! backend renders the few that differ its own way ([`LeaseBackend`](crate::backend::LeaseBackend)).
//!
//! A table author names these in statements composed by hand; the rest of the nodes are the
//! library's own.
pub(crate) mod after;
pub(crate) mod batch;
pub(crate) mod both;
pub(crate) mod changes;
pub(crate) mod clock;
pub(crate) mod exact;
pub(crate) mod incremented;
pub(crate) mod keys;
pub(crate) mod select;
pub(crate) mod update;

// What statements composed by hand use: the database's clock, `AND`, exact text, no changes, an
// order, the cached update.
pub use batch::{CallerOrder, NoOrder, Ordered, MAX_BATCH_SIZE};
pub use both::Both;
pub use changes::NoChanges;
pub use clock::{now, Now, Null};
pub use exact::TextIs;
pub use update::{update, CachedUpdate};

// The rest of every statement's parts, public only through `crate::__private::sql`.
pub(crate) use after::After;
pub(crate) use batch::batch_limit;
pub(crate) use clock::{Ago, ClockMicros, MicrosSince};
pub(crate) use exact::walk_text_is;
pub(crate) use exact::TextIn;
pub(crate) use incremented::Incremented;
pub(crate) use keys::most_keys_in_one_statement;
pub(crate) use keys::{KeysIn, KeysOf, PairsIn, PairsOf};
pub(crate) use select::{
    CountPerOwner, ForUpdate, ForUpdateByKey, NoLock, PassingLocked, SelectWhere,
};
pub(crate) use update::{NoReturning, PrimaryKeyAccess, ReturningClause, Where};
