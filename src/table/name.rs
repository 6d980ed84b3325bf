//! A table's name for people: its SQL name, as its `table!` gives it, not its Rust type.
use diesel::Table;

/// The backend whose query builder writes a table's name for [`sql_table_name`]: any will do,
/// since every one writes the same quoted identifiers, which
/// [`TableName`](crate::backend::TableName) reads back unquoted.
#[cfg(feature = "postgres")]
type Naming = diesel::pg::Pg;
#[cfg(all(feature = "mysql", not(feature = "postgres")))]
type Naming = diesel::mysql::Mysql;
#[cfg(all(feature = "sqlite", not(feature = "postgres"), not(feature = "mysql")))]
type Naming = diesel::sqlite::Sqlite;

/// Table `T`'s name as its SQL gives it: `jobs`, or `queue.jobs` when its `table!` names a
/// schema; its Rust type if its `FROM` clause is not a table's name. What `claim_lease!` answers
/// for [`ClaimLease::__sql_name`](crate::ClaimLease::__sql_name), once for each table.
#[doc(hidden)]
#[cfg(any(feature = "postgres", feature = "mysql", feature = "sqlite"))]
pub fn sql_table_name<T>() -> String
where
    T: Table + Default,
    T::FromClause: diesel::query_builder::QueryFragment<Naming>,
{
    match crate::backend::TableName::of::<Naming>(&T::default().from_clause()) {
        Ok(Some(name)) => name.plain(),
        _ => std::any::type_name::<T>().to_owned(),
    }
}

/// Table `T`'s Rust type: with no backend compiled in, no query builder writes its name (and no
/// statement runs to tell of it).
#[doc(hidden)]
#[cfg(not(any(feature = "postgres", feature = "mysql", feature = "sqlite")))]
pub fn sql_table_name<T: Table>() -> String {
    std::any::type_name::<T>().to_owned()
}

#[cfg(all(test, any(feature = "postgres", feature = "mysql", feature = "sqlite")))]
mod tests {
    use super::sql_table_name;
    use crate::ClaimLease;

    diesel::table! {
        use diesel::sql_types::*;
        use crate::sql_types::UtcTimestamp;

        queue.work (id) {
            id -> BigInt,
            owner -> Nullable<Text>,
            claim_token -> Nullable<Text>,
            claimed_at -> Nullable<UtcTimestamp>,
        }
    }

    diesel::table! {
        use diesel::sql_types::*;
        use crate::sql_types::UtcTimestamp;

        #[sql_name = "jobs"]
        renamed (id) {
            id -> BigInt,
            owner -> Nullable<Text>,
            claim_token -> Nullable<Text>,
            claimed_at -> Nullable<UtcTimestamp>,
        }
    }

    crate::claim_lease!(work);
    crate::claim_lease!(renamed);

    #[test]
    fn a_table_is_named_as_its_sql_names_it_with_its_schema() {
        assert_eq!(sql_table_name::<work::table>(), "queue.work");
        assert_eq!(sql_table_name::<renamed::table>(), "jobs");
        assert_eq!(work::table::__sql_name(), "queue.work");
        assert_eq!(renamed::table::__sql_name(), "jobs");
    }
}
