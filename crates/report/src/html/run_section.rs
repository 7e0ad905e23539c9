//! One run's section of the HTML report: its facts, its failures in the
//! database's words, the database's counters, a rate profile's segments,
//! and its charts: throughput over time, waiting in the client (open
//! loop), and per operation its percentiles over time and its spectrum.

use std::fmt::Write as _;

use sojourn_core::histograms::Stats;
use sojourn_core::op::OpKind;
use sojourn_core::output::segments;
use sojourn_store::RunRecord;

use super::page::{html_table, kind_title, table_of, Page, PCT_COLORS, PCT_NAMES, PCT_QS, WAITING};
use crate::run::{self, Latency};
use crate::svg::{esc, Axis, Chart, Mark, Series, PALETTE};
use crate::tables;

/// The warm-up, as a span from the run's start to the end of its last
/// warm-up interval.
fn warmup_mark(r: &RunRecord) -> Vec<Mark> {
    let end = r
        .intervals
        .iter()
        .filter(|iv| iv.warmup)
        .map(|iv| (iv.start + iv.length).as_secs_f64())
        .fold(0.0, f64::max);
    if end > 0.0 {
        vec![Mark::Span {
            from: 0.0,
            to: end,
            label: "warm-up".into(),
        }]
    } else {
        Vec::new()
    }
}

fn fact(p: &mut Page, name: &str, value: &str) {
    let _ = write!(p.html, "<dt>{}</dt><dd>{}</dd>", esc(name), esc(value));
}

/// The database's own counters over the run: each counter's change and its
/// figure per operation, server CPU as microseconds per operation.
/// Why operations failed, in the database's words: per kind, each cause
/// with its count and when it first came.
fn failures_table(p: &mut Page, r: &RunRecord, total: &Stats) {
    let start = r.meta().started_at;
    let body: Vec<Vec<String>> = total
        .kinds()
        .flat_map(|(kind, s)| {
            s.causes(start).into_iter().map(move |c| {
                vec![
                    kind.ycsb_name().to_string(),
                    tables::grouped(c.count as f64),
                    c.status.to_string(),
                    c.text
                        .unwrap_or_else(|| "(the database said nothing)".into()),
                    c.first_at_s.map_or("-".into(), |t| format!("{t:.2} s")),
                ]
            })
        })
        .collect();
    if body.is_empty() {
        return;
    }
    p.html.push_str("<h3>Failed operations</h3>");
    let head = [
        "operation",
        "failed",
        "status",
        "the database's words",
        "first at",
    ]
    .map(String::from);
    html_table(p, &head, &body);
}

/// The counters that changed, a row each; those that did not, named in
/// one line under them.
fn server_table(p: &mut Page, s: &sojourn_core::backend::ServerStats) {
    let _ = write!(
        p.html,
        "<h3>Server counters ({} operations)</h3>",
        tables::grouped(s.operations as f64)
    );
    let head = ["counter", "change", "per operation"].map(String::from);
    let (changed, unchanged): (Vec<_>, Vec<_>) = s.deltas.iter().partition(|(_, &d)| d != 0.0);
    let body: Vec<Vec<String>> = changed
        .into_iter()
        .map(|(name, &d)| {
            let per_op = s.per_op(name);
            if sojourn_core::backend::counters::is_cpu(name) {
                vec![
                    format!("{name} (µs per op)"),
                    tables::readable(d),
                    per_op.map_or("-".into(), |v| tables::readable(v * 1e6)),
                ]
            } else {
                vec![
                    name.clone(),
                    tables::readable(d),
                    per_op.map_or("-".into(), tables::readable),
                ]
            }
        })
        .collect();
    if !body.is_empty() {
        html_table(p, &head, &body);
    }
    if !unchanged.is_empty() {
        let names: Vec<&str> = unchanged.iter().map(|(n, _)| n.as_str()).collect();
        let _ = writeln!(
            p.html,
            "<p class=\"note unchanged\">{} counter{} unchanged: {}</p>",
            names.len(),
            if names.len() == 1 { "" } else { "s" },
            esc(&names.join(", "))
        );
    }
}

