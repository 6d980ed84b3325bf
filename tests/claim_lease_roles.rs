//! `claim_lease!` maps the roles given, in any order and any subset, and fills in the default
//! names of the others; a fence only when one is named. What it refuses is in tests/compile_fail.
use std::any::TypeId;

use diesel_lease::{ClaimLease, NoFence};

/// A table with a column for every role under its default name and under another.
macro_rules! lease_table {
    ($($name:ident),+) => {$(
        diesel::table! {
            use diesel::sql_types::*;
            use diesel_lease::sql_types::UtcTimestamp;

            $name (id) {
                id -> BigInt,
                owner -> Nullable<Text>,
                claim_token -> Nullable<Text>,
                claimed_at -> Nullable<UtcTimestamp>,
                worker -> Nullable<Text>,
                lease_token -> Nullable<Text>,
                leased_at -> Nullable<UtcTimestamp>,
                attempt -> BigInt,
            }
        }
    )+};
}

lease_table!(defaults, one_role, reversed, two_roles, fence_alone, trailing_comma);

mod schema {
    lease_table!(by_path);
}

diesel_lease::claim_lease!(defaults);
diesel_lease::claim_lease!(one_role { claimed_at: leased_at });
diesel_lease::claim_lease!(reversed {
    fence: attempt,
    claimed_at: leased_at,
    claim_token: lease_token,
    owner: worker
});
diesel_lease::claim_lease!(two_roles { claim_token: lease_token, owner: worker });
diesel_lease::claim_lease!(fence_alone { fence: attempt });
diesel_lease::claim_lease!(trailing_comma { owner: worker, });
diesel_lease::claim_lease!(schema::by_path { claimed_at: leased_at, fence: attempt });

/// `T`'s columns by role, as type ids, in the order owner, claim token, claimed at, fence.
fn roles<T: ClaimLease>() -> [TypeId; 4]
where
    T::Owner: 'static,
    T::ClaimToken: 'static,
    T::ClaimedAt: 'static,
    T::Fence: 'static,
{
    [
        TypeId::of::<T::Owner>(),
        TypeId::of::<T::ClaimToken>(),
        TypeId::of::<T::ClaimedAt>(),
        TypeId::of::<T::Fence>(),
    ]
}

/// The type ids of four columns (or `NoFence`), in the order of [`roles`].
macro_rules! expected {
    ($table:path: $owner:ident, $token:ident, $at:ident, fence: none) => {{
        use $table as t;
        [TypeId::of::<t::$owner>(), TypeId::of::<t::$token>(), TypeId::of::<t::$at>(), TypeId::of::<NoFence>()]
    }};
    ($table:path: $owner:ident, $token:ident, $at:ident, fence: $fence:ident) => {{
        use $table as t;
        [TypeId::of::<t::$owner>(), TypeId::of::<t::$token>(), TypeId::of::<t::$at>(), TypeId::of::<t::$fence>()]
    }};
}

#[test]
fn a_table_alone_has_the_default_names_and_no_fence() {
    assert_eq!(
        roles::<defaults::table>(),
        expected!(defaults: owner, claim_token, claimed_at, fence: none)
    );
}

#[test]
fn one_role_named_keeps_the_default_names_of_the_others() {
    assert_eq!(
        roles::<one_role::table>(),
        expected!(one_role: owner, claim_token, leased_at, fence: none)
    );
    assert_eq!(
        roles::<trailing_comma::table>(),
        expected!(trailing_comma: worker, claim_token, claimed_at, fence: none)
    );
}

#[test]
fn every_role_in_reverse_order_maps_each_to_its_own_column() {
    assert_eq!(
        roles::<reversed::table>(),
        expected!(reversed: worker, lease_token, leased_at, fence: attempt)
    );
}

#[test]
fn any_subset_in_any_order_maps_the_roles_named() {
    assert_eq!(
        roles::<two_roles::table>(),
        expected!(two_roles: worker, lease_token, claimed_at, fence: none)
    );
    assert_eq!(
        roles::<fence_alone::table>(),
        expected!(fence_alone: owner, claim_token, claimed_at, fence: attempt)
    );
}

#[test]
fn a_table_named_by_its_path_is_mapped_too() {
    assert_eq!(
        roles::<schema::by_path::table>(),
        expected!(schema::by_path: owner, claim_token, leased_at, fence: attempt)
    );
}
