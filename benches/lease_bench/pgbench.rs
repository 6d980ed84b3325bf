//! Measurement 2, the server's limit: the claim cycle through pgbench against the library on N
//! threads. pgbench runs the statements the library sends, their very text, each bind a pgbench
//! variable, which `-M prepared` sends as a parameter of a statement prepared once per
//! connection.
use std::cell::{Cell, RefCell};
use std::time::Duration;

use diesel_lease::Claim;

use crate::backend::{self, Backend, Ops, Pg};
use crate::measure::{interleave, median, paired_ratio, warm_up, Variant};
use crate::results::{Better, Goal, Results, Row};
use crate::shared::{check, Options, Res};
use crate::suite::{lease, throughput, LEASE_MICROS, OWNER, THREADS};

/// The measurement's number, in `--only` and in docs/benchmarks.md.
pub const SECTION: u32 = crate::measurements::PGBENCH;

/// The goal (issue 23): the library's rate at least this share of pgbench's.
const GOAL: f64 = 0.95;

/// How long each variant runs once, untimed, before the rounds: both sides warm.
const WARM_UP: Duration = Duration::from_secs(1);

/// `sql` with its placeholders `$1`, `$2`, .. replaced by `:name` of `names`, in order; checked
/// to give `sql` back when pgbench numbers the variables again, as `-M prepared` does (each
/// variable in order of appearance).
fn with_variables(sql: &str, names: &[&str]) -> Res<String> {
    let mut script = sql.to_owned();
    // From the last, so that `$1` does not match the start of `$10`.
    for (n, name) in names.iter().enumerate().rev() {
        let placeholder = format!("${}", n + 1);
        check(
            script.matches(&placeholder).count() == 1,
            "a placeholder that is not once in the statement",
        )?;
        script = script.replace(&placeholder, &format!(":{name}"));
    }
    let mut renumbered = script.clone();
    for (n, name) in names.iter().enumerate() {
        renumbered = renumbered.replacen(&format!(":{name}"), &format!("${}", n + 1), 1);
    }
    check(
        renumbered == sql,
        "the pgbench script does not give back the library's statement",
    )?;
    Ok(script)
}

/// The cycle for pgbench: client `c` works on row `c + 1` with a random token each cycle; the
/// strings are `-D` variables.
fn script() -> Res<String> {
    // The caller's changes (the status) come first in the SET list, as the library writes it.
    let claim = with_variables(Pg::CLAIM, &["running", "owner", "token", "id", "lease"])?;
    // The token twice: the library compares it exactly, beside the plain `=`.
    let renew = with_variables(Pg::RENEW, &["id", "token", "token"])?;
    let release = with_variables(Pg::RELEASE, &["queued", "id", "token", "token"])?;
    Ok(format!(
        "\\set id :client_id + 1\n\\set token random(1000000000000000000, 9000000000000000000)\n\
         \\set lease {LEASE_MICROS}\n{claim};\n{renew};\n{release};\n"
    ))
}

/// Fails unless every row of the first `clients` that pgbench left held is held as its cycle
/// claims one (by its owner, running): a script whose variables are named out of order claims
/// with the wrong values, and then its guarded renewals and releases change nothing and its
/// next claims are refused, a cycle without a write, which runs several times faster.
fn held_as_claimed(conn: &mut diesel::PgConnection, clients: usize) -> Res<()> {
    use diesel::RunQueryDsl;
    #[derive(diesel::QueryableByName)]
    struct Count {
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        rows: i64,
    }
    let wrong: Count = diesel::sql_query(
        "SELECT COUNT(*) AS rows FROM bench_leases WHERE id <= $1 AND claim_token IS NOT NULL \
         AND (owner IS DISTINCT FROM $2 OR status <> 'running')",
    )
    .bind::<diesel::sql_types::BigInt, _>(i64::try_from(clients)?)
    .bind::<diesel::sql_types::Text, _>(OWNER)
    .get_result(conn)?;
    check(
        wrong.rows == 0,
        "pgbench claimed rows with values other than the cycle's: its variables are out of order",
    )
}

/// Runs pgbench for `secs` at `clients`; its transactions (cycles) per second.
fn rate(url: &str, script: &std::path::Path, clients: usize, secs: u64) -> Res<f64> {
    let n = clients.to_string();
    let output = std::process::Command::new("pgbench")
        .args(["-n", "-M", "prepared", "-c", &n, "-j", &n])
        .args(["-T", &secs.to_string()])
        .args(["-D", &format!("owner={OWNER}"), "-D", "running=running"])
        .args(["-D", "queued=queued", "-f"])
        .arg(script)
        .arg(url)
        .output()?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let tps = stdout
        .lines()
        .find_map(|line| line.strip_prefix("tps = "))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|tps| tps.parse::<f64>().ok());
    let failed = stdout
        .lines()
        .find_map(|line| line.strip_prefix("number of failed transactions: "))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse::<u64>().ok())
        .unwrap_or(0);
    match tps {
        Some(tps) if output.status.success() && failed == 0 => Ok(tps),
        _ => Err(format!(
            "pgbench failed: {stdout}{}",
            String::from_utf8_lossy(&output.stderr)
        )
        .into()),
    }
}