/// A rate profile's segments, each summarised on its own (operations by
/// intended start): offered and achieved rate, response percentiles per
/// kind, and the verdict under `rate.slo`.
fn segment_table(p: &mut Page, r: &RunRecord) {
    p.html.push_str("<h3>Segments of the rate profile</h3>");
    let head = [
        "segment",
        "from-to (s)",
        "target ops/s",
        "achieved ops/s",
        "response p50/p99/p99.9",
        "verdict",
    ];
    table_of(p, &head, &r.segments, |s| {
        let pcts = segments::response_text(&s.stats, &[0.5, 0.99, 0.999]);
        vec![
            s.segment.label.clone(),
            format!(
                "{:.1}-{:.1}",
                s.segment.start.as_secs_f64(),
                s.segment.end.as_secs_f64()
            ),
            tables::readable(s.segment.mean_rate()),
            tables::readable(s.achieved()),
            if pcts.is_empty() {
                "-".into()
            } else {
                pcts.join("; ")
            },
            s.verdict.as_ref().map_or("-".into(), |v| v.text()),
        ]
    });
}

pub(super) fn run_section(p: &mut Page, r: &RunRecord, name: &str, open: bool) {
    let m = r.meta();
    let id = r.id().as_str();
    let total = run::totals(r);
    let _ = write!(
        p.html,
        "<section class=\"run\" id=\"run-{}\"><details{}><summary><h2>Run {}: {} · {} · {}</h2></summary>\n<div class=\"grid\"><div class=\"facts\"><dl>",
        esc(id),
        if open { " open" } else { "" },
        esc(name),
        esc(&m.phase),
        esc(&run::workload_name(r)),
        esc(&m.backend)
    );
    facts(p, r);
    p.html.push_str("</dl>\n");
    if !r.warnings.is_empty() {
        p.html.push_str("<ul class=\"warnings\">");
        for w in &r.warnings {
            let _ = write!(p.html, "<li>warning: {}</li>", esc(w));
        }
        p.html.push_str("</ul>\n");
    }
    failures_table(p, r, &total);
    if let Some(server) = &r.server {
        server_table(p, server);
    }
    if !r.segments.is_empty() {
        segment_table(p, r);
    }
    // The facts beside the throughput plot; below, one row per kind:
    // percentiles over time beside the spectrum.
    p.html.push_str("</div>");
    let kinds: Vec<OpKind> = total.kinds().map(|(k, _)| k).collect();
    throughput_chart(p, r, name, &kinds);
    // Open loop only: in a closed loop nothing is scheduled ahead of its
    // send, so response and service time coincide.
    if m.target.is_some() {
        waiting_chart(p, r, name, &kinds);
    }
    for &k in &kinds {
        percentiles_chart(p, r, k);
        spectrum_chart(p, &total, k);
    }
    p.html.push_str("</div></details></section>\n");
}

/// The run's facts, as `<dt>`/`<dd>` pairs.
fn facts(p: &mut Page, r: &RunRecord) {
    let m = r.meta();
    let id = r.id().as_str();
    fact(p, "run id", id);
    fact(p, "run URI", &m.run_uri);
    fact(p, "status", r.summary.status.as_str());
    fact(
        p,
        "started",
        &sojourn_core::output::time::rfc3339(m.started_at),
    );
    fact(
        p,
        "measured",
        &format!(
            "{:.1} s in {} intervals",
            r.measured().as_secs_f64(),
            run::measured_intervals(r).count()
        ),
    );
    fact(
        p,
        "target",
        &m.target.map_or("closed loop".into(), |t| {
            format!("{} ops/s", tables::readable(t))
        }),
    );
    fact(
        p,
        "achieved",
        &format!("{} ops/s", tables::readable(run::throughput(r))),
    );
    fact(
        p,
        "threads",
        &format!(
            "{} (client processes: {})",
            m.threads,
            m.client_count.max(1)
        ),
    );
    if let Some(e) = &r.summary.error {
        fact(p, "error", e);
    }
    if !m.labels.is_empty() {
        let labels: Vec<String> = m.labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
        fact(p, "labels", &labels.join(", "));
    }
}

