//! A lease table's health on MySQL/MariaDB: the history list length, the oldest open
//! transaction by `UTC_TIMESTAMP(6)`, and the table's free space.
use diesel::connection::{Connection, LoadConnection};
use diesel::mysql::Mysql;
use diesel::sql_types::{BigInt, Nullable, Text};
use diesel::{QueryResult, QueryableByName};

use crate::backend::{read_optional, HealthPlan, ReadsHealth};
use crate::health::{unsigned, Check, HealthThresholds, Measure, Metric, Reading, TableHealth};

/// The table's rows (an estimate), its size with its indexes and free space, its free space,
/// and InnoDB's page size, for the table in the schema bound (the connection's database when
/// none).
const TABLE: &str = "SELECT CAST(TABLE_ROWS AS SIGNED) AS live_rows, \
    CAST(DATA_LENGTH + INDEX_LENGTH + DATA_FREE AS SIGNED) AS size, \
    CAST(DATA_FREE AS SIGNED) AS free, CAST(@@innodb_page_size AS SIGNED) AS page_size \
    FROM information_schema.TABLES \
    WHERE TABLE_SCHEMA = COALESCE(?, DATABASE()) AND TABLE_NAME = ?";

/// The history list length from InnoDB's counter, while the counter is enabled (it is by
/// default); MySQL and MariaDB name the column that says so differently, but both date when it
/// was turned on and off.
const HISTORY_METRIC: &str = "SELECT CAST(COUNT AS SIGNED) AS history \
    FROM information_schema.INNODB_METRICS WHERE NAME = 'trx_rseg_history_len' \
    AND TIME_ENABLED IS NOT NULL AND TIME_DISABLED IS NULL";

/// MariaDB's status variable of the history list length, read whether the counter is on or off.
const HISTORY_STATUS: &str = "SHOW GLOBAL STATUS LIKE 'Innodb_history_list_length'";

/// The oldest open transaction of another session that keeps a read view from its first read to
/// its end: at REPEATABLE READ or SERIALIZABLE (at READ COMMITTED a read view lasts one statement,
/// and a transaction idle between statements keeps none). `trx_started` is written in the
/// server's system time zone, whatever the session's (InnoDB formats it with `localtime_r`), to
/// the second: converted from `SYSTEM` to UTC, it is compared with `UTC_TIMESTAMP(6)`, so that no
/// session's `time_zone` takes part.
const OLDEST: &str = "SELECT CAST(trx_mysql_thread_id AS SIGNED) AS session, \
    trx_isolation_level AS isolation, trx_state AS state, LEFT(trx_query, 80) AS query, \
    TIMESTAMPDIFF(MICROSECOND, CONVERT_TZ(trx_started, 'SYSTEM', '+00:00'), UTC_TIMESTAMP(6)) \
        AS micros \
    FROM information_schema.INNODB_TRX WHERE trx_mysql_thread_id <> CONNECTION_ID() \
    AND trx_isolation_level IN ('REPEATABLE READ', 'SERIALIZABLE') \
    ORDER BY trx_started, trx_id LIMIT 1";

#[derive(QueryableByName)]
struct TableRow {
    #[diesel(sql_type = Nullable<BigInt>)]
    live_rows: Option<i64>,
    #[diesel(sql_type = Nullable<BigInt>)]
    size: Option<i64>,
    #[diesel(sql_type = Nullable<BigInt>)]
    free: Option<i64>,
    #[diesel(sql_type = BigInt)]
    page_size: i64,
}

#[derive(QueryableByName)]
struct History {
    #[diesel(sql_type = BigInt)]
    history: i64,
}

/// A row of `SHOW GLOBAL STATUS`.
#[derive(QueryableByName)]
struct Status {
    #[diesel(sql_type = Text)]
    #[diesel(column_name = Value)]
    value: String,
}

#[derive(QueryableByName)]
struct Oldest {
    #[diesel(sql_type = BigInt)]
    session: i64,
    #[diesel(sql_type = Text)]
    isolation: String,
    #[diesel(sql_type = Text)]
    state: String,
    #[diesel(sql_type = Nullable<Text>)]
    query: Option<String>,
    #[diesel(sql_type = Nullable<BigInt>)]
    micros: Option<i64>,
}

impl Oldest {
    /// `session 496 (REPEATABLE READ, RUNNING; running: SELECT ..)`, or `.. idle` between
    /// statements.
    fn in_words(&self) -> String {
        let doing = self.query.as_deref().map_or_else(
            || "idle between statements".to_owned(),
            |query| format!("running: {}", query.trim()),
        );
        format!(
            "session {} ({}, {}; {doing})",
            self.session, self.isolation, self.state
        )
    }
}

