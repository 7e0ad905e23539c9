//! The load curve's section (achieved rate and latency against the
//! target, the knee) and every run's percentile spectra side by side.

use std::fmt::Write as _;

use sojourn_core::op::OpKind;
use sojourn_store::RunRecord;

use super::page::{html_table, kind_title, Page, PCT_COLORS, PCT_NAMES};
use crate::curve::{self, Curve};
use crate::run::{self, Latency};
use crate::svg::{esc, short_number, Axis, Chart, Mark, Series, PALETTE};
use crate::tables;

pub(super) fn curve_section(p: &mut Page, c: &Curve, runs: &[RunRecord], names: &[String]) {
    // A point's run as the page names it (points carry the short id).
    let name_of = |short: &str| {
        runs.iter()
            .position(|r| run::short_id(r) == short)
            .map_or_else(|| short.to_string(), |i| names[i].clone())
    };
    let _ = write!(
        p.html,
        "<h3>{}</h3>\n<p class=\"note\">Each point is one run at its target rate (offered load); \
         past the knee the database no longer keeps up, operations queue in the client and \
         response time takes off while service time may not.</p>\n<div class=\"grid\">",
        esc(&c.title)
    );
    let mut kinds: Vec<Option<OpKind>> = c.kinds.iter().copied().map(Some).collect();
    if kinds.len() > 1 {
        kinds.push(None);
    }
    let (unit, div) = (p.unit.name(), p.unit.ns());
    for kind in kinds {
        let mut series = Vec::new();
        for (li, lat) in [Latency::Response, Latency::Service]
            .into_iter()
            .enumerate()
        {
            let idx = if lat == Latency::Service { 0 } else { 1 };
            for (qi, name) in PCT_NAMES.iter().enumerate() {
                let pts = c
                    .points
                    .iter()
                    .map(|pt| {
                        (
                            pt.target,
                            pt.latency.get(&kind).map_or(f64::NAN, |l| l[idx][qi] / div),
                        )
                    })
                    .collect();
                let s = Series::line(format!("{} {name}", lat.name()), PCT_COLORS[qi], pts)
                    .with_markers();
                series.push(if li == 1 { s.dashed() } else { s });
            }
        }
        let mut marks = Vec::new();
        if let Some(k) = c.knee {
            let knee = &c.points[k];
            marks.push(Mark::VLine {
                x: knee.target,
                label: format!(
                    "knee {} ops/s (target {})",
                    short_number(knee.achieved),
                    short_number(knee.target)
                ),
                color: "#009E73",
            });
        }
        for slo in &c.slos {
            if slo.kind == kind || slo.kind.is_none() {
                marks.push(Mark::HLine {
                    y: slo.limit_ns as f64 / div,
                    label: format!("SLO {slo}"),
                    color: "#7a0000",
                });
            }
        }
        p.chart(&Chart {
            kind: "latency-throughput",
            title: format!("{}: latency against throughput", kind_title(kind)),
            x: Axis::zero_based("offered throughput: the run's target (operations/s)"),
            y: Axis::log(format!("latency ({unit}, log scale)")),
            series,
            marks,
        });
    }
    p.html.push_str("</div>\n");
    // The points as numbers too.
    let head: Vec<String> = [
        "run".to_string(),
        "target ops/s".to_string(),
        "achieved ops/s".to_string(),
        format!("response p99 {unit}"),
        format!("service p99 {unit}"),
        "sustained".to_string(),
    ]
    .to_vec();
    let body: Vec<Vec<String>> = c
        .points
        .iter()
        .enumerate()
        .map(|(i, pt)| {
            let l = pt.latency.get(&None);
            vec![
                name_of(&pt.run),
                tables::readable(pt.target),
                tables::readable(pt.achieved),
                l.map_or("-".into(), |l| tables::readable(l[1][1] / div)),
                l.map_or("-".into(), |l| tables::readable(l[0][1] / div)),
                format!(
                    "{}{}",
                    if pt.sustained { "yes" } else { "no" },
                    if c.knee == Some(i) { " (knee)" } else { "" }
                ),
            ]
        })
        .collect();
    html_table(p, &head, &body);
    let _ = writeln!(
        p.html,
        "<p class=\"note\">{}</p>",
        if c.session.is_some() {
            "Knee: the step with the highest achieved rate that the capacity search judged \
             sustained (at least 95% of the offered load served, errors under the limit, every \
             SLO held with its 95% confidence interval)."
                .to_string()
        } else {
            format!(
                "Knee: the last run, by target, before the first that achieved under 95% of its \
                 target or whose p99 response time exceeded {} times that of the lightest load.",
                curve::TAKE_OFF
            )
        }
    );
}

/// Per operation and latency, the spectrum of every run that has the
/// operation, each named as the page names it.
pub(super) fn spectra_section(p: &mut Page, runs: &[RunRecord], names: &[String]) {
    let refs: Vec<&RunRecord> = runs.iter().collect();
    let kinds = run::kinds_of(&refs);
    let totals: Vec<_> = runs.iter().map(run::totals).collect();
    let (unit, div) = (p.unit.name(), p.unit.ns());
    p.html.push_str(
        "<section id=\"spectra\"><h2>Percentile spectrum of every run</h2>\n<div class=\"grid\">",
    );
    for kind in kinds {
        // Colours by the run's place on the page, the same in every chart.
        let having: Vec<usize> = (0..runs.len())
            .filter(|&i| totals[i].op(kind).is_some_and(|o| o.count() > 0))
            .collect();
        for lat in [Latency::Response, Latency::Service] {
            let series = having
                .iter()
                .map(|&i| {
                    let h = run::histogram(&totals[i], kind, lat);
                    Series::line(
                        names[i].clone(),
                        PALETTE[i % PALETTE.len()],
                        run::spectrum(&h)
                            .into_iter()
                            .map(|(x, y)| (x, y / div))
                            .collect(),
                    )
                })
                .collect();
            p.chart(&Chart {
                kind: "spectrum",
                title: format!(
                    "{}: {} time percentile spectrum, {}",
                    kind_title(Some(kind)),
                    lat.name(),
                    match having.as_slice() {
                        _ if having.len() == runs.len() => "all runs".to_string(),
                        [only] => format!("{} only", names[*only]),
                        _ => format!("the {} runs that have it", having.len()),
                    }
                ),
                x: Axis::spectrum(),
                y: Axis::log(format!("{} time ({unit}, log scale)", lat.name())),
                series,
                marks: Vec::new(),
            });
        }
    }
    p.html.push_str("</div></section>\n");
}
