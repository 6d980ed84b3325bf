//! Measurement 7's section of the page: instructions per claim cycle, the cost centres and the
//! costliest functions.
use std::fmt::Write as _;

use crate::results::Profile;
use crate::text::number;

/// The profile's tables, below the section's rows.
pub fn markdown(profile: &Profile) -> String {
    let mut md = String::new();
    let _ = writeln!(
        md,
        "{} ({} cycles per variant, SQLite WAL file, instructions counted only inside the cycle loop).\n",
        profile.valgrind, profile.cycles
    );
    md.push_str("| Variant | Instructions per cycle | ÷ library |\n|---|---:|---:|\n");
    let library = profile.per_cycle.first().map_or(f64::NAN, |(_, ir)| *ir);
    for (name, ir) in &profile.per_cycle {
        let _ = writeln!(
            md,
            "| {name} | {} | {:.3}x |",
            number(*ir, ""),
            ir / library
        );
    }
    let via_diesel = profile.per_cycle.get(2).map_or(f64::NAN, |(_, ir)| *ir);
    md.push_str("\nWhere the claim cycle spends its instructions: the inclusive cost of each entry point, per cycle and as a share of the cycle (the rest is Diesel's bookkeeping, row decoding, allocation and the library's own code):\n\n");
    md.push_str("| Cost centre | Library | Share | Library via diesel::update | Share |\n|---|---:|---:|---:|---:|\n");
    for (what, now, before) in &profile.centres {
        let _ = writeln!(
            md,
            "| {what} | {} | {:.1} % | {} | {:.1} % |",
            number(*now, ""),
            now / library * 100.0,
            number(*before, ""),
            before / via_diesel * 100.0
        );
    }
    md.push_str("\nThe library cycle's costliest functions, inclusive (a function's cost includes its callees', so shares overlap):\n\n");
    md.push_str("| Function | Instructions per cycle | Share of the cycle |\n|---|---:|---:|\n");
    for (function, ir, share) in &profile.top {
        let _ = writeln!(
            md,
            "| `{}` | {} | {:.1} % |",
            function.replace('|', "\\|"),
            number(*ir, ""),
            share * 100.0
        );
    }
    md
}
