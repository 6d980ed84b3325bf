//! The lease columns of a table, and the changesets and predicates built from them.
mod changesets;
mod claimed_at;
mod fence;
mod key;
mod macros;
mod name;

use diesel::prelude::*;
use diesel::sql_types::is_nullable::IsNullable;
use diesel::sql_types::{Nullable, SingleValue, SqlType, Text};
use diesel::Table;

pub(crate) use changesets::{taken_by, token_is, ClaimedAtOf, OwnerOf, TokenOf};
pub use changesets::{
    Claimable, FenceBump, FenceRead, Fresh, HeldBy, Outlived, Released, Renewed, RenewedAgo, Taken,
    TakenAgo, TakenBy, TokenIs, Unclaimed,
};
pub use claimed_at::ClaimedAtType;
pub use fence::{Fence, Fenced, NoFence};
#[cfg(any(feature = "postgres", feature = "mysql"))]
pub(crate) use key::single_column_keys;
pub use key::{BindKey, IntoKey, KeyType};
#[doc(hidden)]
pub use name::sql_table_name;

use crate::sql::{Ago, Now, Null, TextIs};
use crate::{Age, Claim, Lease};

/// A table whose rows can be claimed: it names its lease columns, and gives the changesets and
/// predicates built from them.
///
/// * `Owner`: nullable text, who holds the row (a node, a worker);
/// * `ClaimToken`: nullable text, which claim this is; every write of a holder is guarded by it;
/// * `ClaimedAt`: a nullable timestamp, since when; written only from the database's clock;
/// * `Fence`: an optional claim counter (see [chapter 4 of the guide](crate::guide::ch04_fences));
/// * `Key`: the Rust value of the table's primary key, whatever its columns (see [`KeyType`]).
///
/// Implement it with [`claim_lease!`](crate::claim_lease). The methods return changesets to put
/// in one `.set(..)` with the caller's own assignments, and predicates for `.filter(..)`,
/// combinable with `.and`/`.or`, for statements composed by hand; the statements the library
/// builds start from [`LeaseDsl`](crate::LeaseDsl). What wins a row, which status it moves
/// through and how long a lease runs stay with the table's own code.
///
/// ```
/// # include!("../doctest_setup.rs");
/// use diesel::prelude::*;
/// use diesel_lease::prelude::*;
///
/// # fn main() -> Result<(), diesel_lease::Error> {
/// # let conn = &mut jobs_connection()?;
/// let lease = Lease::from_secs(60)?;
/// let claim = Claim::new("worker-1")?;
/// let claimed = diesel::update(jobs::table.filter(jobs::id.eq(1)).filter(jobs::table.claimable(lease)))
///     .set((jobs::status.eq("running"), jobs::table.taken(&claim)))
///     .execute(conn)?;
/// assert_eq!(claimed, 1);
/// # Ok(())
/// # }
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no lease columns",
    label = "a table without lease columns",
    note = "name them with `diesel_lease::claim_lease!(table)` (columns owner, claim_token and claimed_at) or `claim_lease!(table {{ owner: .., claim_token: .., claimed_at: .. }})`"
)]
pub trait ClaimLease: Table + Copy + Default + Send + Sync + 'static {
    /// Who holds the row.
    type Owner: Column<Table = Self, SqlType = Nullable<Text>> + Default;
    /// Which claim holds the row.
    type ClaimToken: Column<Table = Self, SqlType = Nullable<Text>> + Default;
    /// Since when, by the database's clock.
    type ClaimedAt: Column<Table = Self, SqlType = Self::Clock> + Default;
    /// The SQL type of `ClaimedAt`: a nullable timestamp the backend's clock can write (see
    /// `TimestampOn`).
    type Clock: SqlType<IsNull = IsNullable> + SingleValue + ClaimedAtType;
    /// The fence, a claim counter for effects outside the database: a `BIGINT` column, or
    /// [`NoFence`]. See [chapter 4 of the guide](crate::guide::ch04_fences).
    type Fence: Fence<Self>;
    /// The Rust value of the table's primary key: `i64` for a `BigInt` key, `(String, i64)` for
    /// a key of `(Text, BigInt)` columns.
    type Key: Clone + std::fmt::Debug + Eq + std::hash::Hash + Send + Sync + 'static;
    /// The SQL type of the table's primary key, whose value `Key` is.
    type KeySqlType: KeyType<Value = Self::Key>;

    /// The table's name as its SQL gives it (`jobs`, or `queue.jobs` when its `table!` names a
    /// schema): what drains, statistics and events call it. [`claim_lease!`](crate::claim_lease)
    /// writes it, once for each table; the default, for a table it did not write, is the Rust
    /// type's path.
    #[doc(hidden)]
    fn __sql_name() -> &'static str {
        std::any::type_name::<Self>()
    }

    /// The row is taken by `claim`: owner and token from the claim, claimed at the database's
    /// now, and its fence, if it has one, one higher.
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use diesel::prelude::*;
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let claim = Claim::new("worker-1")?;
    /// diesel::update(jobs::table.find(1)).set(jobs::table.taken(&claim)).execute(conn)?;
    /// let owner: Option<String> = jobs::table.find(1).select(jobs::owner).first(conn)?;
    /// assert_eq!(owner.as_deref(), Some("worker-1"));
    /// # Ok(())
    /// # }
    /// ```
    fn taken(self, claim: &Claim) -> Taken<'_, Self> {
        (
            Self::Owner::default().eq(claim.owner()),
            Self::ClaimToken::default().eq(claim.token()),
            Self::ClaimedAt::default().eq(Now::default()),
            <Self::Fence as Fence<Self>>::bump(),
        )
    }

    /// Like [`taken`](Self::taken), but dated back by `age`: the claim counts as taken `age` ago.
    ///
    /// A lock that should block others for only part of the lease is taken this way, so that the
    /// one lease stays the only measure of staleness.
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use diesel::prelude::*;
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let lease = Lease::from_secs(60)?;
    /// let claim = Claim::new("worker-1")?;
    /// let age = Age::new(std::time::Duration::from_secs(59))?;
    /// diesel::update(jobs::table.find(1)).set(jobs::table.taken_ago(&claim, age)).execute(conn)?;
    /// let fresh: i64 = jobs::table.filter(jobs::table.fresh(lease)).count().get_result(conn)?;
    /// assert_eq!(fresh, 1, "one second of its lease is left");
    /// # Ok(())
    /// # }
    /// ```
    fn taken_ago(self, claim: &Claim, age: Age) -> TakenAgo<'_, Self> {
        (
            Self::Owner::default().eq(claim.owner()),
            Self::ClaimToken::default().eq(claim.token()),
            Self::ClaimedAt::default().eq(Ago::new(age)),
            <Self::Fence as Fence<Self>>::bump(),
        )
    }

    /// The lease starts again: claimed at the database's now, by the same claim.
    ///
    /// Guard it with [`held_by`](Self::held_by): a renewal that changes no row means the lease
    /// was taken over, and the holder should stop.
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use diesel::prelude::*;
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let claim = Claim::new("worker-1")?;
    /// diesel::update(jobs::table.find(1)).set(jobs::table.taken(&claim)).execute(conn)?;
    /// let renewed = diesel::update(jobs::table.find(1).filter(jobs::table.held_by(claim.token())))
    ///     .set(jobs::table.renewed())
    ///     .execute(conn)?;
    /// assert_eq!(renewed, 1, "still ours");
    /// # Ok(())
    /// # }
    /// ```
    fn renewed(self) -> Renewed<Self> {
        Self::ClaimedAt::default().eq(Now::default())
    }

    /// Like [`renewed`](Self::renewed), but dated back by `age`.
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use diesel::prelude::*;
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let claim = Claim::new("worker-1")?;
    /// diesel::update(jobs::table.find(1)).set(jobs::table.taken(&claim)).execute(conn)?;
    /// // Age the row by two minutes, as tests do instead of sleeping.
    /// let age = Age::new(std::time::Duration::from_secs(120))?;
    /// diesel::update(jobs::table.find(1)).set(jobs::table.renewed_ago(age)).execute(conn)?;
    /// let outlived: i64 = jobs::table
    ///     .filter(jobs::table.outlived(Lease::from_secs(60)?))
    ///     .count()
    ///     .get_result(conn)?;
    /// assert_eq!(outlived, 1);
    /// # Ok(())
    /// # }
    /// ```
    fn renewed_ago(self, age: Age) -> RenewedAgo<Self> {
        Self::ClaimedAt::default().eq(Ago::new(age))
    }

    /// The row is free: owner, token and claimed_at all `NULL`.
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use diesel::prelude::*;
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let claim = Claim::new("worker-1")?;
    /// diesel::update(jobs::table.find(1)).set(jobs::table.taken(&claim)).execute(conn)?;
    /// diesel::update(jobs::table.find(1).filter(jobs::table.held_by(claim.token())))
    ///     .set((jobs::status.eq("done"), jobs::table.released()))
    ///     .execute(conn)?;
    /// let free: i64 = jobs::table.filter(jobs::table.unclaimed()).count().get_result(conn)?;
    /// assert_eq!(free, 1);
    /// # Ok(())
    /// # }
    /// ```
    fn released(self) -> Released<Self> {
        (
            Self::Owner::default().eq(Null::default()),
            Self::ClaimToken::default().eq(Null::default()),
            Self::ClaimedAt::default().eq(Null::default()),
        )
    }

    /// No claim holds the row (its token is `NULL`).
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use diesel::prelude::*;
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let free: i64 = jobs::table.filter(jobs::table.unclaimed()).count().get_result(conn)?;
    /// assert_eq!(free, 1);
    /// # Ok(())
    /// # }
    /// ```
    fn unclaimed(self) -> Unclaimed<Self> {
        Self::ClaimToken::default().is_null()
    }

    /// The claim with `token` holds the row: the guard of every renewal, release or write by a
    /// holder. The token is compared exactly, byte for byte, whatever the column's collation
    /// (see [`TextIs`](crate::dsl::TextIs)): `T1` never holds a row claimed by `t1`.
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use diesel::prelude::*;
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let stranger = Claim::new("worker-9")?;
    /// let changed = diesel::update(jobs::table.find(1).filter(jobs::table.held_by(stranger.token())))
    ///     .set(jobs::status.eq("done"))
    ///     .execute(conn)?;
    /// assert_eq!(changed, 0, "a claim that does not hold the row changes nothing");
    /// # Ok(())
    /// # }
    /// ```
    fn held_by(self, token: &str) -> HeldBy<'_, Self> {
        TextIs::new(Self::ClaimToken::default(), token)
    }

    /// The row was claimed (or last renewed) longer than `lease` ago, by the database's clock.
    ///
    /// Says nothing of an unclaimed row: `NULL` is not outlived. Whether an unclaimed row is
    /// available is the table's own answer; [`claimable`](Self::claimable) is the common one.
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use diesel::prelude::*;
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let outlived: i64 = jobs::table
    ///     .filter(jobs::table.outlived(Lease::from_secs(1)?))
    ///     .count()
    ///     .get_result(conn)?;
    /// assert_eq!(outlived, 0, "an unclaimed row is not outlived");
    /// # Ok(())
    /// # }
    /// ```
    fn outlived(self, lease: Lease) -> Outlived<Self> {
        Self::ClaimedAt::default().lt(Ago::lease(lease))
    }

    /// The row was claimed (or last renewed) within `lease`, by the database's clock: the holder
    /// may still be at work. For a claimed row, exactly one of `fresh` and `outlived` holds.
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use diesel::prelude::*;
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let claim = Claim::new("worker-1")?;
    /// diesel::update(jobs::table.find(1)).set(jobs::table.taken(&claim)).execute(conn)?;
    /// let fresh: i64 = jobs::table
    ///     .filter(jobs::table.held_by(claim.token()).and(jobs::table.fresh(Lease::from_secs(60)?)))
    ///     .count()
    ///     .get_result(conn)?;
    /// assert_eq!(fresh, 1);
    /// # Ok(())
    /// # }
    /// ```
    fn fresh(self, lease: Lease) -> Fresh<Self> {
        Self::ClaimedAt::default().ge(Ago::lease(lease))
    }

    /// Unclaimed, or claimed longer than `lease` ago: the common answer to "may I take it?".
    ///
    /// ```
    /// # include!("../doctest_setup.rs");
    /// # use diesel::prelude::*;
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let claimable: i64 = jobs::table
    ///     .filter(jobs::table.claimable(Lease::from_secs(60)?))
    ///     .count()
    ///     .get_result(conn)?;
    /// assert_eq!(claimable, 1);
    /// # Ok(())
    /// # }
    /// ```
    fn claimable(self, lease: Lease) -> Claimable<Self> {
        self.unclaimed().or(self.outlived(lease))
    }
}
