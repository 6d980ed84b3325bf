//! The measurements by number: the number `--only` takes, each row of the results carries and
//! the page heads its section with. A leaf: it imports no other file.

pub const OVERHEAD: u32 = 1;
pub const PGBENCH: u32 = 2;
pub const TURNS: u32 = 3;
pub const HOLDERS: u32 = 4;
pub const CONTENTION: u32 = 5;
/// Measurement 1 on SQLite.
pub const SQLITE: u32 = 6;
pub const PROFILE: u32 = 7;
pub const BATCH: u32 = 8;
pub const KEEPER: u32 = 9;
pub const POOLER: u32 = 10;
pub const GROWTH: u32 = 11;
pub const COMMITS: u32 = 12;
pub const PEER: u32 = 13;
pub const CHURN: u32 = 14;
pub const HORIZON: u32 = 15;
pub const WRITES: u32 = 16;
