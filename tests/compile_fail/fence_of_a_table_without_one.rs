include!("schema/jobs_and_other.rs");

// Only a table with a fence column gives a fence.
fn fence_of(won: &diesel_lease::Won<i64, jobs::table>) -> i64 {
    won.fence()
}

fn main() {
    let _ = fence_of;
}