/// Offered, achieved and target throughput on one axis, with each kind's
/// achieved rate.
fn throughput_chart(p: &mut Page, r: &RunRecord, name: &str, kinds: &[OpKind]) {
    let m = r.meta();
    let mut series = vec![Series::line(
        "achieved, all operations",
        PALETTE[6],
        run::throughput_series(r, None),
    )];
    for (i, k) in kinds.iter().enumerate() {
        series.push(Series::line(
            format!("achieved, {}", k.name()),
            PALETTE[i % 6],
            run::throughput_series(r, Some(*k)),
        ));
    }
    let profile = run::profile_series(r);
    match m.target {
        // A rate profile's target changes with time: drawn as it went.
        Some(_) if !profile.is_empty() => {
            series.push(Series::line("target (rate profile)", "#555555", profile).dashed())
        }
        // A constant target, as a line over the whole run, so that the
        // interactive chart shows it on hover too.
        Some(t) => {
            let end = r
                .intervals
                .iter()
                .map(|iv| (iv.start + iv.length).as_secs_f64())
                .fold(0.0, f64::max);
            series.push(Series::line("target", "#555555", vec![(0.0, t), (end, t)]).dashed())
        }
        None => {}
    }
    let offered = run::offered_series(r);
    if !offered.is_empty() {
        series
            .push(Series::line("offered (released by the schedule)", "#999999", offered).dashed());
    }
    p.time_chart(&Chart {
        kind: "throughput",
        title: if m.target.is_some() {
            format!("Run {name}: offered, achieved and target throughput over time")
        } else {
            format!("Run {name}: achieved throughput over time")
        },
        x: Axis::zero_based("time since start (s)"),
        y: Axis::zero_based("throughput (operations/s)"),
        series,
        marks: warmup_mark(r),
    });
}

/// Time waiting in the client, per kind: what response time adds to
/// service time.
fn waiting_chart(p: &mut Page, r: &RunRecord, name: &str, kinds: &[OpKind]) {
    let (unit, div) = (p.unit.name(), p.unit.ns());
    let series = kinds
        .iter()
        .enumerate()
        .map(|(i, k)| {
            Series::line(
                k.name(),
                PALETTE[i % 6],
                run::waiting_series(r, *k)
                    .into_iter()
                    .map(|(x, y)| (x, y / div))
                    .collect(),
            )
        })
        .collect();
    p.time_chart(&Chart {
        kind: "waiting",
        title: format!("Run {name}: {WAITING} per interval"),
        x: Axis::zero_based("time since start (s)"),
        y: Axis::zero_based(format!("mean response − mean service time ({unit})")),
        series,
        marks: warmup_mark(r),
    });
}

/// One kind's p50, p99 and p99.9 over time, response solid and service
/// dashed.
fn percentiles_chart(p: &mut Page, r: &RunRecord, k: OpKind) {
    let (unit, div) = (p.unit.name(), p.unit.ns());
    let mut series = Vec::new();
    for lat in [Latency::Response, Latency::Service] {
        for (qi, q) in PCT_QS.iter().enumerate() {
            let s = Series::line(
                format!("{} {}", lat.name(), PCT_NAMES[qi]),
                PCT_COLORS[qi],
                run::percentile_series(r, k, lat, *q)
                    .into_iter()
                    .map(|(x, y)| (x, y / div))
                    .collect(),
            );
            series.push(if lat == Latency::Service {
                s.dashed()
            } else {
                s
            });
        }
    }
    p.time_chart(&Chart {
        kind: "percentiles",
        title: format!("{}: latency percentiles over time", kind_title(Some(k))),
        x: Axis::zero_based("time since start (s)"),
        y: Axis::log(format!("latency ({unit}, log scale)")),
        series,
        marks: warmup_mark(r),
    });
}

/// One kind's percentile spectrum of the summary (warm-up excluded),
/// response and service time.
fn spectrum_chart(p: &mut Page, total: &Stats, k: OpKind) {
    let hs = [Latency::Response, Latency::Service].map(|lat| (lat, run::histogram(total, k, lat)));
    let max = hs.iter().map(|(_, h)| h.max() as f64).fold(0.0, f64::max);
    let p50 = hs
        .iter()
        .filter(|(_, h)| !h.is_empty())
        .map(|(_, h)| h.value_at_quantile(0.5) as f64)
        .fold(f64::INFINITY, f64::min);
    let (unit, div) = (p.unit.name(), p.unit.ns());
    // A long tail reads better on a log scale; otherwise the classic
    // linear one.
    let log = max > 50.0 * p50;
    let series = hs
        .iter()
        .enumerate()
        .map(|(i, (lat, h))| {
            let s = Series::line(
                format!("{} time", lat.name()),
                [PALETTE[1], PALETTE[0]][i],
                run::spectrum(h)
                    .into_iter()
                    .map(|(x, y)| (x, y / div))
                    .collect(),
            );
            if *lat == Latency::Service {
                s.dashed()
            } else {
                s
            }
        })
        .collect();
    let label = format!("latency ({unit}{})", if log { ", log scale" } else { "" });
    p.chart(&Chart {
        kind: "spectrum",
        title: format!("{}: percentile spectrum", kind_title(Some(k))),
        x: Axis::spectrum(),
        y: if log {
            Axis::log(label)
        } else {
            Axis::zero_based(label)
        },
        series,
        marks: Vec::new(),
    });
}