/// The history list and the oldest transaction are the server's: purge is one for all its
/// databases, and an old read view anywhere keeps every table's undo history.
impl<C> ReadsHealth<C> for Mysql
where
    C: Connection<Backend = Mysql> + LoadConnection,
{
    fn read_health(plan: &HealthPlan, conn: &mut C) -> QueryResult<Option<TableHealth>> {
        let table = diesel::sql_query(TABLE)
            .bind::<Nullable<Text>, _>(plan.table.schema.as_deref())
            .bind::<Text, _>(&plan.table.name);
        let Some(table) = read_optional::<C, _, TableRow>(table, conn)? else {
            return Ok(None);
        };
        let history = history_list_length(conn)?;
        let oldest = read_optional::<C, _, Oldest>(diesel::sql_query(OLDEST), conn)?;
        let readings = readings(&table, history, oldest.as_ref());
        let checks = checks(&plan.thresholds, oldest.as_ref());
        Ok(Some(TableHealth::judged(
            plan.table.plain(),
            "MySQL/MariaDB",
            readings,
            checks,
        )))
    }
}

/// From InnoDB's counter while it is enabled, else from MariaDB's status variable (MySQL has
/// none: there the length is absent while the counter is off). `SHOW ENGINE INNODB STATUS`,
/// which has it too, cannot be read through a prepared statement: the server gives its result
/// no metadata before it runs.
fn history_list_length<C>(conn: &mut C) -> QueryResult<Option<i64>>
where
    C: Connection<Backend = Mysql> + LoadConnection,
{
    let counted = read_optional::<C, _, History>(diesel::sql_query(HISTORY_METRIC), conn)?;
    if let Some(counted) = counted {
        return Ok(Some(counted.history));
    }
    let status = read_optional::<C, _, Status>(diesel::sql_query(HISTORY_STATUS), conn)?;
    Ok(status.and_then(|status| status.value.trim().parse().ok()))
}

fn readings(table: &TableRow, history: Option<i64>, oldest: Option<&Oldest>) -> Vec<Reading> {
    let mut readings = Vec::new();
    readings.extend(
        history.map(|length| {
            Reading::new(Metric::HistoryListLength, Measure::Count(unsigned(length)))
        }),
    );
    if let Some(oldest) = oldest {
        readings.extend(oldest.micros.map(|micros| {
            Reading::new(
                Metric::OldestTransactionAge,
                Measure::age_from_micros(micros),
            )
        }));
        readings.push(Reading::new(
            Metric::OldestTransactionSession,
            Measure::Id(unsigned(oldest.session)),
        ));
        readings.push(Reading::new(
            Metric::OldestTransaction,
            Measure::Text(oldest.in_words()),
        ));
    }
    readings.extend(
        table
            .live_rows
            .map(|rows| Reading::new(Metric::LiveRows, Measure::Count(unsigned(rows)))),
    );
    let page_size = unsigned(table.page_size).max(1);
    let pages = unsigned(table.size.unwrap_or(0)).div_ceil(page_size);
    let free = unsigned(table.free.unwrap_or(0)) / page_size;
    readings.push(Reading::new(Metric::PageSize, Measure::Bytes(page_size)));
    readings.push(Reading::new(Metric::Pages, Measure::Count(pages)));
    readings.push(Reading::new(Metric::FreePages, Measure::Count(free)));
    readings.extend(
        Measure::share_of(free, pages).map(|share| Reading::new(Metric::FreeSpaceShare, share)),
    );
    readings
}

fn checks(thresholds: &HealthThresholds, oldest: Option<&Oldest>) -> Vec<Check> {
    let read_view = oldest.map_or_else(String::new, |oldest| {
        format!(" (the oldest open transaction is {})", oldest.in_words())
    });
    vec![
        Check::at_most(
            Metric::HistoryListLength,
            Measure::Count(thresholds.history_list_length()),
        )
        .because(format!(
            "purge has not removed the undo records of committed transactions: an old read \
             view keeps them{read_view}, or purge falls behind the writes; every read of a \
             changed row, claims' included, walks back through them"
        )),
        Check::at_most(
            Metric::OldestTransactionAge,
            Measure::Age(thresholds.transaction_age()),
        )
        .because(oldest.map_or_else(String::new, |oldest| {
            format!(
                "{} is open: its read view, kept from its first read to its end at {}, keeps \
                 purge from removing the undo records of every table, the versions each renewal \
                 leaves included, until it ends",
                oldest.in_words(),
                oldest.isolation
            )
        })),
        Check::at_most(
            Metric::FreeSpaceShare,
            Measure::Share(thresholds.free_space_share()),
        )
        .once(Metric::Pages, thresholds.sample())
        .because(
            "the table's file holds pages no row uses: new rows reuse them, and OPTIMIZE TABLE \
             gives them back",
        ),
    ]
}
