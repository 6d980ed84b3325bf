//! A lease table's health on PostgreSQL: its statistics (HOT updates, dead row versions,
//! vacuums) and the oldest transaction holding the cleanup horizon back, by
//! `statement_timestamp()`.
use diesel::connection::{Connection, LoadConnection};
use diesel::pg::Pg;
use diesel::sql_types::{BigInt, Bool, Integer, Nullable, Text};
use diesel::{QueryResult, QueryableByName, RunQueryDsl};

use crate::backend::{read_optional, HealthPlan, ReadsHealth};
use crate::health::{unsigned, Check, HealthThresholds, Measure, Metric, Reading, TableHealth};

/// The table's statistics, fresh (the statistics snapshot of a transaction of the caller's is
/// dropped first), for the table the connection's `search_path` finds under the name bound.
const TABLE: &str = "SELECT s.n_tup_upd AS updates, s.n_tup_hot_upd AS hot_updates, \
    s.n_live_tup AS live_rows, s.n_dead_tup AS dead_rows, \
    CAST(EXTRACT(EPOCH FROM (statement_timestamp() - GREATEST(s.last_vacuum, s.last_autovacuum))) \
        * 1000000 AS BIGINT) AS since_vacuum, \
    CAST(EXTRACT(EPOCH FROM (statement_timestamp() - s.last_autovacuum)) * 1000000 AS BIGINT) \
        AS since_autovacuum, \
    current_setting('autovacuum')::boolean AND COALESCE((SELECT o.option_value::boolean \
        FROM pg_options_to_table(c.reloptions) o WHERE o.option_name = 'autovacuum_enabled'), true) \
        AS autovacuum, \
    COALESCE((SELECT o.option_value::integer FROM pg_options_to_table(c.reloptions) o \
        WHERE o.option_name = 'fillfactor'), 100) AS fillfactor, \
    current_setting('block_size')::bigint AS page_size, \
    pg_relation_size(c.oid) / current_setting('block_size')::bigint AS pages \
    FROM pg_stat_all_tables s JOIN pg_class c ON c.oid = s.relid \
    WHERE s.relid = to_regclass($1)";

/// The oldest of what holds this database's cleanup horizon back, by how many transaction ids
/// old its horizon is: another session's snapshot or transaction, a prepared transaction, a
/// replication slot. A snapshot counts in its own database alone (since PostgreSQL 14, vacuum
/// and pruning ignore other databases' snapshots), but a transaction id anywhere holds back page
/// pruning in every database (each snapshot's xmin is the oldest running transaction id of the
/// server), and so does a prepared transaction's: sessions of other databases count by their
/// transaction ids, `elsewhere` names their database. A lazy `VACUUM` (autovacuum's among them)
/// shows a snapshot but holds no horizon back (the server leaves it out), so it is left out too:
/// it is the cure, never to be named as the cause.
const HORIZON: &str = "SELECT holder, pid, elsewhere, state, what, xids, micros FROM ( \
    SELECT 'session' AS holder, a.pid AS pid, \
        CASE WHEN a.datname <> current_database() THEN a.datname::text END AS elsewhere, \
        a.state AS state, left(a.query, 80) AS what, \
        CAST(CASE WHEN a.datname <> current_database() THEN age(a.backend_xid) \
            ELSE GREATEST(age(a.backend_xid), age(a.backend_xmin)) END AS BIGINT) AS xids, \
        CAST(EXTRACT(EPOCH FROM (statement_timestamp() - a.xact_start)) * 1000000 AS BIGINT) AS micros \
        FROM pg_stat_activity a \
        WHERE a.pid <> pg_backend_pid() AND (a.backend_xid IS NOT NULL \
            OR (a.backend_xmin IS NOT NULL \
                AND (a.datname = current_database() OR a.datname IS NULL))) \
            AND NOT EXISTS (SELECT 1 FROM pg_stat_progress_vacuum v WHERE v.pid = a.pid) \
    UNION ALL \
    SELECT 'prepared transaction', NULL, \
        CASE WHEN p.database <> current_database() THEN p.database::text END, NULL, p.gid, \
        CAST(age(p.transaction) AS BIGINT), \
        CAST(EXTRACT(EPOCH FROM (statement_timestamp() - p.prepared)) * 1000000 AS BIGINT) \
        FROM pg_prepared_xacts p \
    UNION ALL \
    SELECT 'replication slot', s.active_pid, NULL, NULL, s.slot_name::text, \
        CAST(age(s.xmin) AS BIGINT), NULL \
        FROM pg_replication_slots s WHERE s.xmin IS NOT NULL \
    ) AS holders ORDER BY xids DESC NULLS LAST, micros DESC NULLS LAST LIMIT 1";

