//! The lease code path reads no application clock, and no database clock but the statement's.
use std::path::Path;

/// What must not appear in the library's code or its migrations, and why.
const FORBIDDEN: &[(&str, &str)] = &[
    ("Utc::now", "the application's clock"),
    ("Local::now", "the application's clock"),
    ("SystemTime::now", "the application's clock"),
    ("Instant::now", "the application's clock"),
    ("chrono::offset", "the application's clock or time zone"),
    (
        "dsl::now",
        "CURRENT_TIMESTAMP: the transaction's start on PostgreSQL",
    ),
    (
        "CURRENT_TIMESTAMP",
        "the transaction's start on PostgreSQL, the session's time zone on MySQL",
    ),
    (
        "now()",
        "the transaction's start on PostgreSQL, the session's time zone on MySQL",
    ),
    (
        "NOW()",
        "the transaction's start on PostgreSQL, the session's time zone on MySQL",
    ),
    ("localtime", "the session's time zone"),
    ("LOCALTIMESTAMP", "the session's time zone"),
    (
        "transaction_timestamp",
        "the transaction's start on PostgreSQL",
    ),
    ("SYSDATE", "the session's time zone on MySQL"),
    ("CURDATE", "the session's time zone on MySQL"),
    ("CURTIME", "the session's time zone on MySQL"),
    ("UNIX_TIMESTAMP", "a session-dependent conversion on MySQL"),
];

/// The library's own clock, `diesel_lease::now()`: the statement's time by the database's clock
/// (`statement_timestamp()`, `UTC_TIMESTAMP(6)`, SQLite's `'now'`), however the code names it.
/// It is taken out of a line before the line is searched for what is forbidden.
const OWN_CLOCK: &[&str] = &["diesel_lease::now()", "crate::now()", "sql::now()"];

fn code_lines(dir: &Path, found: &mut Vec<String>) {
    for entry in std::fs::read_dir(dir).expect("readable directory") {
        let path = entry.expect("directory entry").path();
        if path.is_dir() {
            code_lines(&path, found);
            continue;
        }
        let is_code = matches!(
            path.extension().and_then(|ext| ext.to_str()),
            Some("rs" | "sql")
        );
        if !is_code || path.ends_with("doctest_setup.rs") {
            continue;
        }
        // The monotonic clock is read there, and only there: a keeper's trust deadline, which can
        // only make it give a lease up sooner, never hold it longer, and how long a caller waits.
        let monotonic = path.ends_with("src/monotonic.rs");
        let text = std::fs::read_to_string(&path).expect("readable file");
        for (number, line) in text.lines().enumerate() {
            let code = line.trim_start();
            if code.starts_with("//") || code.starts_with("--") {
                continue; // comments may name what is forbidden, to say why
            }
            let code = OWN_CLOCK
                .iter()
                .fold(code.to_owned(), |code, own| code.replace(own, "own_clock"));
            for (pattern, why) in FORBIDDEN {
                let the_exception =
                    code == "Instant::now()" && matches!(*pattern, "Instant::now" | "now()");
                if code.contains(pattern) && !(monotonic && the_exception) {
                    found.push(format!(
                        "{}:{}: `{pattern}` reads {why}",
                        path.display(),
                        number + 1
                    ));
                }
            }
        }
    }
}

#[test]
fn the_library_and_its_migrations_read_only_the_statements_database_clock() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut found = Vec::new();
    code_lines(&root.join("src"), &mut found);
    for lock_crate in ["diesel-lease-agent", "diesel-lease-tasks"] {
        code_lines(&root.join(lock_crate).join("src"), &mut found);
        code_lines(&root.join(lock_crate).join("migrations"), &mut found);
    }
    assert!(found.is_empty(), "forbidden clocks:\n{}", found.join("\n"));
}

#[test]
fn clippy_forbids_the_application_clock_too() {
    let config = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("clippy.toml"))
        .expect("clippy.toml");
    for method in [
        "chrono::Utc::now",
        "std::time::SystemTime::now",
        "std::time::Instant::now",
        "diesel::dsl::now",
    ] {
        assert!(
            config.contains(method),
            "clippy.toml must disallow {method}"
        );
    }
}
