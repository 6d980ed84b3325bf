include!("schema/jobs_and_other.rs");

// A connection enum of Diesel's derive runs diesel-lease's statements once
// `diesel_lease::multi_connection!` says which connection each variant holds.
#[derive(diesel::MultiConnection)]
enum AnyConnection {
    Postgresql(diesel::PgConnection),
    Sqlite(diesel::SqliteConnection),
}

fn finish(conn: &mut AnyConnection, claim: &Claim) -> Result<Vec<i64>, diesel_lease::Error> {
    jobs::table.held_rows(claim, [1]).release().run(conn)
}

fn main() {}