#[derive(QueryableByName)]
struct TableRow {
    #[diesel(sql_type = BigInt)]
    updates: i64,
    #[diesel(sql_type = BigInt)]
    hot_updates: i64,
    #[diesel(sql_type = BigInt)]
    live_rows: i64,
    #[diesel(sql_type = BigInt)]
    dead_rows: i64,
    #[diesel(sql_type = Nullable<BigInt>)]
    since_vacuum: Option<i64>,
    #[diesel(sql_type = Nullable<BigInt>)]
    since_autovacuum: Option<i64>,
    #[diesel(sql_type = Bool)]
    autovacuum: bool,
    #[diesel(sql_type = Integer)]
    fillfactor: i32,
    #[diesel(sql_type = BigInt)]
    page_size: i64,
    #[diesel(sql_type = BigInt)]
    pages: i64,
}

#[derive(QueryableByName)]
struct HorizonRow {
    #[diesel(sql_type = Text)]
    holder: String,
    #[diesel(sql_type = Nullable<Integer>)]
    pid: Option<i32>,
    #[diesel(sql_type = Nullable<Text>)]
    elsewhere: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    state: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    what: Option<String>,
    #[diesel(sql_type = Nullable<BigInt>)]
    xids: Option<i64>,
    #[diesel(sql_type = Nullable<BigInt>)]
    micros: Option<i64>,
}

impl HorizonRow {
    /// Who holds the horizon, in words: `session 4242 (idle in transaction; its last
    /// statement: SELECT ..)`, `prepared transaction 'gid'`, `replication slot 'name'`, with
    /// `of database other` for one of another database.
    fn in_words(&self) -> String {
        let what = self.what.as_deref().unwrap_or("").trim();
        let of = self
            .elsewhere
            .as_ref()
            .map_or_else(String::new, |database| format!(" of database {database}"));
        match (self.holder.as_str(), self.pid) {
            ("session", Some(pid)) => format!(
                "session {pid}{of} ({}; its last statement: {what})",
                self.state.as_deref().unwrap_or("state unknown")
            ),
            (holder, _) => format!("{holder} '{what}'{of}"),
        }
    }

    /// What it holds back: vacuum and pruning in this database, or pruning alone from
    /// another.
    fn holds_back(&self) -> &'static str {
        if self.elsewhere.is_some() {
            "holds a transaction id, which keeps page pruning in every database of the server \
             from removing row versions newer than it: renewals stop being HOT once their \
             pages fill, and the versions they leave pile up until it ends"
        } else {
            "holds back the cleanup horizon of this database: neither vacuum nor page pruning \
             removes a row version it could still read, so the versions every renewal leaves \
             pile up until it ends"
        }
    }
}

/// The statistics are PostgreSQL's cumulative ones: they count since they were last reset, and
/// other sessions' updates show once those sessions have sent them (at most a second or so
/// after their transaction, when they are idle).
impl<C> ReadsHealth<C> for Pg
where
    C: Connection<Backend = Pg> + LoadConnection,
{
    fn read_health(plan: &HealthPlan, conn: &mut C) -> QueryResult<Option<TableHealth>> {
        diesel::sql_query("SELECT pg_stat_clear_snapshot()").execute(conn)?;
        let table = diesel::sql_query(TABLE).bind::<Text, _>(&plan.table.quoted);
        let Some(table) = read_optional::<C, _, TableRow>(table, conn)? else {
            return Ok(None);
        };
        let horizon = read_optional::<C, _, HorizonRow>(diesel::sql_query(HORIZON), conn)?;
        let readings = readings(&table, horizon.as_ref());
        let checks = checks(&plan.thresholds, &table, horizon.as_ref());
        Ok(Some(TableHealth::judged(
            plan.table.plain(),
            "PostgreSQL",
            readings,
            checks,
        )))
    }
}

