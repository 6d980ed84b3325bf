include!("../../../tests/compile_fail/schema/jobs_and_other.rs");
include!("../../../tests/compile_fail/schema/any_connection.rs");

// A pool's connection of a `multi_connection!` enum runs the agent locks as a native pool's does:
// `&mut pool.get()?` and `&mut *pool.get()?` alike.
use diesel_lease_agent::{AgentLocks, TurnRef};

diesel_lease_agent::agent_multi_connection!(AnyConnection {
    Postgresql(diesel::PgConnection),
    Sqlite(diesel::SqliteConnection),
});

#[allow(dead_code)]
fn turn(pool: &Pool<ConnectionManager<AnyConnection>>) -> Result<bool, Box<dyn std::error::Error>> {
    let (locks, turn) = (AgentLocks::new("node-a", Lease::from_secs(120)?)?, TurnRef::new("turn-1")?);
    locks.acquire(&mut pool.get()?, "chat-1", "user-1", &turn)?;
    Ok(locks.release(&mut *pool.get()?, "chat-1", "user-1", &turn)?)
}

fn main() {}
