//! What running a claim gives back: the rows won with their claim, or why not.
mod batch;
mod claimed;
mod refusal;

pub use batch::Batch;
pub use claimed::{Claimed, Won};
pub(crate) use refusal::{holder, read_why, WhyRead};
pub use refusal::{Holder, LeaseHolder, Refusal, Refused};
