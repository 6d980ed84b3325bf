//! The lease columns of a table, and the changesets and predicates built from them.
use diesel::dsl;
use diesel::prelude::*;
use diesel::sql_types::is_nullable::IsNullable;
use diesel::sql_types::{Bool, Nullable, SingleValue, SqlType, Text};
use diesel::Table;

use crate::clock::{Ago, Now, Null};
use crate::{Age, Claim, Lease};

/// A table whose rows can be claimed: it names its three lease columns.
///
/// * `Owner`: nullable text, who holds the row (a node, a worker);
/// * `ClaimToken`: nullable text, which claim this is; every write of a holder is guarded by it;
/// * `ClaimedAt`: a nullable timestamp, since when; written only from the database's clock.
///
/// Implement it with [`claim_lease!`](crate::claim_lease). The methods return changesets to put in
/// one `.set(..)` with the caller's own assignments, and predicates for `.filter(..)`, combinable
/// with `.and`/`.or`. What wins a row, which status it moves through and how long a lease runs
/// stay with the table's own code.
///
/// ```
/// # include!("doctest_setup.rs");
/// use diesel::prelude::*;
/// use diesel_lease::prelude::*;
///
/// # fn main() -> Result<(), diesel_lease::Error> {
/// # let conn = &mut jobs_connection()?;
/// let lease = Lease::from_secs(60)?;
/// let claim = Claim::new("worker-1")?;
/// let claimed = diesel::update(jobs::table.filter(jobs::id.eq(1)).filter(jobs::table.claimable(lease)))
///     .set((jobs::table.taken(&claim), jobs::status.eq("running")))
///     .execute(conn)?;
/// assert_eq!(claimed, 1);
/// # Ok(())
/// # }
/// ```
pub trait ClaimLease: Table + Copy + Default {
    /// Who holds the row.
    type Owner: Column<Table = Self, SqlType = Nullable<Text>> + Default;
    /// Which claim holds the row.
    type ClaimToken: Column<Table = Self, SqlType = Nullable<Text>> + Default;
    /// Since when, by the database's clock.
    type ClaimedAt: Column<Table = Self, SqlType = Self::Clock> + Default;
    /// The SQL type of `ClaimedAt`: a nullable timestamp the backend's clock can write (see
    /// [`TimestampOn`](crate::TimestampOn)).
    type Clock: SqlType<IsNull = IsNullable> + SingleValue;
    /// The fence, a claim counter for effects outside the database: a `BIGINT` column, or
    /// [`NoFence`](crate::NoFence). See [`Fence`](crate::Fence).
    type Fence: crate::Fence<Self>;

    /// A claim of the row whose primary key is `key`, while it is [claimable](Self::claimable)
    /// under `lease`. Add the table's own conditions with `.filter(..)` and changes with
    /// `.set(..)`, then run it with `.by(claim, conn)`: see [`ClaimRow`](crate::ClaimRow).
    ///
    /// ```
    /// # include!("doctest_setup.rs");
    /// # use diesel::prelude::*;
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let outcome: Claimed<Job, _, _> = jobs::table
    ///     .claim_row(1, Lease::from_secs(30)?)
    ///     .set(jobs::status.eq("running"))
    ///     .by(Claim::new("worker-1")?, conn)?;
    /// assert!(outcome.is_won());
    /// # Ok(())
    /// # }
    /// ```
    fn claim_row<K>(
        self,
        key: K,
        lease: Lease,
    ) -> crate::ClaimRow<Self, K, Claimable<Self>, crate::NoChanges<Self>, Self::AllColumns> {
        crate::ClaimRow::new(self, key, lease)
    }

    /// A claim of up to `size` rows that are [claimable](Self::claimable) under `lease`: the next
    /// due work. Add `.filter(..)`, `.order_by(..)` and `.set(..)`, then run it with
    /// `.by(owner, conn)`: see [`ClaimBatch`](crate::ClaimBatch).
    ///
    /// ```
    /// # include!("doctest_setup.rs");
    /// # use diesel::prelude::*;
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let batch: Batch<Job> = jobs::table
    ///     .claim_batch(100, Lease::from_secs(30)?)
    ///     .filter(jobs::status.eq("queued"))
    ///     .order_by(jobs::id)
    ///     .set(jobs::status.eq("running"))
    ///     .by("worker-1", conn)?;
    /// assert_eq!(batch.len(), 1);
    /// # Ok(())
    /// # }
    /// ```
    fn claim_batch(
        self,
        size: usize,
        lease: Lease,
    ) -> crate::ClaimBatch<
        Self,
        Claimable<Self>,
        crate::batch_update::NoOrder,
        crate::NoChanges<Self>,
        Self::AllColumns,
    > {
        crate::ClaimBatch::new(self, size, lease)
    }

