//! SQLite's batch statements.
use crate::batch::prelude::*;
use crate::batch::returning::returning_backend;

pub const NAME: &str = <crate::backend::Sqlite as crate::backend::Backend>::NAME;
pub type Conn = SqliteConnection;
pub const DDL: &[&str] = &[
    "CREATE TABLE bench_jobs (id BIGINT PRIMARY KEY NOT NULL, status TEXT NOT NULL, \
     owner TEXT, claim_token TEXT, claimed_at TEXT)",
    "CREATE INDEX bench_jobs_queue ON bench_jobs (status, id)",
];
pub const EMPTY: &str = "DELETE FROM bench_jobs";
pub const AFTER_FILL: Option<&str> = None;
pub const AFTER_FREE: Option<&str> = None;
/// Whether a batch claim locks its candidates in rounds, which the start-up check then also
/// compares past a first round that came back short.
pub const LOCKS_IN_ROUNDS: bool = false;
/// The key column, as key lists name it.
pub const KEY: &str = "`bench_jobs`.`id`";
pub const CLAIM: &str = "UPDATE `bench_jobs` SET `status` = ?, `owner` = ?, `claim_token` = ?, `claimed_at` = strftime('%Y-%m-%d %H:%M:%f', 'now') WHERE (`bench_jobs`.`id`) IN (SELECT `bench_jobs`.`id` FROM `bench_jobs` WHERE (((`bench_jobs`.`claim_token` IS NULL) OR (`bench_jobs`.`claimed_at` < strftime('%Y-%m-%d %H:%M:%f', 'now', printf('%+.6f seconds', -(?) / 1000000.0)))) AND (`bench_jobs`.`status` = ?)) ORDER BY `bench_jobs`.`id` LIMIT ?) AND (((`bench_jobs`.`claim_token` IS NULL) OR (`bench_jobs`.`claimed_at` < strftime('%Y-%m-%d %H:%M:%f', 'now', printf('%+.6f seconds', -(?) / 1000000.0)))) AND (`bench_jobs`.`status` = ?)) RETURNING `bench_jobs`.`id`, `bench_jobs`.`id`, NULL";
pub const RELEASE: &str = "UPDATE `bench_jobs` SET `status` = ?, `owner` = NULL, `claim_token` = NULL, `claimed_at` = NULL WHERE ({keys} AND (`bench_jobs`.`claim_token` = ? AND `bench_jobs`.`claim_token` COLLATE BINARY = ?)) RETURNING `bench_jobs`.`id`";
/// The release of one key: its matched count says whether the token still held the row.
pub const RELEASE_ONE: &str = "UPDATE `bench_jobs` SET `status` = ?, `owner` = NULL, `claim_token` = NULL, `claimed_at` = NULL WHERE ({keys} AND (`bench_jobs`.`claim_token` = ? AND `bench_jobs`.`claim_token` COLLATE BINARY = ?))";

fn claim_binds<'a>(n: i64, owner: &'a str, token: &'a str) -> [Bind<'a>; 8] {
    [
        Bind::Text("running"),
        Bind::Text(owner),
        Bind::Text(token),
        Bind::BigInt(LEASE_MICROS),
        Bind::Text("queued"),
        Bind::BigInt(n),
        Bind::BigInt(LEASE_MICROS),
        Bind::Text("queued"),
    ]
}

returning_backend!();