pub fn run(url: &str, options: &Options, results: &mut Results) -> Res<()> {
    println!("\n== 2. PostgreSQL: the cycle through pgbench -M prepared against the library");
    let version = crate::text::command_line("pgbench", &["--version"]);
    if !version.starts_with("pgbench") {
        results.note("pgbench is not installed: measurement 2 skipped");
        return Ok(());
    }
    results.machine.push(("pgbench".into(), version));
    let plan = &options.plan;
    let mut conn = backend::connect::<Pg>(url)?;
    Pg::setup(&mut conn)?;
    let script_path =
        std::env::temp_dir().join(format!("bench-lease-pgbench-{}.sql", std::process::id()));
    let lease = lease()?;
    let outcome = (|| -> Res<()> {
        std::fs::write(&script_path, script()?)?;
        results.note(format!(
            "2: pgbench runs the library's three statements, their text unchanged, every bind a \
             variable (-M prepared: one statement prepared per connection, its parameter types \
             inferred by the server: varchar for the strings, bigint for the key, double \
             precision for the lease; Diesel binds text and bigint); {} rounds of {} s per \
             variant and client count, after {} s of each untimed",
            plan.pgbench_rounds,
            plan.pgbench_secs,
            WARM_UP.as_secs()
        ));
        for clients in THREADS {
            let plain = backend::pool::<Pg>(url, clients as u32, false)?;
            let tested = backend::pool::<Pg>(url, clients as u32, true)?;
            let secs = Cell::new(plan.pgbench_secs);
            let cycle = |c: &mut <Pg as Backend>::Conn, t: usize| {
                Pg::lib_cycle(c, t as i64 + 1, &Claim::new(OWNER)?, lease)
            };
            let via_diesel = |c: &mut <Pg as Backend>::Conn, t: usize| {
                Pg::lib_cycle_diesel_update(c, t as i64 + 1, &Claim::new(OWNER)?, lease)
            };
            let conn = RefCell::new(&mut conn);
            let (secs, conn, script_path) = (&secs, &conn, &script_path);
            let slice = || Duration::from_secs(secs.get());
            let mut variants = [
                Variant::new("pgbench", || {
                    Pg::free_rows(&mut conn.borrow_mut())?;
                    let rate = rate(url, script_path, clients, secs.get())?;
                    held_as_claimed(&mut conn.borrow_mut(), clients)?;
                    Ok(rate)
                }),
                Variant::new("library", || {
                    Pg::free_rows(&mut conn.borrow_mut())?;
                    throughput::<Pg>(&plain, clients, slice(), false, None, &cycle)
                }),
                Variant::new("library, r2d2 checkout test", || {
                    Pg::free_rows(&mut conn.borrow_mut())?;
                    throughput::<Pg>(&tested, clients, slice(), false, None, &cycle)
                }),
                Variant::new("library via diesel::update", || {
                    Pg::free_rows(&mut conn.borrow_mut())?;
                    throughput::<Pg>(&plain, clients, slice(), false, None, &via_diesel)
                }),
            ];
            secs.set(WARM_UP.as_secs());
            warm_up(&mut variants)?;
            secs.set(plan.pgbench_secs);
            let samples = interleave(plan.pgbench_rounds, &mut variants)?;
            for (k, library_name, goal) in [
                (1, "library", Some(Goal::RatioAtLeast(GOAL))),
                (2, "library, r2d2 checkout test", None),
                (3, "library via diesel::update", None),
            ] {
                let (ratio, min, max) = paired_ratio(&samples[k], &samples[0]);
                results.push(Row {
                    section: SECTION,
                    backend: Pg::NAME.into(),
                    figure: format!("cycles/s, {clients} client(s)"),
                    baseline_name: "pgbench -M prepared".into(),
                    baseline: median(&samples[0]),
                    library_name: library_name.into(),
                    library: median(&samples[k]),
                    unit: "cycles/s".into(),
                    ratio,
                    range: Some((min, max)),
                    better: Better::Higher,
                    goal,
                });
            }
        }
        Ok(())
    })();
    let _ = std::fs::remove_file(&script_path);
    let cleaned = Pg::teardown(&mut conn);
    outcome.and(cleaned)
}
