//! What measurement 7 found: instructions per claim cycle, the costliest functions, the cost
//! centres, as the report shows them.
use std::fmt::Write as _;

#[derive(Debug, Clone)]
pub struct Profile {
    pub cycles: usize,
    /// Instructions (Ir) per claim cycle of each variant.
    pub per_cycle: Vec<(&'static str, f64)>,
    /// The library cycle's costliest functions, inclusive: (function, Ir per cycle, share).
    pub top: Vec<(String, f64, f64)>,
    /// Cost centres: (what, Ir per cycle of the library, of the library via diesel::update).
    pub centres: Vec<(&'static str, f64, f64)>,
    pub valgrind: String,
}

impl Profile {
    pub fn markdown(&self) -> String {
        let mut md = String::new();
        let _ = writeln!(
            md,
            "{} ({} cycles per variant, SQLite WAL file, instructions counted only inside the cycle loop).\n",
            self.valgrind, self.cycles
        );
        md.push_str("| Variant | Instructions per cycle | ÷ library |\n|---|---:|---:|\n");
        let library = self.per_cycle.first().map_or(f64::NAN, |(_, ir)| *ir);
        for (name, ir) in &self.per_cycle {
            let _ = writeln!(
                md,
                "| {name} | {} | {:.3}x |",
                crate::text::number(*ir, ""),
                ir / library
            );
        }
        let via_diesel = self.per_cycle.get(2).map_or(f64::NAN, |(_, ir)| *ir);
        md.push_str("\nWhere the claim cycle spends its instructions: the inclusive cost of each entry point, per cycle and as a share of the cycle (the rest is Diesel's bookkeeping, row decoding, allocation and the library's own code):\n\n");
        md.push_str("| Cost centre | Library | Share | Library via diesel::update | Share |\n|---|---:|---:|---:|---:|\n");
        for (what, now, before) in &self.centres {
            let _ = writeln!(
                md,
                "| {what} | {} | {:.1} % | {} | {:.1} % |",
                crate::text::number(*now, ""),
                now / library * 100.0,
                crate::text::number(*before, ""),
                before / via_diesel * 100.0
            );
        }
        md.push_str("\nThe library cycle's costliest functions, inclusive (a function's cost includes its callees', so shares overlap):\n\n");
        md.push_str(
            "| Function | Instructions per cycle | Share of the cycle |\n|---|---:|---:|\n",
        );
        for (function, ir, share) in &self.top {
            let _ = writeln!(
                md,
                "| `{}` | {} | {:.1} % |",
                function.replace('|', "\\|"),
                crate::text::number(*ir, ""),
                share * 100.0
            );
        }
        md
    }

    pub fn json(&self) -> String {
        let per_cycle: Vec<String> = self
            .per_cycle
            .iter()
            .map(|(name, ir)| format!("{{\"variant\": \"{name}\", \"ir_per_cycle\": {ir:.1}}}"))
            .collect();
        let top: Vec<String> = self
            .top
            .iter()
            .map(|(function, ir, share)| {
                format!(
                    "{{\"function\": \"{}\", \"ir_per_cycle\": {ir:.1}, \"share\": {share:.4}}}",
                    function.replace('\\', "\\\\").replace('"', "\\\"")
                )
            })
            .collect();
        let centres: Vec<String> = self
            .centres
            .iter()
            .map(|(what, now, cached)| {
                format!("{{\"centre\": \"{what}\", \"ir_per_cycle\": {now:.1}, \"ir_per_cycle_cached\": {cached:.1}}}")
            })
            .collect();
        format!(
            "{{\"cycles\": {}, \"per_cycle\": [{}], \"cost_centres\": [{}], \"top_inclusive\": [{}]}}",
            self.cycles,
            per_cycle.join(", "),
            centres.join(", "),
            top.join(", ")
        )
    }
}
