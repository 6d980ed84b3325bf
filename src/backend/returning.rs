//! The strategy of a backend with `RETURNING` (PostgreSQL, SQLite): every statement says itself
//! which rows it changed, so a claim, a batch and a guarded write are one statement each. A
//! guarded write of one row says it by the count of rows it changed, which needs no `RETURNING`
//! (on SQLite, whose `RETURNING` runs as a trigger into a temporary table, that is a third of a
//! one-row renewal's instructions).

// Every backend with `RETURNING` (`SupportsReturning`) runs the operations the same way.
// Errors name the operation, not the bound inside it that failed.
#[diagnostic::do_not_recommend]
impl<'q, B, C, S, Selection, ReadBack, Row>
    crate::backend::ClaimsRow<'q, C, crate::backend::RowClaim<S, Selection, ReadBack>, Row> for B
where
    B: crate::backend::SupportsReturning + crate::backend::LeaseBackend,
    C: diesel::Connection<Backend = B>,
    S: crate::backend::ReturnsSelection<Selection>,
    S::Returning: diesel::query_dsl::LoadQuery<'q, C, Row>,
{
    fn claim_row(
        plan: crate::backend::RowClaim<S, Selection, ReadBack>,
        conn: &mut C,
    ) -> diesel::QueryResult<Option<Row>> {
        let statement = plan.statement.returning(plan.selection);
        crate::backend::read_optional(statement, conn)
    }
}

#[diagnostic::do_not_recommend]
impl<'q, B, C, T, F, O, Set, Selection, Changed, Row>
    crate::backend::ClaimsBatch<
        'q,
        C,
        crate::backend::BatchPlan<T, F, O, Set, Selection, Changed>,
        Row,
    > for B
where
    B: crate::backend::SupportsReturning + crate::backend::LeaseBackend,
    C: diesel::Connection<Backend = B>,
    T: diesel::Table,
    Set: diesel::query_builder::AsChangeset<Target = T>,
    crate::sql::batch::BatchUpdate<T, F, O, Set, crate::sql::ReturningClause<Selection>>:
        diesel::query_dsl::LoadQuery<'q, C, Row>,
{
    fn claim_batch(
        plan: crate::backend::BatchPlan<T, F, O, Set, Selection, Changed>,
        conn: &mut C,
    ) -> diesel::QueryResult<Vec<Row>> {
        let (statement, selection) = plan.into_statement();
        let statement = crate::backend::ReturnsSelection::returning(statement, selection);
        crate::backend::read(statement, conn)
    }
}

#[diagnostic::do_not_recommend]
impl<'q, B, C, S, Returned, Locking, ReadBack, Row>
    crate::backend::WritesHeld<
        'q,
        C,
        crate::backend::HeldWrite<S, Returned, Locking, ReadBack, Row>,
        Row,
    > for B
where
    B: crate::backend::SupportsReturning + crate::backend::LeaseBackend,
    C: diesel::Connection<Backend = B>,
    S: crate::backend::ReturnsSelection<Returned> + diesel::query_dsl::methods::ExecuteDsl<C>,
    S::Returning: diesel::query_dsl::LoadQuery<'q, C, Row>,
{
    fn write_held(
        plan: crate::backend::HeldWrite<S, Returned, Locking, ReadBack, Row>,
        conn: &mut C,
    ) -> diesel::QueryResult<Vec<Row>> {
        if let Some(row) = plan.only {
            return crate::backend::write_one(plan.statement, row, conn);
        }
        let statement = plan.statement.returning(plan.returned);
        crate::backend::read(statement, conn)
    }
}
