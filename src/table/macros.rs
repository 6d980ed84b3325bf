//! `claim_lease!`: a table's lease columns, named by role.

/// Implements [`ClaimLease`](crate::ClaimLease) for a `table!`.
///
/// With the default column names `owner`, `claim_token` and `claimed_at`, name the table alone;
/// otherwise map the roles whose column has another name, in any order (the others keep their
/// default name), and add `fence: column` for a table with a fence ([chapter 4](crate::guide::ch04_fences)) (a
/// `BIGINT NOT NULL DEFAULT 0` claim counter). An unknown role, or one given twice, is a compile
/// error. The table's key may be any primary key whose SQL type is a
/// [`KeyType`](crate::KeyType), composite keys included.
///
/// ```
/// # mod setup { include!("../doctest_setup.rs"); }
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
/// let worker = Claim::new("w")?;
/// let outcome = tasks::table.claim_row(1, Lease::from_secs(30)?).by(&worker).returning(tasks::id).run::<i64>(conn)?;
/// assert_eq!(outcome.won().map(|won| won.fence()), Some(1), "attempt is the fence");
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
        impl $crate::Fenced for $($table)::+::table {}
    };
    (@impl [$($table:ident)::+] $owner:ident, $claim_token:ident, $claimed_at:ident, $fence:ty) => {
        impl $crate::ClaimLease for $($table)::+::table {
            type Owner = $($table)::+::$owner;
            type ClaimToken = $($table)::+::$claim_token;
            type ClaimedAt = $($table)::+::$claimed_at;
            type Clock = $crate::__private::diesel::dsl::SqlTypeOf<$($table)::+::$claimed_at>;
            type Fence = $fence;
            type Key = <Self::KeySqlType as $crate::__private::KeyType>::Value;
            type KeySqlType = $crate::__private::diesel::dsl::SqlTypeOf<
                <$($table)::+::table as $crate::__private::diesel::Table>::PrimaryKey,
            >;

            fn __sql_name() -> &'static str {
                // Written once, by a backend's query builder: events name the table for free.
                static NAME: ::std::sync::OnceLock<::std::string::String> =
                    ::std::sync::OnceLock::new();
                NAME.get_or_init($crate::__private::sql_table_name::<Self>)
            }
        }
    };
}
