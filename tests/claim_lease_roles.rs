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

lease_table!(
    defaults,
    one_role,
    reversed,
    two_roles,
    fence_alone,
    trailing_comma
);

mod schema {
    lease_table!(by_path);
}

diesel_lease::claim_lease!(defaults);
diesel_lease::claim_lease!(one_role {
    claimed_at: leased_at
});
diesel_lease::claim_lease!(reversed {
    fence: attempt,
    claimed_at: leased_at,
    claim_token: lease_token,
    owner: worker
});
diesel_lease::claim_lease!(two_roles {
    claim_token: lease_token,
    owner: worker
});
diesel_lease::claim_lease!(fence_alone { fence: attempt });
#[rustfmt::skip] // keeps the trailing comma under test
diesel_lease::claim_lease!(trailing_comma { owner: worker, });
diesel_lease::claim_lease!(schema::by_path {
    claimed_at: leased_at,
    fence: attempt
});

/// `$table`'s roles name the columns given, in the order owner, claim token, claimed at,
/// fence (`NoFence` for none), compared by type.
macro_rules! assert_roles {
    ($table:path: $owner:ident, $token:ident, $at:ident, fence: none) => {
        assert_roles!(@ $table: $owner, $token, $at, NoFence)
    };
    ($table:path: $owner:ident, $token:ident, $at:ident, fence: $fence:ident) => {
        assert_roles!(@ $table: $owner, $token, $at, t::$fence)
    };
    (@ $table:path: $owner:ident, $token:ident, $at:ident, $fence:ty) => {{
        use $table as t;
        let mapped = [
            TypeId::of::<<t::table as ClaimLease>::Owner>(),
            TypeId::of::<<t::table as ClaimLease>::ClaimToken>(),
            TypeId::of::<<t::table as ClaimLease>::ClaimedAt>(),
            TypeId::of::<<t::table as ClaimLease>::Fence>(),
        ];
        let expected = [
            TypeId::of::<t::$owner>(),
            TypeId::of::<t::$token>(),
            TypeId::of::<t::$at>(),
            TypeId::of::<$fence>(),
        ];
        assert_eq!(mapped, expected, "{}", stringify!($table));
    }};
}

#[test]
fn a_table_alone_has_the_default_names_and_no_fence() {
    assert_roles!(defaults: owner, claim_token, claimed_at, fence: none);
}

#[test]
fn one_role_named_keeps_the_default_names_of_the_others() {
    assert_roles!(one_role: owner, claim_token, leased_at, fence: none);
    assert_roles!(trailing_comma: worker, claim_token, claimed_at, fence: none);
}

#[test]
fn every_role_in_reverse_order_maps_each_to_its_own_column() {
    assert_roles!(reversed: worker, lease_token, leased_at, fence: attempt);
}

#[test]
fn any_subset_in_any_order_maps_the_roles_named() {
    assert_roles!(two_roles: worker, lease_token, claimed_at, fence: none);
    assert_roles!(fence_alone: owner, claim_token, claimed_at, fence: attempt);
}

#[test]
fn a_table_named_by_its_path_is_mapped_too() {
    assert_roles!(schema::by_path: owner, claim_token, leased_at, fence: attempt);
}
