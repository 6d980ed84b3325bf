//! The benchmark harness of `docs/benchmarks.md`: diesel-lease against hand-written SQL, pgbench,
//! advisory locks and `SELECT .. FOR UPDATE NOWAIT`, and its batch claims against the same SQL by
//! hand and against claiming selected jobs one by one, on PostgreSQL, MySQL/MariaDB and SQLite.
//!
//! ```text
//! PG_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test \
//! MYSQL_DATABASE_URL=mysql://root@127.0.0.1:3306/test \
//!     cargo bench --all-features --bench lease_bench
//! ```
//!
//! A server backend whose URL is unset is skipped with a note; SQLite always runs (a WAL file in
//! the temporary directory). Every figure is a ratio against a baseline measured in the same run,
//! alternating baseline and library in rounds; the raw numbers are printed beside it. The run
//! rewrites the generated part of `docs/benchmarks.md`, `docs/benchmarks/ratios.svg` and
//! `docs/benchmarks/results.json`.
//!
//! Options (after `--`): `--quick` (a smoke run, numbers meaningless), `--only 1,3,...` (those
//! measurements; 7 is the profile, 8 the batch claims, 10 the pooler-safe setup), `--no-write`
//! (print only), `--out DIR` (write there instead of `docs/`, even with `--quick`),
//! `--profile-cycle N [lib|lib-diesel|hand|hand-cached]` (the loop callgrind runs; not for
//! direct use). Measurement 10 runs through PgBouncer too when `PGBOUNCER_DATABASE_URL` is set.
#![allow(clippy::unwrap_used, clippy::expect_used)]
// A benchmark times itself on the application's clock; no lease is decided by it.
#![allow(clippy::disallowed_methods)]
#![forbid(unsafe_code)]

use std::collections::BTreeSet;
use std::marker::PhantomData;

use chrono::{DateTime, Utc};
use diesel::backend::Backend;
use diesel::prelude::*;
use diesel::query_builder::{AstPass, Query, QueryFragment, QueryId};
use diesel_lease::backend::LeaseBackend;

mod backend;
mod batch;
mod churn;
mod commits;
mod contention;
mod growth;
mod holders;
mod keeper;
mod measure;
mod overhead;
mod own_server;
mod peer;
mod pgbench;
mod pooler;
mod profile;
mod profile_figures;
mod report;
mod results;
mod sections;
mod suite;
mod text;
mod turns;
mod writes;

pub type Res<T> = Result<T, Box<dyn std::error::Error + Send + Sync>>;

diesel::table! {
    use diesel::sql_types::*;
    use diesel_lease::sql_types::UtcTimestamp;

    /// The benchmark's own leased rows.
    bench_leases (id) {
        id -> BigInt,
        status -> Text,
        owner -> Nullable<Text>,
        claim_token -> Nullable<Text>,
        claimed_at -> Nullable<UtcTimestamp>,
    }
}

diesel_lease::claim_lease!(bench_leases);

diesel::table! {
    use diesel::sql_types::*;
    use diesel_lease::sql_types::UtcTimestamp;

    /// The rows a keeper keeps in measurement 9.
    bench_kept (id) {
        id -> BigInt,
        owner -> Nullable<Text>,
        claim_token -> Nullable<Text>,
        claimed_at -> Nullable<UtcTimestamp>,
    }
}

diesel_lease::claim_lease!(bench_kept);

diesel::table! {
    use diesel::sql_types::*;
    use diesel_lease::sql_types::UtcTimestamp;

    /// The queue of measurement 11: most of its jobs done and kept, as real queues keep them.
    bench_growth (id) {
        id -> BigInt,
        status -> Text,
        owner -> Nullable<Text>,
        claim_token -> Nullable<Text>,
        claimed_at -> Nullable<UtcTimestamp>,
    }
}

diesel_lease::claim_lease!(bench_growth);

/// A row of `bench_leases`, read by the library (`Queryable`) and by `sql_query` (`QueryableByName`).
#[derive(Debug, Queryable, QueryableByName)]
#[diesel(table_name = bench_leases)]
#[allow(dead_code)] // read back to be decoded, as a caller would
pub struct LeaseRow {
    pub id: i64,
    pub status: String,
    pub owner: Option<String>,
    pub claim_token: Option<String>,
    pub claimed_at: Option<DateTime<Utc>>,
}

/// A bound value of hand-written SQL.
#[derive(Debug, Clone, Copy)]
pub enum Bind<'a> {
    Text(&'a str),
    BigInt(i64),
}

/// Hand-written SQL known by its marker type: its text cut at the placeholders (`$n` or `?`).
pub trait HandSql: 'static {
    fn fragments() -> &'static [&'static str];
}

