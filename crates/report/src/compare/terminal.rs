//! A comparison as a text table for a terminal.

use std::fmt::Write as _;

use super::model::{Comparison, Figure, Test, Verdict};
use crate::tables::readable;

/// How to draw the text table.
#[derive(Copy, Clone, Debug, Default)]
pub struct TextStyle {
    /// ANSI colours on significant changes.
    pub color: bool,
}

fn ci_text(ci: Option<[f64; 2]>) -> String {
    ci.map_or(String::new(), |[lo, hi]| {
        format!("[{}, {}]", readable(lo), readable(hi))
    })
}

fn test_text(f: &Figure) -> String {
    match &f.test {
        Test::Welch {
            p,
            batches,
            batch_size,
            ..
        } => {
            let p = if *p < 0.0001 {
                "p<0.0001".to_string()
            } else {
                format!("p={p:.4}")
            };
            let sizes = if batch_size == &[1, 1] {
                String::new()
            } else {
                format!(" of {}/{} intervals", batch_size[0], batch_size[1])
            };
            format!("Welch {p}, {}/{} batches{sizes}", batches[0], batches[1])
        }
        Test::Intervals { .. } => {
            if f.beyond_sampling_error {
                "95% CIs disjoint".into()
            } else {
                "95% CIs overlap".into()
            }
        }
        Test::None { reason } => format!("not tested: {reason}"),
    }
}

/// The comparison as a text table for a terminal: significant changes
/// marked `*` and named better or worse, and, with colour, green or red.
pub fn text(c: &Comparison, style: TextStyle) -> String {
    let mut o = String::new();
    for (name, r) in [("A", &c.a), ("B", &c.b)] {
        let _ = writeln!(
            o,
            "{name}: {}  {} {} on {}  {}  {:.1} s measured in {} intervals of {} s ({})",
            r.id,
            r.phase,
            r.workload,
            r.backend,
            r.target.map_or("closed loop".to_string(), |t| format!(
                "target {} ops/s",
                readable(t)
            )),
            r.measured_s,
            r.intervals,
            r.interval_s,
            r.status
        );
    }
    for cav in &c.caveats {
        let _ = writeln!(o, "caveat: {cav}");
    }
    let rows: Vec<(String, [String; 8], &Figure)> = c
        .operations
        .iter()
        .flat_map(|op| {
            op.figures.iter().map(move |f| {
                (
                    op.operation.clone(),
                    [
                        format!("{} ({})", f.metric, f.unit),
                        readable(f.a),
                        ci_text(f.a_ci95),
                        readable(f.b),
                        ci_text(f.b_ci95),
                        f.change_pct.map_or("-".into(), |p| format!("{p:+.1}%")),
                        match f.verdict {
                            Verdict::Better => "* better".into(),
                            Verdict::Worse => "* worse".into(),
                            Verdict::Unchanged if f.beyond_sampling_error => "~".into(),
                            Verdict::Unchanged => String::new(),
                        },
                        test_text(f),
                    ],
                    f,
                )
            })
        })
        .collect();
    let head = ["", "A", "A 95% CI", "B", "B 95% CI", "change", "", "test"];
    let mut widths = head.map(|h| h.chars().count());
    for (_, cells, _) in &rows {
        for (w, c) in widths.iter_mut().zip(cells) {
            *w = (*w).max(c.chars().count());
        }
    }
    let pad = |s: &str, w: usize, right: bool| {
        let n = w.saturating_sub(s.chars().count());
        if right {
            format!("{}{s}", " ".repeat(n))
        } else {
            format!("{s}{}", " ".repeat(n))
        }
    };
    let mut current = String::new();
    for (op, cells, f) in &rows {
        if *op != current {
            current = op.clone();
            let _ = writeln!(o);
            let mut line = pad(&op.to_ascii_uppercase(), widths[0], false);
            for (i, h) in head.iter().enumerate().skip(1) {
                line.push_str("  ");
                line.push_str(&pad(h, widths[i], i != 2 && i != 4 && i < 6));
            }
            let _ = writeln!(o, "{}", line.trim_end());
        }
        let mut line = String::new();
        for (i, cell) in cells.iter().enumerate() {
            if i > 0 {
                line.push_str("  ");
            }
            let right = matches!(i, 1 | 3 | 5);
            let mut text = pad(cell, widths[i], right);
            if style.color && (i == 5 || i == 6) && (f.significant || f.beyond_sampling_error) {
                let code = match f.verdict {
                    Verdict::Better => "32",
                    Verdict::Worse => "31",
                    Verdict::Unchanged => "33",
                };
                text = format!("\x1b[1;{code}m{text}\x1b[0m");
            }
            line.push_str(&text);
        }
        let _ = writeln!(o, "{}", line.trim_end());
    }
    let _ = writeln!(o);
    let _ = writeln!(
        o,
        "~ beyond each run's own sampling error (not a verdict on the configurations). {}",
        c.method
    );
    o
}
