//! The report's history (`sojourn report --history`): per figure its
//! points over the runs' `--by` label (or their start), the mean of each
//! regime between change points, the change points marked where they
//! start, and a table of them; every point links to its runs' sections.
//!
//! The chart is a live one like the charts over time: its x is the point's
//! position (1, 2, ...), which the page's script shows as the point's key
//! (`x.names`), and a click on a point opens its first run (`links`, by
//! position).

use std::fmt::Write as _;

use serde_json::json;

use super::page::{table_of, Page};
use crate::compare::Verdict;
use crate::history::{History, Series as FigureSeries};
use crate::svg::{esc, Axis, Chart, Mark, Series, PALETTE};

const WORSE: &str = "#D55E00";
const BETTER: &str = "#009E73";

pub(super) fn section(p: &mut Page, h: &History) {
    let over = h.by.as_deref().unwrap_or("run start");
    let _ = writeln!(
        p.html,
        "<section id=\"history\"><h2>History</h2>\n<p class=\"note\">Each point is the mean of \
         the runs that share its {}; a dashed line is the mean of a regime between change \
         points. A change point is kept when its p-value is below {} and it moves the figure \
         by more than {:.1}% (see docs/history.md). A click on a point opens its run.</p>",
        if h.by.is_some() {
            format!("<code>{}</code> label", esc(over))
        } else {
            "start (one run each)".to_string()
        },
        h.max_pvalue,
        h.min_change_pct
    );
    for note in &h.notes {
        let _ = writeln!(p.html, "<p class=\"note\">{}</p>", esc(note));
    }
    for s in h.series.iter().filter(|s| !s.points.is_empty()) {
        figure(p, s, over);
    }
    p.html.push_str("</section>\n");
}

fn figure(p: &mut Page, s: &FigureSeries, over: &str) {
    let _ = writeln!(p.html, "<h3>{} ({})</h3>", esc(&s.figure), esc(s.unit));
    let at = |i: usize| (i + 1) as f64;
    let means: Vec<(f64, f64)> = s
        .points
        .iter()
        .enumerate()
        .map(|(i, pt)| (at(i), pt.mean))
        .collect();
    // Each point at its regime's mean: the steps between change points,
    // broken where one ends (a gap half-way to the next point).
    let mut regimes = Vec::with_capacity(means.len() + s.changes.len());
    let mut starts: Vec<usize> = s.changes.iter().map(|c| c.index).collect();
    starts.insert(0, 0);
    starts.push(means.len());
    for w in starts.windows(2) {
        let part = &means[w[0]..w[1]];
        let mean = part.iter().map(|m| m.1).sum::<f64>() / part.len().max(1) as f64;
        if w[0] > 0 {
            regimes.push((at(w[0]) - 0.5, f64::NAN));
        }
        regimes.extend(part.iter().map(|&(x, _)| (x, mean)));
    }
    let marks = s
        .changes
        .iter()
        .map(|c| Mark::VLine {
            x: at(c.index) - 0.5,
            label: format!("{} {:+.1}%", c.key, c.change_pct),
            color: if c.verdict == Verdict::Worse {
                WORSE
            } else {
                BETTER
            },
        })
        .collect();
    let chart = Chart {
        kind: "history",
        title: format!("{} over {over}", s.figure),
        x: Axis {
            from_zero: false,
            ..Axis::zero_based(format!("{over} (point)"))
        },
        y: Axis::zero_based(format!("{} ({})", s.figure, s.unit)),
        series: vec![
            Series::line(s.figure.clone(), PALETTE[0], means).with_markers(),
            Series::line("regime mean", PALETTE[6], regimes).dashed(),
        ],
        marks,
    };
    let names: Vec<&str> = s.points.iter().map(|pt| pt.key.as_str()).collect();
    let links: Vec<&str> = s
        .points
        .iter()
        .map(|pt| pt.runs.first().map_or("", String::as_str))
        .collect();
    p.live_chart(&chart, |spec| {
        spec["x"]["names"] = json!(names);
        spec["links"] = json!(links);
    });
    changes_table(p, s);
    points_table(p, s);
}

fn changes_table(p: &mut Page, s: &FigureSeries) {
    if s.changes.is_empty() {
        let _ = writeln!(
            p.html,
            "<p class=\"note\">No change point in {} points.</p>",
            s.points.len()
        );
        return;
    }
    let head = [
        "change at",
        "before",
        "after",
        "change",
        "95% interval",
        "p-value",
        "verdict",
    ];
    table_of(p, &head, &s.changes, |c| {
        vec![
            c.key.clone(),
            c.before.to_string(),
            c.after.to_string(),
            format!("{:+.1}%", c.change_pct),
            c.change_ci95_pct
                .map(|[lo, hi]| format!("{lo:+.1}% .. {hi:+.1}%"))
                .unwrap_or_default(),
            format!("{:.2e}", c.p),
            if c.verdict == Verdict::Worse {
                "worse"
            } else {
                "better"
            }
            .to_string(),
        ]
    });
}

/// Every point with its runs, linked: the chart's clicks, without script.
fn points_table(p: &mut Page, s: &FigureSeries) {
    let _ = write!(
        p.html,
        "<details class=\"points\"><summary>{} points and their runs</summary>\
         <div class=\"scroll\"><table><thead><tr><th>point</th><th>key</th><th>runs</th>\
         <th>values ({unit})</th><th>mean ({unit})</th></tr></thead><tbody>",
        s.points.len(),
        unit = esc(s.unit)
    );
    for (i, pt) in s.points.iter().enumerate() {
        let runs: Vec<String> = pt
            .runs
            .iter()
            .map(|id| {
                format!(
                    "<a href=\"#run-{}\">{}</a>",
                    esc(id),
                    esc(&id.chars().take(8).collect::<String>())
                )
            })
            .collect();
        let values: Vec<String> = pt.values.iter().map(|v| format!("{v:.4}")).collect();
        let _ = write!(
            p.html,
            "<tr><td class=\"num\">{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{:.4}</td></tr>",
            i + 1,
            esc(&pt.key),
            runs.join(" "),
            values.join(", "),
            pt.mean
        );
    }
    p.html.push_str("</tbody></table></div></details>\n");
}
