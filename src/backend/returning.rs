//! The strategy of a backend with `RETURNING` (PostgreSQL, SQLite): every statement says itself
//! which rows it changed, so a claim, a batch and a guarded write are one statement each. A
//! guarded write of one row says it by the count of rows it changed, which needs no `RETURNING`
//! (on SQLite, whose `RETURNING` runs as a trigger into a temporary table, that is a third of a
//! one-row renewal's instructions).

/// Implements the operations of `$backend` by `RETURNING`.
macro_rules! learns_by_returning {
    ($backend:ty) => {
        impl $crate::__private::backend::SupportsReturning for $backend {}

        // Errors name the operation, not the bound inside it that failed.
        #[diagnostic::do_not_recommend]
        impl<'q, C, S, Selection, ReadBack, Row>
            $crate::__private::backend::ClaimsRow<
                'q,
                C,
                $crate::__private::backend::RowClaim<S, Selection, ReadBack>,
                Row,
            > for $backend
        where
            C: diesel::Connection<Backend = $backend>,
            S: $crate::__private::backend::ReturnsSelection<Selection>,
            S::Returning: diesel::query_dsl::LoadQuery<'q, C, Row>,
        {
            fn claim_row(
                plan: $crate::__private::backend::RowClaim<S, Selection, ReadBack>,
                conn: &mut C,
            ) -> diesel::QueryResult<Option<Row>> {
                let statement = plan.statement.returning(plan.selection);
                $crate::__private::backend::read_optional(statement, conn)
            }
        }

        #[diagnostic::do_not_recommend]
        impl<'q, C, T, F, O, Set, Selection, Changed, Row>
            $crate::__private::backend::ClaimsBatch<
                'q,
                C,
                $crate::__private::backend::BatchPlan<T, F, O, Set, Selection, Changed>,
                Row,
            > for $backend
        where
            C: diesel::Connection<Backend = $backend>,
            T: diesel::Table,
            Set: diesel::query_builder::AsChangeset<Target = T>,
            $crate::__private::sql::BatchUpdate<
                T,
                F,
                O,
                Set,
                $crate::__private::sql::Returning<Selection>,
            >: diesel::query_dsl::LoadQuery<'q, C, Row>,
        {
            fn claim_batch(
                plan: $crate::__private::backend::BatchPlan<T, F, O, Set, Selection, Changed>,
                conn: &mut C,
            ) -> diesel::QueryResult<Vec<Row>> {
                let (statement, selection) = plan.into_statement();
                let statement =
                    $crate::__private::backend::ReturnsSelection::returning(statement, selection);
                $crate::__private::backend::read(statement, conn)
            }
        }

        #[diagnostic::do_not_recommend]
        impl<'q, C, S, Returned, Locking, ReadBack, Row>
            $crate::__private::backend::WritesHeld<
                'q,
                C,
                $crate::__private::backend::HeldWrite<S, Returned, Locking, ReadBack, Row>,
                Row,
            > for $backend
        where
            C: diesel::Connection<Backend = $backend>,
            S: $crate::__private::backend::ReturnsSelection<Returned>
                + diesel::query_dsl::methods::ExecuteDsl<C>,
            S::Returning: diesel::query_dsl::LoadQuery<'q, C, Row>,
        {
            fn write_held(
                plan: $crate::__private::backend::HeldWrite<S, Returned, Locking, ReadBack, Row>,
                conn: &mut C,
            ) -> diesel::QueryResult<Vec<Row>> {
                if let Some(row) = plan.only {
                    return $crate::__private::backend::write_one(plan.statement, row, conn);
                }
                let statement = plan.statement.returning(plan.returned);
                $crate::__private::backend::read(statement, conn)
            }
        }
    };
}
pub(crate) use learns_by_returning;
