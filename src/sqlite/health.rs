//! A lease table's health on SQLite: the write-ahead log and what a passive checkpoint leaves
//! in it, and the database file's pages and free pages.
use diesel::connection::{Connection, LoadConnection};
use diesel::sql_types::{BigInt, Text};
use diesel::sqlite::Sqlite;
use diesel::{QueryResult, QueryableByName};

use crate::backend::{in_no_transaction, read_optional, HealthPlan, ReadsHealth};
use crate::health::{unsigned, Check, HealthThresholds, Measure, Metric, Reading, TableHealth};

/// The bytes a WAL's header takes, and each frame's header.
const WAL_HEADER: u64 = 32;
const FRAME_HEADER: u64 = 24;

/// How many columns the table has, where SQLite looks for it when its name is not qualified:
/// none if there is no such table.
const COLUMNS: &str = "SELECT count(*) AS count FROM pragma_table_info(?)";

/// How many columns the table has in the schema bound second, if the connection has that schema
/// attached.
const COLUMNS_IN: &str = "SELECT count(*) AS count FROM pragma_database_list AS d, \
    pragma_table_info(?, d.name) AS t WHERE d.name = ?";

#[derive(QueryableByName)]
struct Count {
    #[diesel(sql_type = BigInt)]
    count: i64,
}

/// `PRAGMA wal_checkpoint(PASSIVE)`'s answer: frames in the log and frames checkpointed, -1
/// each when the database is not in WAL mode.
#[derive(QueryableByName)]
struct Checkpoint {
    #[diesel(sql_type = BigInt)]
    log: i64,
    #[diesel(sql_type = BigInt)]
    checkpointed: i64,
}

#[derive(QueryableByName)]
struct PageSize {
    #[diesel(sql_type = BigInt)]
    page_size: i64,
}

#[derive(QueryableByName)]
struct PageCount {
    #[diesel(sql_type = BigInt)]
    page_count: i64,
}

#[derive(QueryableByName)]
struct FreelistCount {
    #[diesel(sql_type = BigInt)]
    freelist_count: i64,
}

/// The WAL and the pages are the database file's, which every table of it shares. The
/// checkpoint is passive: it copies into the database the frames no reader still needs, and
/// never waits for a reader or a writer; the frames it leaves are newer than the snapshot of a
/// reader still open. Inside a transaction of the caller's, SQLite runs no checkpoint, and the
/// log's readings are absent.
impl<C> ReadsHealth<C> for Sqlite
where
    C: Connection<Backend = Sqlite> + LoadConnection,
{
    fn read_health(plan: &HealthPlan, conn: &mut C) -> QueryResult<Option<TableHealth>> {
        let columns = match &plan.table.schema {
            None => {
                let columns = diesel::sql_query(COLUMNS).bind::<Text, _>(&plan.table.name);
                read_optional::<C, _, Count>(columns, conn)?
            }
            Some(schema) => {
                let columns = diesel::sql_query(COLUMNS_IN)
                    .bind::<Text, _>(&plan.table.name)
                    .bind::<Text, _>(schema);
                read_optional::<C, _, Count>(columns, conn)?
            }
        };
        if columns.is_none_or(|columns| columns.count == 0) {
            return Ok(None);
        }
        // A schema's name in a PRAGMA cannot be bound: it is quoted, and the SQL is not cached.
        let schema = format!(
            "\"{}\"",
            plan.table
                .schema
                .as_deref()
                .unwrap_or("main")
                .replace('"', "\"\"")
        );
        let pragma = |name: &str| diesel::sql_query(format!("PRAGMA {schema}.{name}"));
        // SQLite runs no checkpoint on a connection inside a transaction ("database table is
        // locked"): in one of the caller's, the log goes unread.
        let checkpoint = if in_no_transaction(conn) {
            read_optional::<C, _, Checkpoint>(pragma("wal_checkpoint(PASSIVE)"), conn)?
        } else {
            None
        };
        let page_size = read_optional::<C, _, PageSize>(pragma("page_size"), conn)?;
        let pages = read_optional::<C, _, PageCount>(pragma("page_count"), conn)?;
        let free = read_optional::<C, _, FreelistCount>(pragma("freelist_count"), conn)?;
        let page_size = page_size.map_or(0, |size| unsigned(size.page_size));
        let pages = pages.map_or(0, |pages| unsigned(pages.page_count));
        let free = free.map_or(0, |free| unsigned(free.freelist_count));
        let mut readings = Vec::new();
        if let Some(checkpoint) = checkpoint.filter(|checkpoint| checkpoint.log >= 0) {
            let frames = unsigned(checkpoint.log);
            let left = frames.saturating_sub(unsigned(checkpoint.checkpointed));
            let bytes = if frames == 0 {
                0
            } else {
                WAL_HEADER + frames * (page_size + FRAME_HEADER)
            };
            readings.push(Reading::new(Metric::WalFrames, Measure::Count(frames)));
            readings.push(Reading::new(Metric::WalFramesLeft, Measure::Count(left)));
            readings.push(Reading::new(Metric::WalBytes, Measure::Bytes(bytes)));
        }
        readings.push(Reading::new(Metric::PageSize, Measure::Bytes(page_size)));
        readings.push(Reading::new(Metric::Pages, Measure::Count(pages)));
        readings.push(Reading::new(Metric::FreePages, Measure::Count(free)));
        readings.extend(
            Measure::share_of(free, pages).map(|share| Reading::new(Metric::FreeSpaceShare, share)),
        );
        Ok(Some(TableHealth::judged(
            plan.table.plain(),
            "SQLite",
            readings,
            checks(&plan.thresholds),
        )))
    }
}

fn checks(thresholds: &HealthThresholds) -> Vec<Check> {
    vec![
        Check::at_most(
            Metric::WalFramesLeft,
            Measure::Count(thresholds.wal_frames_left()),
        )
        .because(
            "a reader holds a snapshot older than these frames (a read transaction left open), \
             so no checkpoint can copy them into the database and the write-ahead log grows, and \
             every read looks through it: end long read transactions",
        ),
        Check::at_most(
            Metric::FreeSpaceShare,
            Measure::Share(thresholds.free_space_share()),
        )
        .once(Metric::Pages, thresholds.sample())
        .because(
            "the database file holds pages no row uses: new rows reuse them, and VACUUM (or \
             auto_vacuum = INCREMENTAL) gives them back",
        ),
    ]
}