fn readings(table: &TableRow, horizon: Option<&HorizonRow>) -> Vec<Reading> {
    let updates = unsigned(table.updates);
    let dead = unsigned(table.dead_rows);
    let versions = dead + unsigned(table.live_rows);
    let mut readings = vec![
        Reading::new(Metric::Updates, Measure::Count(updates)),
        Reading::new(
            Metric::HotUpdates,
            Measure::Count(unsigned(table.hot_updates)),
        ),
    ];
    readings.extend(
        Measure::share_of(unsigned(table.hot_updates), updates)
            .map(|share| Reading::new(Metric::HotUpdateShare, share)),
    );
    readings.push(Reading::new(
        Metric::LiveRows,
        Measure::Count(unsigned(table.live_rows)),
    ));
    readings.push(Reading::new(Metric::DeadRows, Measure::Count(dead)));
    readings.extend(
        Measure::share_of(dead, versions).map(|share| Reading::new(Metric::DeadRowShare, share)),
    );
    readings.extend(
        table
            .since_vacuum
            .map(|micros| Reading::new(Metric::SinceVacuum, Measure::age_from_micros(micros))),
    );
    readings.extend(
        table
            .since_autovacuum
            .map(|micros| Reading::new(Metric::SinceAutovacuum, Measure::age_from_micros(micros))),
    );
    readings.push(Reading::new(
        Metric::Autovacuum,
        Measure::Flag(table.autovacuum),
    ));
    readings.push(Reading::new(
        Metric::Fillfactor,
        Measure::Share(f64::from(table.fillfactor) / 100.0),
    ));
    readings.push(Reading::new(
        Metric::PageSize,
        Measure::Bytes(unsigned(table.page_size)),
    ));
    readings.push(Reading::new(
        Metric::Pages,
        Measure::Count(unsigned(table.pages)),
    ));
    if let Some(horizon) = horizon {
        readings.extend(horizon.micros.map(|micros| {
            Reading::new(
                Metric::OldestTransactionAge,
                Measure::age_from_micros(micros),
            )
        }));
        readings.extend(horizon.xids.map(|xids| {
            Reading::new(
                Metric::OldestTransactionXids,
                Measure::Count(unsigned(xids)),
            )
        }));
        readings.extend(horizon.pid.map(|pid| {
            Reading::new(
                Metric::OldestTransactionSession,
                Measure::Id(unsigned(i64::from(pid))),
            )
        }));
        readings.push(Reading::new(
            Metric::OldestTransaction,
            Measure::Text(horizon.in_words()),
        ));
    }
    readings
}

fn checks(
    thresholds: &HealthThresholds,
    table: &TableRow,
    horizon: Option<&HorizonRow>,
) -> Vec<Check> {
    let sample = thresholds.sample();
    let holder = horizon.map_or_else(String::new, |horizon| {
        format!("; the oldest now is {}", horizon.in_words())
    });
    let vacuum = if table.autovacuum {
        "autovacuum has not reached it (see its scale factor and cost limit)"
    } else {
        "autovacuum is off for it: only a VACUUM by hand cleans it"
    };
    vec![
        Check::at_least(
            Metric::HotUpdateShare,
            Measure::Share(thresholds.hot_update_share()),
        )
        .once(Metric::Updates, sample)
        .because(format!(
            "updates that are not HOT write a new entry in every index of the table: keep \
             claimed_at, the one column a renewal writes, out of every index, and leave room on \
             each page for the new row versions (a fillfactor under 100; this table's is {}%)",
            table.fillfactor
        )),
        Check::at_most(
            Metric::DeadRowShare,
            Measure::Share(thresholds.dead_row_share()),
        )
        .once(Metric::DeadRows, sample)
        .because(format!(
            "dead row versions make the table and its indexes larger and every claim's scan \
             slower: vacuum it, and end long transactions, since a vacuum keeps every version an \
             open transaction could still read{holder}"
        )),
        Check::at_most(Metric::SinceVacuum, Measure::Age(thresholds.since_vacuum()))
            .once(Metric::DeadRows, sample)
            .missing_is_past()
            .because(format!("dead rows wait, and {vacuum}")),
        Check::at_most(
            Metric::OldestTransactionAge,
            Measure::Age(thresholds.transaction_age()),
        )
        .because(horizon.map_or_else(String::new, |horizon| {
            format!("{} {}", horizon.in_words(), horizon.holds_back())
        })),
    ]
}
