//! Behind a pooler in transaction mode (PgBouncer): Diesel's statement cache off.

/// The setting a pool of PostgreSQL connections needs behind a pooler in transaction mode
/// (PgBouncer's `pool_mode = transaction`), for an r2d2 pool's `connection_customizer`: Diesel's
/// prepared-statement cache turned off.
///
/// Such a pooler hands each transaction (each statement, outside one) to whichever server
/// connection is free. Diesel's cache prepares a statement once under a name
/// (`__diesel_stmt_N`) and runs it by that name later, which the pooler may send to a server
/// connection where the name is missing, taken, or (worst) prepared by another client for other
/// SQL. With the cache off, Diesel sends each statement's SQL and its binds in one round trip,
/// which a pooler passes through whole. r2d2's checkout test is one such statement too, which is
/// why the setting belongs on the pool rather than on the connections a caller happens to use.
///
/// Nothing else is needed: the library holds no session state between statements (no advisory
/// lock, no `LISTEN`, no `SET` beyond the session settings PgBouncer itself carries from one
/// server connection to the next, no temporary table), and every transaction it opens is ended
/// by the call that opened it. PgBouncer 1.21 or later with `max_prepared_statements` set keeps
/// the cache usable instead; see [docs/operations.md](https://github.com/diesel-lease/diesel-lease/blob/main/docs/operations.md#behind-a-connection-pooler-pgbouncer)
/// for both, and for what the setting costs a claim.
///
/// ```
/// use diesel::r2d2::{ConnectionManager, Pool};
/// use diesel::PgConnection;
/// use diesel_lease::pg::PgTransactionPooling;
///
/// // PgBouncer in transaction mode on port 6432; with no idle connections to keep, none is
/// // opened until one is needed.
/// let pool = Pool::builder()
///     .max_size(8)
///     .min_idle(Some(0))
///     .connection_customizer(Box::new(PgTransactionPooling::default()))
///     .build_unchecked(ConnectionManager::<PgConnection>::new(
///         "postgres://app@127.0.0.1:6432/app",
///     ));
/// # let _ = pool;
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PgTransactionPooling {
    // Room for settings to come, without a breaking change.
    _private: (),
}

impl PgTransactionPooling {
    /// Turns off the statement cache of one connection, for a connection outside any pool.
    ///
    /// ```
    /// use diesel::{Connection, ConnectionResult, PgConnection};
    /// use diesel_lease::pg::PgTransactionPooling;
    ///
    /// fn connect_through_the_pooler(url: &str) -> ConnectionResult<PgConnection> {
    ///     let mut conn = PgConnection::establish(url)?;
    ///     PgTransactionPooling::default().apply(&mut conn);
    ///     Ok(conn)
    /// }
    /// # let _ = connect_through_the_pooler;
    /// ```
    pub fn apply(&self, conn: &mut diesel::PgConnection) {
        use diesel::connection::{CacheSize, Connection};
        conn.set_prepared_statement_cache_size(CacheSize::Disabled);
    }
}

impl diesel::r2d2::CustomizeConnection<diesel::PgConnection, diesel::r2d2::Error>
    for PgTransactionPooling
{
    fn on_acquire(&self, conn: &mut diesel::PgConnection) -> Result<(), diesel::r2d2::Error> {
        self.apply(conn);
        Ok(())
    }
}