/// `sql` cut at each placeholder: n placeholders give n + 1 fragments.
pub fn split_placeholders(sql: &'static str) -> Vec<&'static str> {
    let mut fragments = Vec::new();
    let (bytes, mut start, mut at) = (sql.as_bytes(), 0, 0);
    while at < bytes.len() {
        let length = match bytes[at] {
            b'?' => 1,
            b'$' => {
                1 + bytes[at + 1..]
                    .iter()
                    .take_while(|b| b.is_ascii_digit())
                    .count()
            }
            _ => 0,
        };
        if length > 0 {
            fragments.push(&sql[start..at]);
            at += length;
            start = at;
        } else {
            at += 1;
        }
    }
    fragments.push(&sql[start..]);
    fragments
}

/// Hand-written SQL with its binds, prepared once per connection (unlike `sql_query`, which
/// Diesel never caches).
pub struct PreparedSql<'a, M, const N: usize> {
    binds: [Bind<'a>; N],
    marker: PhantomData<M>,
}

impl<'a, M: HandSql, const N: usize> PreparedSql<'a, M, N> {
    pub fn new(binds: [Bind<'a>; N]) -> Self {
        debug_assert_eq!(M::fragments().len(), N + 1, "one bind per placeholder");
        Self {
            binds,
            marker: PhantomData,
        }
    }
}

impl<M: 'static, const N: usize> QueryId for PreparedSql<'_, M, N> {
    type QueryId = M;
    const HAS_STATIC_QUERY_ID: bool = true;
}

impl<M, const N: usize> Query for PreparedSql<'_, M, N> {
    type SqlType = diesel::sql_types::Untyped;
}

impl<'a, M, const N: usize, DB> QueryFragment<DB> for PreparedSql<'a, M, N>
where
    M: HandSql,
    DB: Backend,
    str: diesel::serialize::ToSql<diesel::sql_types::Text, DB>,
    i64: diesel::serialize::ToSql<diesel::sql_types::BigInt, DB>,
    DB: diesel::sql_types::HasSqlType<diesel::sql_types::Text>
        + diesel::sql_types::HasSqlType<diesel::sql_types::BigInt>,
{
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        let fragments = M::fragments();
        for (n, fragment) in fragments.iter().enumerate() {
            out.push_sql(fragment);
            match self.binds.get(n) {
                Some(Bind::Text(text)) => {
                    out.push_bind_param::<diesel::sql_types::Text, _>(*text)?
                }
                Some(Bind::BigInt(value)) => {
                    out.push_bind_param::<diesel::sql_types::BigInt, _>(value)?
                }
                None => {}
            }
        }
        Ok(())
    }
}

impl<M, const N: usize, C> RunQueryDsl<C> for PreparedSql<'_, M, N> {}

/// `query`'s first row, as Diesel's `get_result` reads it; after a database error, the connection
/// given what its backend needs before the statement may run again, as the library does after
/// each of its reads (`diesel_lease::backend::read`, which collects every row): on MySQL/MariaDB
/// its prepared statements dropped, since Connector/C leaves a cached statement whose result
/// failed past its header unable to run again, and its next execution would never return (issue
/// 15 item 1). Every hand-written read the harness caches on MySQL/MariaDB goes through here or
/// through `read`.
pub fn read_one<'q, C, Q, U>(query: Q, conn: &mut C) -> QueryResult<U>
where
    C: Connection,
    C::Backend: LeaseBackend,
    Q: RunQueryDsl<C> + diesel::query_dsl::LoadQuery<'q, C, U>,
{
    let row = query.get_result(conn);
    if let Err(diesel::result::Error::DatabaseError(..)) = row {
        <C::Backend as LeaseBackend>::after_failed_read(conn);
    }
    row
}

/// Declares the marker of a hand-written statement and where its SQL is.
#[macro_export]
macro_rules! hand_statement {
    ($marker:ident, $sql:expr) => {
        pub struct $marker;

        impl $crate::HandSql for $marker {
            fn fragments() -> &'static [&'static str] {
                static FRAGMENTS: std::sync::OnceLock<Vec<&'static str>> =
                    std::sync::OnceLock::new();
                FRAGMENTS.get_or_init(|| $crate::split_placeholders($sql))
            }
        }
    };
}

/// Fails with `what` unless `ok`.
pub fn check(ok: bool, what: &str) -> Res<()> {
    if ok {
        Ok(())
    } else {
        Err(what.into())
    }
}

/// What this run does.
#[derive(Debug, Clone)]
pub struct Options {
    pub plan: measure::Plan,
    pub only: Option<BTreeSet<u32>>,
    pub write: bool,
    /// Where the page, the plot and the JSON go: `docs/`, or `--out DIR`.
    pub docs: std::path::PathBuf,
}

impl Options {
    pub fn runs(&self, measurement: u32) -> bool {
        self.only
            .as_ref()
            .is_none_or(|only| only.contains(&measurement))
    }
}

fn main() {
    if let Err(error) = run() {
        eprintln!("lease_bench failed: {error}");
        std::process::exit(1);
    }
}

