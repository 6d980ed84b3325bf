//! The types users write by hand: a holder's statements, named by the holder, in the bound of
//! code generic over the connection, and the SQL nodes a statement composed by hand is made of.
//!
//! The type of every other statement the library builds is named after the method that builds
//! it, as Diesel's own `dsl` names Diesel's: `table.claim_row(key, lease)` is a `ClaimRow`,
//! `.by(&claim)` a `By`, `.set(changes)` a `Set`, `table.taken(&claim)` a `Taken`. Let
//! `#[diesel::dsl::auto_type(dsl_path = "diesel_lease::dsl")]` write them: it infers the type of
//! a function that builds a statement, Diesel's parts and the library's alike, and names the
//! function's type after it. So they are not listed here, and Diesel's own `dsl` is re-exported
//! here unlisted too. [Chapter 8 of the guide](crate::guide::ch08_generic_code) shows both ways.
mod methods;
pub(crate) mod parts;

// Diesel's own, so that `auto_type(dsl_path = "diesel_lease::dsl")` finds Diesel's parts too;
// hidden, since they are Diesel's to document.
#[doc(hidden)]
pub use diesel::dsl::*;
// The library's, by the methods that build them: `auto_type` writes them. `Set` and
// `Returning` are named, so that they stand for the library's statements over Diesel's glob.
#[doc(hidden)]
pub use methods::*;
#[doc(hidden)]
pub use methods::{Returning, Set};

use crate::query::{Guarded, Renewing, Writing};
use crate::sql::NoChanges;
use crate::Holds;
use parts::Releases;

// The nodes of a statement composed by hand: the database's clock, a typed `NULL`, a text
// column compared byte for byte.
pub use crate::sql::{Now, Null, TextIs};

/// The type of `holder.renew()`, named by the holder `H`: a row won ([`Won`](crate::Won), whose
/// statements answer `bool`, whether it still held its row), a batch, rows named by key, kept
/// rows (which answer with the keys of the rows still held).
///
/// ```
/// # include!("../doctest_setup.rs");
/// use diesel::prelude::*;
/// use diesel_lease::prelude::*;
/// use diesel_lease::dsl;
///
/// type Held = Won<Job, jobs::table>;
///
/// /// A holder's round on any connection: renew its row, then finish it. One bound a statement.
/// fn renew_then_finish<C>(won: &Held, conn: &mut C) -> Result<bool, diesel_lease::Error>
/// where
///     for<'q> dsl::Renew<Held>: LeaseQuery<'q, C, i64>,
///     for<'q> dsl::Release<Held, diesel::dsl::Eq<jobs::status, &'static str>>: LeaseQuery<'q, C, i64>,
/// {
///     Ok(won.renew().run(conn)? && won.release().set(jobs::status.eq("done")).run(conn)?)
/// }
///
/// # fn main() -> Result<(), diesel_lease::Error> {
/// # let conn = &mut jobs_connection()?;
/// let won = jobs::table.claim_row(1, Lease::from_secs(30)?).by(&Claim::new("w")?).run::<Job>(conn)?.won().expect("free");
/// assert!(renew_then_finish(&won, conn)?);
/// # Ok(())
/// # }
/// ```
pub type Renew<H> = Guarded<Of<H>, Renewing, NoChanges<Of<H>>, <H as Holds>::Answer>;

/// The type of `holder.update().set(changes)`, named by the holder `H` (see [`Renew`]).
///
/// ```
/// # include!("../doctest_setup.rs");
/// use diesel::prelude::*;
/// use diesel_lease::prelude::*;
/// use diesel_lease::dsl;
///
/// type Start = diesel::dsl::Eq<jobs::status, &'static str>;
///
/// fn start(held: &HeldRows<jobs::table>) -> dsl::Write<HeldRows<jobs::table>, Start> {
///     held.update().set(jobs::status.eq("running"))
/// }
/// # fn main() -> Result<(), diesel_lease::Error> {
/// # let conn = &mut jobs_connection()?;
/// let claim = Claim::new("w")?;
/// jobs::table.claim_row(1, Lease::from_secs(30)?).by(&claim).run::<Job>(conn)?;
/// assert_eq!(start(&jobs::table.held_rows(&claim, [1])).run(conn)?, [1]);
/// # Ok(())
/// # }
/// ```
pub type Write<H, Changes> = Guarded<Of<H>, Writing, Changes, <H as Holds>::Answer>;

/// The type of `rows.release()`, with the caller's `.set(changes)` (none by default), named by
/// what the rows are: a holder `H` (see [`Renew`]), or rows named by who holds them
/// ([`OwnedRows`](crate::OwnedRows), released whatever their claims).
///
/// ```
/// # include!("../doctest_setup.rs");
/// use diesel_lease::prelude::*;
/// use diesel_lease::dsl;
///
/// fn give_back(held: &HeldRows<jobs::table>) -> dsl::Release<HeldRows<jobs::table>> {
///     held.release()
/// }
/// # fn main() -> Result<(), diesel_lease::Error> {
/// # let conn = &mut jobs_connection()?;
/// let claim = Claim::new("w")?;
/// jobs::table.claim_row(1, Lease::from_secs(30)?).by(&claim).run::<Job>(conn)?;
/// assert_eq!(give_back(&jobs::table.held_rows(&claim, [1])).run(conn)?, [1]);
/// # Ok(())
/// # }
/// ```
pub type Release<S, Changes = NoChanges<<S as Releases>::Table>> =
    <S as Releases>::Release<Changes>;

/// The table whose rows a holder holds.
type Of<H> = <H as Holds>::Table;
