//! What running a claim gives back: the rows won with their claim, or why not.
mod batch;
mod claimed;
mod refusal;

pub use batch::Batch;
pub use claimed::{Claimed, Won};
pub(crate) use refusal::holder;
pub use refusal::{FilterNotRead, Holder, LeaseHolder, OutlivedLease, Refusal, Refused, Why};