    /// A reap of up to `size` rows whose lease ran out ([outlived](Self::outlived) under
    /// `lease`): each is released and gets the caller's `.set(..)`, in one statement per batch
    /// that concurrent reapers never both reap; see [`Reap`](crate::Reap).
    ///
    /// ```
    /// # include!("doctest_setup.rs");
    /// # use diesel::prelude::*;
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let requeued: Vec<i64> = jobs::table.reap(100, Lease::from_secs(30)?).set(jobs::status.eq("queued")).run(conn)?;
    /// assert!(requeued.is_empty());
    /// # Ok(())
    /// # }
    /// ```
    fn reap(
        self,
        size: usize,
        lease: Lease,
    ) -> crate::Reap<Self, Outlived<Self>, crate::batch_update::NoOrder, crate::NoChanges<Self>>
    {
        crate::Reap::new(self, size, lease)
    }

    /// Every held row, with its holder and how long its lease has left under `lease`, by the
    /// database's clock; see [`Holders`](crate::Holders).
    ///
    /// ```
    /// # include!("doctest_setup.rs");
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// assert!(jobs::table.holders(Lease::from_secs(30)?).load::<_, i64>(conn)?.is_empty());
    /// # Ok(())
    /// # }
    /// ```
    fn holders(self, lease: Lease) -> crate::Holders<Self, crate::AllHeld> {
        crate::Holders::new(self, lease)
    }

    /// The held rows whose lease ran out under `lease`: their holders are gone or late.
    ///
    /// ```
    /// # include!("doctest_setup.rs");
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// assert!(jobs::table.stale(Lease::from_secs(30)?).load::<_, i64>(conn)?.is_empty());
    /// # Ok(())
    /// # }
    /// ```
    fn stale(self, lease: Lease) -> crate::Holders<Self, crate::StaleOnly> {
        crate::Holders::new(self, lease)
    }

    /// How many rows each owner holds.
    ///
    /// ```
    /// # include!("doctest_setup.rs");
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// assert!(jobs::table.held_per_owner().load(conn)?.is_empty());
    /// # Ok(())
    /// # }
    /// ```
    fn held_per_owner(self) -> crate::HeldPerOwner<Self> {
        crate::HeldPerOwner::new(self)
    }

    /// A release of the rows named by `keys` that `claim` still holds, in one guarded statement
    /// that says which rows it changed; add the caller's final changes with `.set(..)`: see
    /// [`ReleaseRows`](crate::ReleaseRows).
    ///
    /// ```
    /// # include!("doctest_setup.rs");
    /// # use diesel::prelude::*;
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let batch: Batch<i64> = jobs::table.claim_batch(10, Lease::from_secs(30)?).returning(jobs::id).by("w", conn)?;
    /// let done = jobs::table.release_rows(batch.claim(), batch.rows().to_vec()).set(jobs::status.eq("done")).run(conn)?;
    /// assert_eq!(done, [1]);
    /// # Ok(())
    /// # }
    /// ```
    fn release_rows<K>(
        self,
        claim: &Claim,
        keys: Vec<K>,
    ) -> crate::ReleaseRows<Self, K, crate::NoChanges<Self>> {
        crate::ReleaseRows::new(self, claim, keys)
    }