fn run() -> Res<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Some(at) = args.iter().position(|arg| arg == "--profile-cycle") {
        let cycles = args.get(at + 1).ok_or("--profile-cycle N")?.parse()?;
        let variant = args.get(at + 2).map(String::as_str).unwrap_or("lib");
        return profile::cycles(cycles, variant);
    }
    // `cargo test --benches` runs this binary without `--bench`: do not benchmark then.
    if !args.iter().any(|arg| arg == "--bench") {
        println!("lease_bench: run it with `cargo bench --all-features --bench lease_bench`");
        return Ok(());
    }
    let quick = args.iter().any(|arg| arg == "--quick");
    let only = match args.iter().position(|arg| arg == "--only") {
        Some(at) => Some(
            args.get(at + 1)
                .ok_or("--only 1,2,...")?
                .split(',')
                .map(str::parse)
                .collect::<Result<BTreeSet<u32>, _>>()?,
        ),
        None => None,
    };
    let out = args
        .iter()
        .position(|arg| arg == "--out")
        .map(|at| {
            args.get(at + 1)
                .map(std::path::PathBuf::from)
                .ok_or("--out DIR")
        })
        .transpose()?;
    let out_is_docs = out.is_none();
    let options = Options {
        plan: if quick {
            measure::Plan::quick()
        } else {
            measure::Plan::full()
        },
        only,
        write: out.is_some() || (!args.iter().any(|arg| arg == "--no-write") && !quick),
        docs: out.unwrap_or_else(|| {
            std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../docs")
        }),
    };
    // Results written into docs/ must be of a commit: the checkout has to be clean.
    let revision = report::Revision::current();
    let into_docs = options.write && out_is_docs;
    if into_docs && !revision.is_clean() {
        return Err(format!(
            "refusing to write docs/ from {}: commit first (or write elsewhere with --out DIR, \
             or print only with --no-write)",
            revision.describe()
        )
        .into());
    }
    let started = std::time::Instant::now();
    let mut results = results::Results {
        machine: report::machine(),
        ..results::Results::default()
    };

    let pg_url = server_url("PostgreSQL", "PG_DATABASE_URL");
    let mysql_url = server_url("MySQL/MariaDB", "MYSQL_DATABASE_URL");

    if let Some(url) = &pg_url {
        sections::run::<backend::Pg>(url, &options, &mut results)?;
        if options.runs(pgbench::SECTION) {
            pgbench::run(url, &options, &mut results)?;
        }
        if options.runs(batch::SECTION) {
            batch::pg::run(url, &options, &mut results)?;
        }
        if options.runs(pooler::SECTION) {
            pooler::run(url, &options, &mut results)?;
        }
        if options.runs(growth::SECTION) {
            growth::run::<backend::Pg>(url, &options.plan, &mut results)?;
        }
        if options.runs(commits::SECTION) {
            commits::run::<backend::Pg>(url, &options.plan, &mut results)?;
        }
        if options.runs(peer::SECTION) {
            peer::run(url, &options.plan, &mut results)?;
        }
        if [
            growth::SECTION,
            churn::SECTION,
            churn::HORIZON,
            writes::SECTION,
        ]
        .iter()
        .any(|section| options.runs(*section))
        {
            own_server::run(&options, &mut results)?;
        }
    }
    if let Some(url) = &mysql_url {
        sections::run::<backend::Mysql>(url, &options, &mut results)?;
        if options.runs(batch::SECTION) {
            batch::mysql::run(url, &options, &mut results)?;
        }
        if options.runs(growth::SECTION) {
            growth::run::<backend::Mysql>(url, &options.plan, &mut results)?;
        }
        if options.runs(commits::SECTION) {
            commits::run::<backend::Mysql>(url, &options.plan, &mut results)?;
        }
    }
    let sqlite_path = std::env::temp_dir().join(format!("bench-lease-{}.db", std::process::id()));
    let sqlite_url = sqlite_path.to_string_lossy().into_owned();
    let sqlite =
        sections::run::<backend::Sqlite>(&sqlite_url, &options, &mut results).and_then(|()| {
            if options.runs(batch::SECTION) {
                batch::sqlite::run(&sqlite_url, &options, &mut results)?;
            }
            if options.runs(growth::SECTION) {
                growth::run::<backend::Sqlite>(&sqlite_url, &options.plan, &mut results)?;
            }
            if options.runs(commits::SECTION) {
                commits::run::<backend::Sqlite>(&sqlite_url, &options.plan, &mut results)?;
            }
            Ok(())
        });
    backend::sqlite::remove_database(&sqlite_url);
    sqlite?;
    if options.runs(7) {
        if let Err(error) = profile::run(&options, &mut results) {
            results.note(format!("Profile skipped: {error}"));
        }
    }
    results.elapsed = started.elapsed();
    report::publish(&results, &options)
}

/// The URL in `variable`, or `None` with a printed note.
fn server_url(backend: &str, variable: &str) -> Option<String> {
    match std::env::var(variable) {
        Ok(url) if !url.trim().is_empty() => Some(url),
        _ => {
            println!("SKIPPED {backend}: {variable} is not set");
            None
        }
    }
}
