//! The hand-written batch of a backend with `RETURNING` (PostgreSQL, SQLite), stamped into its
//! module of statements.
/// The hand-written batch of a backend with `RETURNING`: the claim is one statement
/// (`HandClaim`, with the binds `claim_binds` gives), the release another (`HandRelease`).
macro_rules! returning_backend {
    () => {
        hand_statement!(HandClaim, CLAIM);
        keyed_statement!(HandRelease, KEY, RELEASE);
        keyed_statement!(HandReleaseOne, KEY, RELEASE_ONE);

        /// The claim of up to `n` queued jobs for `owner` under `token`: the keys won.
        pub fn hand_claim(
            conn: &mut Conn,
            n: i64,
            owner: &str,
            token: &str,
        ) -> QueryResult<Vec<i64>> {
            let claimed =
                PreparedSql::<HandClaim, 8>::new(claim_binds(n, owner, token)).load::<Id>(conn);
            lost_conflict_claims_nothing(claimed)
        }

        /// The release of `keys` that `token` holds, setting `status`: the keys released. One
        /// key: the `UPDATE` without `RETURNING`, whose matched count says whether the token
        /// still held the row, as the library writes it.
        pub fn hand_release(
            conn: &mut Conn,
            keys: &[i64],
            token: &str,
            status: &str,
        ) -> QueryResult<Vec<i64>> {
            if let [key] = keys {
                let matched = KeyedSql::<HandReleaseOne, 1, 2>::new(
                    [Bind::Text(status)],
                    keys,
                    [Bind::Text(token), Bind::Text(token)],
                )
                .execute(conn)?;
                return Ok(if matched > 0 { vec![*key] } else { Vec::new() });
            }
            KeyedSql::<HandRelease, 1, 2>::new(
                [Bind::Text(status)],
                keys,
                [Bind::Text(token), Bind::Text(token)],
            )
            .load::<Id>(conn)
            .map(ids)
        }

        /// The claim of one row composed from the library's changesets, its row read back by
        /// `RETURNING`: with `get_result`, or (`COLLECT`) with `load`, every row the statement
        /// returns collected, as the library's claims do.
        pub fn bare_claim_row<const COLLECT: bool>(
            conn: &mut Conn,
            id: i64,
            lease: Lease,
            claim: &Claim,
        ) -> QueryResult<Option<JobRow>> {
            let t = bench_jobs::table;
            // The library reads the fence beside the row: NULL on a table without one.
            let statement = diesel_lease::update(t.find(id).filter(t.claimable(lease)))
                .set((bench_jobs::status.eq("running"), t.taken(claim)))
                .returning((bench_jobs::all_columns, no_fence()));
            let won: Option<(JobRow, Option<i64>)> = if COLLECT {
                statement.load(conn)?.pop()
            } else {
                statement.get_result(conn).optional()?
            };
            Ok(won.map(|(row, _)| row))
        }
    };
}
pub(super) use returning_backend;