    /// The row is taken by `claim`: owner and token from the claim, claimed at the database's
    /// now, and its [`Fence`](crate::Fence), if it has one, one higher.
    ///
    /// ```
    /// # include!("doctest_setup.rs");
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
            <Self::Fence as crate::Fence<Self>>::bump(),
        )
    }

    /// Like [`taken`](Self::taken), but dated back by `age`: the claim counts as taken `age` ago.
    ///
    /// A lock that should block others for only part of the lease is taken this way, so that the
    /// one lease stays the only measure of staleness.
    ///
    /// ```
    /// # include!("doctest_setup.rs");
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
            <Self::Fence as crate::Fence<Self>>::bump(),
        )
    }

    /// The lease starts again: claimed at the database's now, by the same claim.
    ///
    /// Guard it with [`held_by`](Self::held_by): a renewal that changes no row means the lease
    /// was taken over, and the holder should stop.
    ///
    /// ```
    /// # include!("doctest_setup.rs");
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
    /// # include!("doctest_setup.rs");
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
    /// # include!("doctest_setup.rs");
    /// # use diesel::prelude::*;
    /// # use diesel_lease::prelude::*;
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # let conn = &mut jobs_connection()?;
    /// let claim = Claim::new("worker-1")?;
    /// diesel::update(jobs::table.find(1)).set(jobs::table.taken(&claim)).execute(conn)?;
    /// diesel::update(jobs::table.find(1).filter(jobs::table.held_by(claim.token())))
    ///     .set((jobs::table.released(), jobs::status.eq("done")))
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
    /// # include!("doctest_setup.rs");
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

    /// The claim with `token` holds the row: the guard of every renewal, release or write by a holder.
    ///
    /// ```
    /// # include!("doctest_setup.rs");
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
        Self::ClaimToken::default().eq(token)
    }

    /// The row's fence is `fence`: with [`held_by`](Self::held_by), the guard of a holder that
    /// wants the row unchanged since its own take, not only still its own.
    ///
    /// ```
    /// # mod setup { include!("doctest_setup.rs"); }
    /// use diesel::prelude::*;
    /// use diesel_lease::prelude::*;
    ///
    /// diesel::table! {
    ///     use diesel::sql_types::*;
    ///     use diesel_lease::sql_types::UtcTimestamp;
    ///
    ///     tasks (id) {
    ///         id -> BigInt,
    ///         owner -> Nullable<Text>,
    ///         claim_token -> Nullable<Text>,
    ///         claimed_at -> Nullable<UtcTimestamp>,
    ///         fence -> BigInt,
    ///     }
    /// }
    /// diesel_lease::claim_lease!(tasks { owner: owner, claim_token: claim_token, claimed_at: claimed_at, fence: fence });
    ///
    /// # fn main() -> Result<(), diesel_lease::Error> {
    /// # #[cfg(feature = "sqlite")]
    /// let conn = &mut SqliteConnection::establish(":memory:")?;
    /// # #[cfg(not(feature = "sqlite"))] let conn = &mut setup::empty_connection()?;
    /// # #[cfg(feature = "sqlite")]
    /// diesel::sql_query("CREATE TABLE tasks (id BIGINT PRIMARY KEY, owner TEXT, claim_token TEXT, claimed_at TEXT, fence BIGINT NOT NULL DEFAULT 0)").execute(conn)?;
    /// # #[cfg(not(feature = "sqlite"))] diesel::sql_query(format!("CREATE TABLE tasks (id BIGINT PRIMARY KEY, owner VARCHAR(255), claim_token VARCHAR(255), claimed_at {}, fence BIGINT NOT NULL DEFAULT 0)", setup::TIMESTAMP)).execute(conn)?;
    /// diesel::sql_query("INSERT INTO tasks (id) VALUES (1)").execute(conn)?;
    /// let outcome: Claimed<i64, _, _> = tasks::table.claim_row(1, Lease::from_secs(30)?).returning(tasks::id).by(Claim::new("w")?, conn)?;
    /// let won = outcome.won().expect("claimable");
    /// let fence = won.fence().expect("the table has a fence");
    /// let guarded = tasks::table.find(1).filter(tasks::table.held_by(won.claim().token()).and(tasks::table.fence_is(fence)));
    /// assert_eq!(diesel::update(guarded).set(tasks::table.renewed()).execute(conn)?, 1);
    /// # Ok(())
    /// # }
    /// ```
    fn fence_is(self, fence: i64) -> dsl::Eq<Self::Fence, i64>
    where
        Self::Fence: Column<SqlType = diesel::sql_types::BigInt> + Default + ExpressionMethods,
    {
        Self::Fence::default().eq(fence)
    }

    /// The row was claimed (or last renewed) longer than `lease` ago, by the database's clock.
    ///
    /// Says nothing of an unclaimed row: `NULL` is not outlived. Whether an unclaimed row is
    /// available is the table's own answer; [`claimable`](Self::claimable) is the common one.
    ///
    /// ```
    /// # include!("doctest_setup.rs");
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
    /// # include!("doctest_setup.rs");
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
    /// # include!("doctest_setup.rs");
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

