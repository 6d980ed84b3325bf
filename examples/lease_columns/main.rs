//! Writes a diesel migration that adds the lease columns to an existing table, and the token's
//! index: `<out>/<name>/up.sql` and `down.sql`, for one backend.
//!
//! ```text
//! cargo run --example lease_columns -- --backend sqlite --table jobs
//! cargo run --example lease_columns --features postgres -- --backend postgres --table jobs \
//!     --owner worker --claim-token lease_token --claimed-at leased_at --fence fence --out migrations
//! cargo run --example lease_columns -- --backend sqlite --table jobs --claim-index status=queued:id
//! ```
//!
//! `--claim-index COLUMN=VALUE[:KEY]` adds the index a claim of the rows where COLUMN holds
//! VALUE, in the order of KEY (`id` unless named), needs (`diesel_lease::ClaimIndex`).
//!
//! The backend's Cargo feature must be on. Without `--name`, the migration is named as
//! `diesel migration generate` names one: `YYYY-MM-DD-HHMMSS_lease_columns_<table>`.
use std::process::ExitCode;

use diesel_lease::backend::LeaseBackend;
use diesel_lease::{ClaimIndex, LeaseColumns};

const USAGE: &str = "usage: lease_columns --backend postgres|mysql|sqlite --table TABLE \
    [--owner COLUMN] [--claim-token COLUMN] [--claimed-at COLUMN] [--fence COLUMN] \
    [--claim-index COLUMN=VALUE[:KEY]] [--out DIR (migrations)] [--name NAME]";

/// What the command line asks for.
struct Args {
    backend: String,
    table: String,
    columns: LeaseColumns,
    out: String,
    name: Option<String>,
}

fn parse(mut args: impl Iterator<Item = String>) -> Result<Args, String> {
    let (mut backend, mut table, mut out, mut name, mut claim_index) =
        (None, None, None, None, None);
    let mut renames: Vec<(String, String)> = Vec::new();
    while let Some(flag) = args.next() {
        let value = args.next().ok_or_else(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--backend" => backend = Some(value),
            "--table" => table = Some(value),
            "--out" => out = Some(value),
            "--name" => name = Some(value),
            "--claim-index" => claim_index = Some(claim_index_of(&value)?),
            "--owner" | "--claim-token" | "--claimed-at" | "--fence" => renames.push((flag, value)),
            _ => return Err(format!("unknown option {flag}")),
        }
    }
    let table = table.ok_or("--table is required")?;
    let columns =
        renames.into_iter().fold(
            LeaseColumns::new(&table),
            |columns, (flag, column)| match flag.as_str() {
                "--owner" => columns.owner(column),
                "--claim-token" => columns.claim_token(column),
                "--claimed-at" => columns.claimed_at(column),
                _ => columns.fence(column),
            },
        );
    let columns = match claim_index {
        Some(index) => columns.claim_index(index),
        None => columns,
    };
    Ok(Args {
        backend: backend.ok_or("--backend is required")?,
        table,
        columns,
        out: out.unwrap_or_else(|| "migrations".to_owned()),
        name,
    })
}

/// `COLUMN=VALUE[:KEY]`.
fn claim_index_of(spec: &str) -> Result<ClaimIndex, String> {
    let (column, rest) = spec
        .split_once('=')
        .ok_or("--claim-index wants COLUMN=VALUE[:KEY]")?;
    Ok(match rest.split_once(':') {
        Some((value, key)) => ClaimIndex::rows_where(column, value).in_order_of(key),
        None => ClaimIndex::rows_where(column, rest),
    })
}

/// Writes the migration for backend `DB`, and says where.
fn write<DB: LeaseBackend>(args: &Args) -> Result<(), String> {
    let name = args.name.clone().unwrap_or_else(|| {
        // A version for diesel to order migrations by, not a lease decision: the local clock is right here.
        #[allow(clippy::disallowed_methods)]
        let created = chrono::Utc::now();
        format!(
            "{}_lease_columns_{}",
            created.format("%Y-%m-%d-%H%M%S"),
            args.table
        )
    });
    let path = args
        .columns
        .write_migration::<DB>(&args.out, &name)
        .map_err(|e| e.to_string())?;
    println!("wrote {0}/up.sql and {0}/down.sql", path.display());
    Ok(())
}

fn run(args: &Args) -> Result<(), String> {
    match args.backend.as_str() {
        #[cfg(feature = "postgres")]
        "postgres" => write::<diesel::pg::Pg>(args),
        #[cfg(feature = "mysql")]
        "mysql" => write::<diesel::mysql::Mysql>(args),
        #[cfg(feature = "sqlite")]
        "sqlite" => write::<diesel::sqlite::Sqlite>(args),
        // Reached only when that backend's feature is off.
        #[allow(unreachable_patterns)]
        feature @ ("postgres" | "mysql" | "sqlite") => Err(format!(
            "the {feature} backend needs its feature: cargo run --example lease_columns --features {feature} -- .."
        )),
        other => Err(format!("unknown backend {other:?}: postgres, mysql or sqlite")),
    }
}

fn main() -> ExitCode {
    match parse(std::env::args().skip(1)).and_then(|args| run(&args)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}\n{USAGE}");
            ExitCode::FAILURE
        }
    }
}
