//! How the tables' numbers and cells are written: rounded for reading,
//! and laid out as Markdown or CSV.

use std::fmt::Write as _;

/// A number for reading: about four significant digits, no exponent.
pub fn readable(v: f64) -> String {
    if !v.is_finite() {
        return if v.is_nan() { "-".into() } else { "inf".into() };
    }
    let a = v.abs();
    let decimals = if a == 0.0 || a >= 1000.0 {
        0
    } else if a >= 100.0 {
        1
    } else if a >= 10.0 {
        2
    } else if a >= 1.0 {
        3
    } else {
        // Four significant digits below 1.
        (3 - a.log10().floor() as i32).clamp(3, 9) as usize
    };
    format!("{v:.decimals$}")
}

/// A whole number with thousands separators, for big counts.
pub fn grouped(v: f64) -> String {
    if !v.is_finite() {
        return readable(v);
    }
    let digits = format!("{:.0}", v.abs());
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if v < 0.0 {
        format!("-{out}")
    } else {
        out
    }
}

fn md_escape(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

pub(super) fn markdown_table(head: &[String], body: &[Vec<String>], out: &mut String) {
    let numeric = |i: usize| {
        body.iter().all(|r| {
            r[i].is_empty() || r[i].replace(',', "").parse::<f64>().is_ok() || r[i] == "inf"
        }) && body.iter().any(|r| !r[i].is_empty())
    };
    let _ = writeln!(
        out,
        "| {} |",
        head.iter()
            .map(|h| md_escape(h))
            .collect::<Vec<_>>()
            .join(" | ")
    );
    let _ = writeln!(
        out,
        "|{}|",
        (0..head.len())
            .map(|i| if numeric(i) { "---:" } else { "---" })
            .collect::<Vec<_>>()
            .join("|")
    );
    for r in body {
        let _ = writeln!(
            out,
            "| {} |",
            r.iter()
                .map(|c| md_escape(c))
                .collect::<Vec<_>>()
                .join(" | ")
        );
    }
}

pub(super) fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

pub(crate) fn csv_table(head: &[String], body: &[Vec<String>], out: &mut String) {
    let line = |cells: &[String]| {
        cells
            .iter()
            .map(|c| csv_field(c))
            .collect::<Vec<_>>()
            .join(",")
    };
    let _ = writeln!(out, "{}", line(head));
    for r in body {
        let _ = writeln!(out, "{}", line(r));
    }
}