pub(crate) type OwnerOf<T> = <T as ClaimLease>::Owner;
pub(crate) type TokenOf<T> = <T as ClaimLease>::ClaimToken;
pub(crate) type ClaimedAtOf<T> = <T as ClaimLease>::ClaimedAt;
pub(crate) type ClockOf<T> = <T as ClaimLease>::Clock;

/// The changeset of [`ClaimLease::taken`].
///
/// ```
/// # include!("doctest_setup.rs");
/// use diesel_lease::{prelude::*, Taken};
///
/// fn changes(claim: &Claim) -> Taken<'_, jobs::table> {
///     jobs::table.taken(claim)
/// }
/// # fn main() {}
/// ```
pub type Taken<'a, T> = (
    dsl::Eq<OwnerOf<T>, &'a str>,
    dsl::Eq<TokenOf<T>, &'a str>,
    dsl::Eq<ClaimedAtOf<T>, Now<ClockOf<T>>>,
    crate::strategy::FenceBump<T>,
);
/// The changeset of [`ClaimLease::taken_ago`].
///
/// ```
/// # include!("doctest_setup.rs");
/// use diesel_lease::{prelude::*, TakenAgo};
///
/// fn changes(claim: &Claim, age: Age) -> TakenAgo<'_, jobs::table> {
///     jobs::table.taken_ago(claim, age)
/// }
/// # fn main() {}
/// ```
pub type TakenAgo<'a, T> = (
    dsl::Eq<OwnerOf<T>, &'a str>,
    dsl::Eq<TokenOf<T>, &'a str>,
    dsl::Eq<ClaimedAtOf<T>, Ago<ClockOf<T>>>,
    crate::strategy::FenceBump<T>,
);
/// The changeset of [`ClaimLease::renewed`].
///
/// ```
/// # include!("doctest_setup.rs");
/// use diesel_lease::{prelude::*, Renewed};
///
/// fn changes() -> Renewed<jobs::table> {
///     jobs::table.renewed()
/// }
/// # fn main() {}
/// ```
pub type Renewed<T> = dsl::Eq<ClaimedAtOf<T>, Now<ClockOf<T>>>;
/// The changeset of [`ClaimLease::renewed_ago`].
///
/// ```
/// # include!("doctest_setup.rs");
/// use diesel_lease::{prelude::*, RenewedAgo};
///
/// fn changes(age: Age) -> RenewedAgo<jobs::table> {
///     jobs::table.renewed_ago(age)
/// }
/// # fn main() {}
/// ```
pub type RenewedAgo<T> = dsl::Eq<ClaimedAtOf<T>, Ago<ClockOf<T>>>;
/// The changeset of [`ClaimLease::released`].
///
/// ```
/// # include!("doctest_setup.rs");
/// use diesel_lease::{prelude::*, Released};
///
/// fn changes() -> Released<jobs::table> {
///     jobs::table.released()
/// }
/// # fn main() {}
/// ```
pub type Released<T> = (
    dsl::Eq<OwnerOf<T>, Null<Nullable<Text>>>,
    dsl::Eq<TokenOf<T>, Null<Nullable<Text>>>,
    dsl::Eq<ClaimedAtOf<T>, Null<ClockOf<T>>>,
);
/// The predicate of [`ClaimLease::unclaimed`].
///
/// ```
/// # include!("doctest_setup.rs");
/// use diesel_lease::{prelude::*, Unclaimed};
///
/// fn free() -> Unclaimed<jobs::table> {
///     jobs::table.unclaimed()
/// }
/// # fn main() {}
/// ```
pub type Unclaimed<T> = dsl::IsNull<TokenOf<T>>;
/// The predicate of [`ClaimLease::held_by`].
///
/// ```
/// # include!("doctest_setup.rs");
/// use diesel_lease::{prelude::*, HeldBy};
///
/// fn mine(token: &str) -> HeldBy<'_, jobs::table> {
///     jobs::table.held_by(token)
/// }
/// # fn main() {}
/// ```
pub type HeldBy<'a, T> = dsl::Eq<TokenOf<T>, &'a str>;
/// The predicate of [`ClaimLease::outlived`].
///
/// ```
/// # include!("doctest_setup.rs");
/// use diesel_lease::{prelude::*, Outlived};
///
/// fn stale(lease: Lease) -> Outlived<jobs::table> {
///     jobs::table.outlived(lease)
/// }
/// # fn main() {}
/// ```
pub type Outlived<T> = dsl::Lt<ClaimedAtOf<T>, Ago<ClockOf<T>>>;
/// The predicate of [`ClaimLease::fresh`].
///
/// ```
/// # include!("doctest_setup.rs");
/// use diesel_lease::{prelude::*, Fresh};
///
/// fn live(lease: Lease) -> Fresh<jobs::table> {
///     jobs::table.fresh(lease)
/// }
/// # fn main() {}
/// ```
pub type Fresh<T> = dsl::GtEq<ClaimedAtOf<T>, Ago<ClockOf<T>>>;
/// The predicate of [`ClaimLease::claimable`].
///
/// ```
/// # include!("doctest_setup.rs");
/// use diesel_lease::{prelude::*, Claimable};
///
/// fn available(lease: Lease) -> Claimable<jobs::table> {
///     jobs::table.claimable(lease)
/// }
/// # fn main() {}
/// ```
pub type Claimable<T> = dsl::Or<Unclaimed<T>, Outlived<T>, Nullable<Bool>>;

