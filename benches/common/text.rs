//! Numbers and tools' versions as the report writes them.
use std::process::Command;

/// The first line of `program args`' output, or "not found".
pub fn command_line(program: &str, args: &[&str]) -> String {
    match Command::new(program).args(args).output() {
        Ok(output) => {
            let text = if output.stdout.is_empty() {
                output.stderr
            } else {
                output.stdout
            };
            String::from_utf8_lossy(&text)
                .lines()
                .next()
                .unwrap_or("")
                .trim()
                .to_owned()
        }
        Err(_) => "not found".into(),
    }
}

/// `value` in `unit`, readable.
pub fn number(value: f64, unit: &str) -> String {
    if !value.is_finite() {
        return "—".into();
    }
    let digits = if value.abs() >= 1000.0 || unit.is_empty() && value.fract() == 0.0 {
        0
    } else if value.abs() >= 100.0 {
        1
    } else {
        2
    };
    let formatted = format!("{value:.digits$}");
    let (int, frac) = formatted
        .split_once('.')
        .map_or((formatted.as_str(), None), |(i, f)| (i, Some(f)));
    let (sign, int) = int.strip_prefix('-').map_or(("", int), |i| ("-", i));
    let mut grouped = String::new();
    for (n, ch) in int.chars().enumerate() {
        if n > 0 && (int.len() - n) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(ch);
    }
    let mut out = format!("{sign}{grouped}");
    if let Some(frac) = frac {
        out.push('.');
        out.push_str(frac);
    }
    if !unit.is_empty() {
        out.push(' ');
        out.push_str(unit);
    }
    out
}
