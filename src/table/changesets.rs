//! The types of the changesets and predicates of [`ClaimLease`], for functions that return them.
use diesel::dsl;
use diesel::sql_types::{Bool, Nullable, Text};

use super::{ClaimLease, Fence};
use crate::sql::{Ago, Now, Null, TextIs};

pub(crate) type OwnerOf<T> = <T as ClaimLease>::Owner;
pub(crate) type TokenOf<T> = <T as ClaimLease>::ClaimToken;
pub(crate) type ClaimedAtOf<T> = <T as ClaimLease>::ClaimedAt;
pub(crate) type ClockOf<T> = <T as ClaimLease>::Clock;

/// The changeset of [`ClaimLease::taken`].
///
/// ```
/// # include!("../doctest_setup.rs");
/// use diesel_lease::{dsl::Taken, prelude::*};
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
    FenceBump<T>,
);
/// The changeset of [`ClaimLease::taken_ago`].
///
/// ```
/// # include!("../doctest_setup.rs");
/// use diesel_lease::{__private::TakenAgo, prelude::*};
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
    FenceBump<T>,
);
/// The changeset of [`ClaimLease::renewed`].
///
/// ```
/// # include!("../doctest_setup.rs");
/// use diesel_lease::{dsl::Renewed, prelude::*};
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
/// # include!("../doctest_setup.rs");
/// use diesel_lease::{__private::RenewedAgo, prelude::*};
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
/// # include!("../doctest_setup.rs");
/// use diesel_lease::{dsl::Released, prelude::*};
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
/// # include!("../doctest_setup.rs");
/// use diesel_lease::{prelude::*, __private::Unclaimed};
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
/// # include!("../doctest_setup.rs");
/// use diesel_lease::{dsl::HeldBy, prelude::*};
///
/// fn mine(token: &str) -> HeldBy<'_, jobs::table> {
///     jobs::table.held_by(token)
/// }
/// # fn main() {}
/// ```
pub type HeldBy<'a, T> = TextIs<TokenOf<T>, &'a str>;
/// The predicate of [`ClaimLease::outlived`].
///
/// ```
/// # include!("../doctest_setup.rs");
/// use diesel_lease::{dsl::Outlived, prelude::*};
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
/// # include!("../doctest_setup.rs");
/// use diesel_lease::{prelude::*, __private::Fresh};
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
/// # include!("../doctest_setup.rs");
/// use diesel_lease::{dsl::Claimable, prelude::*};
///
/// fn available(lease: Lease) -> Claimable<jobs::table> {
///     jobs::table.claimable(lease)
/// }
/// # fn main() {}
/// ```
pub type Claimable<T> = dsl::Or<Unclaimed<T>, Outlived<T>, Nullable<Bool>>;

/// What a take does to a table's fence: `fence = fence + 1`, or nothing.
pub type FenceBump<T> = <<T as ClaimLease>::Fence as Fence<T>>::Bump;

/// How a claim reads a table's fence back: the column, or `NULL`.
pub type FenceRead<T> = <<T as ClaimLease>::Fence as Fence<T>>::Read;

/// The changeset that takes a row for a claim, owning its values: what the library's claims
/// write, each its own claim and no other.
pub type TakenBy<T> = (
    dsl::Eq<OwnerOf<T>, String>,
    dsl::Eq<TokenOf<T>, String>,
    dsl::Eq<ClaimedAtOf<T>, Now<ClockOf<T>>>,
    FenceBump<T>,
);

/// The predicate that a claim's token holds the row, owning the token: the guard of the
/// library's own writes for a holder. Exact, as [`HeldBy`].
pub type TokenIs<T> = TextIs<TokenOf<T>, String>;

/// [`TakenBy`] for `claim`.
pub(crate) fn taken_by<T: ClaimLease>(claim: &crate::Claim) -> TakenBy<T> {
    use diesel::ExpressionMethods;
    (
        T::Owner::default().eq(claim.owner().to_owned()),
        T::ClaimToken::default().eq(claim.token().to_owned()),
        T::ClaimedAt::default().eq(Now::default()),
        <T::Fence as Fence<T>>::bump(),
    )
}

/// [`TokenIs`] for `claim`.
pub(crate) fn token_is<T: ClaimLease>(claim: &crate::Claim) -> TokenIs<T> {
    TextIs::new(T::ClaimToken::default(), claim.token().to_owned())
}