/// Implements [`ClaimLease`] for a `table!`.
///
/// With the default column names `owner`, `claim_token` and `claimed_at`, name the table alone;
/// otherwise map the roles whose column has another name, in any order (the others keep their
/// default name), and add `fence: column` for a table with a [`Fence`](crate::Fence) (a
/// `BIGINT NOT NULL DEFAULT 0` claim counter). An unknown role, or one given twice, is a compile
/// error.
///
/// ```
/// # mod setup { include!("doctest_setup.rs"); }
/// diesel::table! {
///     use diesel::sql_types::*;
///     use diesel_lease::sql_types::UtcTimestamp;
///
///     jobs (id) {
///         id -> BigInt,
///         owner -> Nullable<Text>,
///         claim_token -> Nullable<Text>,
///         claimed_at -> Nullable<UtcTimestamp>,
///     }
/// }
///
/// diesel::table! {
///     use diesel::sql_types::*;
///     use diesel_lease::sql_types::UtcTimestamp;
///
///     conversations (id) {
///         id -> Text,
///         busy_owner -> Nullable<Text>,
///         busy_turn_ref -> Nullable<Text>,
///         busy_since -> Nullable<UtcTimestamp>,
///     }
/// }
///
/// diesel_lease::claim_lease!(jobs);
/// diesel_lease::claim_lease!(conversations {
///     owner: busy_owner,
///     claim_token: busy_turn_ref,
///     claimed_at: busy_since,
/// });
///
/// diesel::table! {
///     use diesel::sql_types::*;
///     use diesel_lease::sql_types::UtcTimestamp;
///
///     tasks (id) {
///         id -> BigInt,
///         owner -> Nullable<Text>,
///         claim_token -> Nullable<Text>,
///         taken_at -> Nullable<UtcTimestamp>,
///         attempt -> BigInt,
///     }
/// }
///
/// // Only the roles whose column has another name, in any order.
/// diesel_lease::claim_lease!(tasks { fence: attempt, claimed_at: taken_at });
///
/// # fn main() -> Result<(), diesel_lease::Error> {
/// use diesel::prelude::*;
/// use diesel_lease::prelude::*;
///
/// # #[cfg(feature = "sqlite")]
/// let conn = &mut SqliteConnection::establish(":memory:")?;
/// # #[cfg(not(feature = "sqlite"))] let conn = &mut setup::empty_connection()?;
/// # #[cfg(feature = "sqlite")]
/// diesel::sql_query("CREATE TABLE tasks (id BIGINT PRIMARY KEY, owner TEXT, claim_token TEXT, taken_at TEXT, attempt BIGINT NOT NULL DEFAULT 0)").execute(conn)?;
/// # #[cfg(not(feature = "sqlite"))] diesel::sql_query(format!("CREATE TABLE tasks (id BIGINT PRIMARY KEY, owner VARCHAR(255), claim_token VARCHAR(255), taken_at {}, attempt BIGINT NOT NULL DEFAULT 0)", setup::TIMESTAMP)).execute(conn)?;
/// diesel::sql_query("INSERT INTO tasks (id) VALUES (1)").execute(conn)?;
/// let outcome: Claimed<i64, _, _> = tasks::table.claim_row(1, Lease::from_secs(30)?).returning(tasks::id).by(Claim::new("w")?, conn)?;
/// assert_eq!(outcome.won().and_then(|won| won.fence()), Some(1), "attempt is the fence");
/// # Ok(())
/// # }
/// ```
#[macro_export]
macro_rules! claim_lease {
    ($($table:ident)::+) => {
        $crate::claim_lease!($($table)::+ {});
    };
    ($($table:ident)::+ { $($role:ident : $column:ident),* $(,)? }) => {
        // A role given twice would silently keep the last column: as two variants of one name
        // it is a compile error that names the role.
        const _: () = {
            #[allow(dead_code, non_camel_case_types)]
            enum Roles { $($role),* }
        };
        $crate::claim_lease!(
            @roles [$($table)::+]
            { owner: owner, claim_token: claim_token, claimed_at: claimed_at, fence: () }
            $($role : $column,)*
        );
    };
    (@roles $table:tt { owner: $_o:ident, claim_token: $t:ident, claimed_at: $c:ident, fence: $f:tt }
        owner : $column:ident, $($rest:tt)*) => {
        $crate::claim_lease!(@roles $table
            { owner: $column, claim_token: $t, claimed_at: $c, fence: $f } $($rest)*);
    };
    (@roles $table:tt { owner: $o:ident, claim_token: $_t:ident, claimed_at: $c:ident, fence: $f:tt }
        claim_token : $column:ident, $($rest:tt)*) => {
        $crate::claim_lease!(@roles $table
            { owner: $o, claim_token: $column, claimed_at: $c, fence: $f } $($rest)*);
    };
    (@roles $table:tt { owner: $o:ident, claim_token: $t:ident, claimed_at: $_c:ident, fence: $f:tt }
        claimed_at : $column:ident, $($rest:tt)*) => {
        $crate::claim_lease!(@roles $table
            { owner: $o, claim_token: $t, claimed_at: $column, fence: $f } $($rest)*);
    };
    (@roles $table:tt { owner: $o:ident, claim_token: $t:ident, claimed_at: $c:ident, fence: $_f:tt }
        fence : $column:ident, $($rest:tt)*) => {
        $crate::claim_lease!(@roles $table
            { owner: $o, claim_token: $t, claimed_at: $c, fence: ($column) } $($rest)*);
    };
    (@roles $table:tt $roles:tt $role:ident : $column:ident, $($rest:tt)*) => {
        ::core::compile_error!(::core::concat!(
            "claim_lease!: unknown role `", ::core::stringify!($role),
            "`; the roles are owner, claim_token, claimed_at and fence"
        ));
    };
    (@roles [$($table:ident)::+]
        { owner: $o:ident, claim_token: $t:ident, claimed_at: $c:ident, fence: () }) => {
        $crate::claim_lease!(@impl [$($table)::+] $o, $t, $c, $crate::NoFence);
    };
    (@roles [$($table:ident)::+]
        { owner: $o:ident, claim_token: $t:ident, claimed_at: $c:ident, fence: ($f:ident) }) => {
        $crate::claim_lease!(@impl [$($table)::+] $o, $t, $c, $($table)::+::$f);
    };
    (@impl [$($table:ident)::+] $owner:ident, $claim_token:ident, $claimed_at:ident, $fence:ty) => {
        impl $crate::ClaimLease for $($table)::+::table {
            type Owner = $($table)::+::$owner;
            type ClaimToken = $($table)::+::$claim_token;
            type ClaimedAt = $($table)::+::$claimed_at;
            type Clock = $crate::__diesel::dsl::SqlTypeOf<$($table)::+::$claimed_at>;
            type Fence = $fence;
        }
    };
}
