//! A figure over the history of runs: the runs a selection names, grouped
//! into points (the runs that share a label's value, `--by commit`, are
//! repetitions of one point; without `--by` each run is a point), ordered
//! by each point's first start, one value per point (the mean of its
//! repetitions), and the change points in that series
//! ([`crate::changepoint`]) judged worse or better for the figure.
//!
//! `--check` asks one question of it for a CI job: did the newest points
//! come after a change for the worse, at least `min_change` large?

use std::borrow::Borrow;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::SystemTime;

use serde::Serialize;
use sojourn_core::histograms::Stats;
use sojourn_core::op::OpKind;
use sojourn_core::stats::student_t_quantile;
use sojourn_store::RunRecord;

use crate::changepoint::{self, ChangePoint, Regime};
use crate::compare::{Better, Verdict};
use crate::error::ReportError;
use crate::run::{self, Latency};

/// Fewest repetitions of a point for a change at it alone to be judged.
pub const MIN_REPETITIONS: usize = 3;

/// A figure of a run, named as `compare` and `--slo` name them:
/// `throughput`, `read.throughput`, `read.p99` (response time), `read.mean`,
/// `update.service.p50`, `read.response.p99.9`.
#[derive(Clone, Debug, PartialEq)]
pub struct Figure {
    pub name: String,
    kind: Option<OpKind>,
    what: What,
    latency: Latency,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum What {
    Throughput,
    Mean,
    Quantile(f64),
}

const FORM: &str = "a figure is throughput, KIND.throughput, KIND.pN, KIND.mean, \
                    KIND.service.pN or KIND.response.pN (KIND an operation: read, update, a \
                    script's name, ...; N a percentile: 50, 99, 99.9)";

impl Figure {
    pub fn parse(name: &str) -> Result<Figure, String> {
        let bad = |why: String| format!("figure '{name}': {why}; {FORM}");
        if name == "throughput" {
            return Ok(Figure {
                name: name.into(),
                kind: None,
                what: What::Throughput,
                latency: Latency::Response,
            });
        }
        let (kind, latency, stat) = if let Some((k, s)) = name.split_once(".service.") {
            (k, Latency::Service, s)
        } else if let Some((k, s)) = name.split_once(".response.") {
            (k, Latency::Response, s)
        } else if let Some(k) = name.strip_suffix(".throughput") {
            (k, Latency::Response, "throughput")
        } else if let Some(k) = name.strip_suffix(".mean") {
            (k, Latency::Response, "mean")
        } else if let Some((k, _)) = name.rsplit_once(".p") {
            (k, Latency::Response, &name[k.len() + 1..])
        } else {
            return Err(bad("no operation and statistic".into()));
        };
        let kind = OpKind::find(kind)
            .or_else(|| OpKind::find(&kind.to_ascii_lowercase()))
            .ok_or_else(|| bad(format!("no operation is named '{kind}'")))?;
        let what = match stat {
            "throughput" => What::Throughput,
            "mean" => What::Mean,
            s => {
                let pct: f64 = s
                    .strip_prefix('p')
                    .and_then(|p| p.parse().ok())
                    .ok_or_else(|| bad(format!("'{s}' is not pN, mean or throughput")))?;
                if !(pct > 0.0 && pct < 100.0) {
                    return Err(bad(format!(
                        "the percentile {pct} is not above 0 and below 100"
                    )));
                }
                What::Quantile(pct / 100.0)
            }
        };
        Ok(Figure {
            name: name.into(),
            kind: Some(kind),
            what,
            latency,
        })
    }

    /// Throughput, then each operation's p99 response time, of the
    /// operations `runs` have.
    pub fn defaults<R: Borrow<RunRecord>>(runs: &[R]) -> Vec<Figure> {
        let mut kinds: Vec<OpKind> = Vec::new();
        for r in runs {
            for (k, _) in run::totals(r.borrow()).kinds() {
                if !kinds.contains(&k) {
                    kinds.push(k);
                }
            }
        }
        kinds.sort_by_key(|k| k.index());
        let mut out = vec![Figure::parse("throughput").expect("a figure")];
        out.extend(kinds.into_iter().map(|k| Figure {
            name: format!("{}.p99", k.name()),
            kind: Some(k),
            what: What::Quantile(0.99),
            latency: Latency::Response,
        }));
        out
    }

    pub fn better(&self) -> Better {
        match self.what {
            What::Throughput => Better::Higher,
            _ => Better::Lower,
        }
    }

    pub fn unit(&self) -> &'static str {
        match self.what {
            What::Throughput => "ops/s",
            _ => "ms",
        }
    }

    /// The figure of `r`, whose totals are `total` ([`run::totals`]), if
    /// it has it.
    pub fn value(&self, r: &RunRecord, total: &Stats) -> Option<f64> {
        let Some(kind) = self.kind else {
            return Some(run::throughput(r));
        };
        total.op(kind)?;
        if self.what == What::Throughput {
            return Some(run::kind_throughput(r, total, kind));
        }
        let h = run::histogram(total, kind, self.latency);
        if h.is_empty() {
            return None;
        }
        Some(match self.what {
            What::Mean => h.mean() / 1e6,
            What::Quantile(q) => h.value_at_quantile(q) as f64 / 1e6,
            What::Throughput => unreachable!("returned above"),
        })
    }
}

/// One point of a history: the runs that share its key.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Point {
    /// The `--by` label's value, or the run's short id.
    pub key: String,
    pub runs: Vec<String>,
    /// Each repetition's value, in run order.
    pub values: Vec<f64>,
    pub mean: f64,
}

/// A change point of one figure's series.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Change {
    /// The first point after the change: its position and key.
    pub index: usize,
    pub key: String,
    pub runs: Vec<String>,
    /// The points' means before (back to the change before) and after (on
    /// to the change after): how many, their mean and spread.
    pub before: Regime,
    pub after: Regime,
    /// `(after − before) / before` in percent, with its 95% interval.
    pub change_pct: f64,
    pub change_ci95_pct: Option<[f64; 2]>,
    pub p: f64,
    pub verdict: Verdict,
}

/// One figure over the history.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Series {
    pub figure: String,
    pub unit: &'static str,
    pub better: Better,
    pub points: Vec<Point>,
    pub changes: Vec<Change>,
}

/// Every figure over the history.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct History {
    /// The label the points are grouped by, if any.
    pub by: Option<String>,
    pub max_pvalue: f64,
    pub min_change_pct: f64,
    /// Runs left out, and why.
    pub notes: Vec<String>,
    pub series: Vec<Series>,
}

/// How a history is made.
#[derive(Clone, Debug)]
pub struct HistoryOptions {
    pub by: Option<String>,
    /// Only the newest this many points.
    pub last: Option<usize>,
    pub detect: changepoint::Options,
}

/// A history's recipe, checked: the figures (none: the runs' defaults),
/// how runs become points and how change points are judged. `sojourn
/// history` and `sojourn report --history` both make theirs here.
#[derive(Clone, Debug)]
pub struct Plan {
    figures: Vec<Figure>,
    opts: HistoryOptions,
}

impl Plan {
    /// From the command line's `--by`, `--figure`s, `--max-pvalue`,
    /// `--min-change` (a fraction) and `--last`.
    pub fn new(
        by: Option<String>,
        figures: &[String],
        max_pvalue: f64,
        min_change: f64,
        last: Option<usize>,
    ) -> Result<Plan, ReportError> {
        if !(max_pvalue > 0.0 && max_pvalue < 1.0) {
            return Err(ReportError::Invalid(format!(
                "--max-pvalue {max_pvalue}: expected a p-value above 0 and below 1, such as 0.001"
            )));
        }
        if !(0.0..10.0).contains(&min_change) {
            return Err(ReportError::Invalid(format!(
                "--min-change {min_change}: expected a fraction of 0 or more, such as 0.02 for 2%"
            )));
        }
        let figures = figures
            .iter()
            .map(|f| Figure::parse(f).map_err(ReportError::Invalid))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Plan {
            figures,
            opts: HistoryOptions {
                by,
                last,
                detect: changepoint::Options {
                    max_pvalue,
                    min_magnitude: min_change,
                    ..changepoint::Options::default()
                },
            },
        })
    }

    /// The history of `runs`; an error when no run has any of the figures.
    pub fn history<R: Borrow<RunRecord>>(&self, runs: &[R]) -> Result<History, ReportError> {
        let defaults;
        let figures = if self.figures.is_empty() {
            defaults = Figure::defaults(runs);
            &defaults
        } else {
            &self.figures
        };
        let h = history(runs, figures, &self.opts);
        if h.series.iter().all(|s| s.points.is_empty()) {
            let names: Vec<&str> = figures.iter().map(|f| f.name.as_str()).collect();
            return Err(ReportError::Invalid(format!(
                "none of the {} selected runs has {}{}",
                runs.len(),
                names.join(", "),
                self.opts
                    .by
                    .as_ref()
                    .map(|b| format!(" and the label {b}"))
                    .unwrap_or_default()
            )));
        }
        Ok(h)
    }
}

/// The runs `runs` (any order) as points, oldest first.
fn points(runs: &[&RunRecord], by: Option<&str>, notes: &mut Vec<String>) -> Vec<Vec<usize>> {
    let meta = |i: usize| runs[i].meta();
    let mut order: Vec<usize> = (0..runs.len()).collect();
    order.sort_by_key(|&i| meta(i).started_at);
    let Some(label) = by else {
        return order.into_iter().map(|i| vec![i]).collect();
    };
    let mut groups: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    let mut unlabelled = 0;
    for i in order {
        match meta(i).labels.get(label) {
            Some(v) => groups.entry(v.as_str()).or_default().push(i),
            None => unlabelled += 1,
        }
    }
    if unlabelled > 0 {
        notes.push(format!(
            "{unlabelled} run(s) without the label {label} left out"
        ));
    }
    let mut out: Vec<Vec<usize>> = groups.into_values().collect();
    let first = |g: &Vec<usize>| -> SystemTime { meta(g[0]).started_at };
    out.sort_by_key(first);
    out
}

/// The history of `figures` over `runs`.
pub fn history<R: Borrow<RunRecord>>(
    runs: &[R],
    figures: &[Figure],
    opts: &HistoryOptions,
) -> History {
    let runs: Vec<&RunRecord> = runs.iter().map(Borrow::borrow).collect();
    let mut notes = Vec::new();
    let mut groups = points(&runs, opts.by.as_deref(), &mut notes);
    if let Some(n) = opts.last {
        let drop = groups.len().saturating_sub(n);
        groups.drain(..drop);
    }
    // Each run's totals once: every figure reads them.
    let totals: Vec<Stats> = runs.iter().map(|r| run::totals(r)).collect();
    let key = |g: &[usize]| match &opts.by {
        Some(label) => runs[g[0]].meta().labels[label].clone(),
        None => run::short_id(runs[g[0]]),
    };
    let series = figures
        .iter()
        .map(|f| {
            let points: Vec<Point> = groups
                .iter()
                .filter_map(|g| {
                    let (ids, values): (Vec<String>, Vec<f64>) = g
                        .iter()
                        .filter_map(|&i| {
                            let v = f.value(runs[i], &totals[i])?;
                            Some((runs[i].id().to_string(), v))
                        })
                        .unzip();
                    (!values.is_empty()).then(|| Point {
                        key: key(g),
                        runs: ids,
                        mean: values.iter().sum::<f64>() / values.len() as f64,
                        values,
                    })
                })
                .collect();
            let means: Vec<f64> = points.iter().map(|p| p.mean).collect();
            let changes = changepoint::change_points(&means, &opts.detect)
                .into_iter()
                .map(|c| change(&points, &c, f.better()))
                .collect();
            Series {
                figure: f.name.clone(),
                unit: f.unit(),
                better: f.better(),
                points,
                changes,
            }
        })
        .collect();
    History {
        by: opts.by.clone(),
        max_pvalue: opts.detect.max_pvalue,
        min_change_pct: opts.detect.min_magnitude * 100.0,
        notes,
        series,
    }
}

fn change(points: &[Point], c: &ChangePoint, better: Better) -> Change {
    let (b, a) = (c.before, c.after);
    let change_pct = c.forward_change() * 100.0;
    // Welch's interval for the difference of the regimes' means, over
    // the before mean (sample deviations).
    let sample = |r: &Regime| r.sd * (r.n as f64 / (r.n as f64 - 1.0)).sqrt();
    let ci = (b.n >= 2 && a.n >= 2 && b.mean != 0.0).then(|| {
        let (vb, va) = (
            sample(&b).powi(2) / b.n as f64,
            sample(&a).powi(2) / a.n as f64,
        );
        let se = (vb + va).sqrt();
        let df = (vb + va).powi(2)
            / (vb.powi(2) / (b.n as f64 - 1.0) + va.powi(2) / (a.n as f64 - 1.0)).max(1e-300);
        let t = student_t_quantile(0.975, df.max(1.0));
        let d = a.mean - b.mean;
        [(d - t * se) / b.mean * 100.0, (d + t * se) / b.mean * 100.0]
    });
    let worse = match better {
        Better::Higher => a.mean < b.mean,
        Better::Lower => a.mean > b.mean,
    };
    let p = &points[c.index];
    Change {
        index: c.index,
        key: p.key.clone(),
        runs: p.runs.clone(),
        before: b,
        after: a,
        change_pct,
        change_ci95_pct: ci.filter(|c| c.iter().all(|x| x.is_finite())),
        p: c.p,
        verdict: if worse {
            Verdict::Worse
        } else {
            Verdict::Better
        },
    }
}

/// What `--check` found.
#[derive(Clone, Debug, PartialEq)]
pub enum Check {
    /// No change for the worse among the newest points.
    Pass(String),
    /// A change for the worse at one of the newest points.
    Worse(String),
    /// A change at the newest point alone, whose repetitions are too few
    /// to tell it from noise.
    TooFew(String),
}

/// Whether the newest `last` points of any series come after a change
/// for the worse: the change points whose regime after holds one of
/// them (those among them, and the last one before them) are judged.
pub fn check(h: &History, last: usize) -> Check {
    let last = last.max(1);
    let mut undecided = None;
    for s in &h.series {
        let n = s.points.len();
        let first_new = n.saturating_sub(last);
        let before = s.changes.iter().rfind(|c| c.index <= first_new);
        let within = s.changes.iter().filter(|c| c.index > first_new);
        for c in before.into_iter().chain(within) {
            if c.verdict != Verdict::Worse {
                continue;
            }
            let p = &s.points[c.index];
            let line = format!(
                "{}: {:+.1}% at {} ({:.4} → {:.4} {}, p = {:.2e}), worse",
                s.figure, c.change_pct, p.key, c.before.mean, c.after.mean, s.unit, c.p
            );
            if c.index + 1 == n && p.runs.len() < MIN_REPETITIONS {
                undecided.get_or_insert(format!(
                    "{line}, but only at the newest point, which has {} run(s): too few to \
                     tell a change at it alone from noise; repeat it (--repeat \
                     {MIN_REPETITIONS}) and check again",
                    p.runs.len()
                ));
                continue;
            }
            return Check::Worse(line);
        }
    }
    if let Some(line) = undecided {
        return Check::TooFew(line);
    }
    let points = h.series.first().map_or(0, |s| s.points.len());
    Check::Pass(format!(
        "the newest {last} of {points} points come after no change for the worse of more than \
         {:.1}% (p < {})",
        h.min_change_pct, h.max_pvalue
    ))
}

/// Eight levels of a sparkline.
const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];

fn sparkline(values: &[f64], marks: &[usize]) -> String {
    let (lo, hi) = values
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &v| {
            (l.min(v), h.max(v))
        });
    let mut out = String::new();
    for (i, v) in values.iter().enumerate() {
        if marks.contains(&i) {
            out.push('|');
        }
        let level = if hi > lo {
            (((v - lo) / (hi - lo)) * 7.0).round() as usize
        } else {
            3
        };
        out.push(BARS[level.min(7)]);
    }
    out
}

/// The history as text: per figure, a sparkline of its points (`|` before
/// each change point) and a line per change point.
pub fn text(h: &History) -> String {
    let mut out = String::new();
    for note in &h.notes {
        let _ = writeln!(out, "note: {note}");
    }
    for s in &h.series {
        let means: Vec<f64> = s.points.iter().map(|p| p.mean).collect();
        let marks: Vec<usize> = s.changes.iter().map(|c| c.index).collect();
        let (first, last) = match (s.points.first(), s.points.last()) {
            (Some(f), Some(l)) => (f, l),
            _ => {
                let _ = writeln!(out, "{}: no run has it", s.figure);
                continue;
            }
        };
        let _ = writeln!(
            out,
            "{} ({}, {} points, {} .. {}): {}",
            s.figure,
            s.unit,
            s.points.len(),
            first.key,
            last.key,
            sparkline(&means, &marks)
        );
        if s.changes.is_empty() {
            let _ = writeln!(out, "  no change point");
        }
        for c in &s.changes {
            let ci = c
                .change_ci95_pct
                .map(|[lo, hi]| format!(" [{lo:+.1}%, {hi:+.1}%]"))
                .unwrap_or_default();
            let verdict = match c.verdict {
                Verdict::Worse => "worse",
                _ => "better",
            };
            let _ = writeln!(
                out,
                "  change at {} ({} run(s)): {} → {}, {:+.1}%{ci}, p = {:.2e}, {verdict}",
                c.key,
                c.runs.len(),
                c.before,
                c.after,
                c.change_pct,
                c.p,
            );
        }
    }
    out
}

/// The history as a markdown table, for a pull request or a CI job's
/// summary: one row per change point.
pub fn markdown(h: &History) -> String {
    let mut out = String::from(
        "| figure | change at | before | after | change | p-value | verdict |\n\
         |---|---|---|---|---|---|---|\n",
    );
    let mut rows = 0;
    for s in &h.series {
        for c in &s.changes {
            rows += 1;
            let _ = writeln!(
                out,
                "| {} | {} | {:.4} {} | {:.4} {} | {:+.1}% | {:.2e} | {} |",
                s.figure,
                c.key,
                c.before.mean,
                s.unit,
                c.after.mean,
                s.unit,
                c.change_pct,
                c.p,
                if c.verdict == Verdict::Worse {
                    "**worse**"
                } else {
                    "better"
                }
            );
        }
    }
    if rows == 0 {
        let points = h.series.first().map_or(0, |s| s.points.len());
        let _ = writeln!(
            out,
            "| (none) | no change point in {points} points | | | | | |"
        );
    }
    out
}

/// The history as CSV: a row per figure and point, with its change point
/// where one starts there.
pub fn csv(h: &History) -> String {
    let head: Vec<String> = [
        "figure",
        "unit",
        "point",
        "key",
        "runs",
        "mean",
        "values",
        "change_starts",
        "change_pct",
        "p",
        "verdict",
    ]
    .map(String::from)
    .to_vec();
    let mut body = Vec::new();
    for s in &h.series {
        for (i, p) in s.points.iter().enumerate() {
            let change = s.changes.iter().find(|c| c.index == i);
            let values: Vec<String> = p.values.iter().map(|v| v.to_string()).collect();
            body.push(vec![
                s.figure.clone(),
                s.unit.to_string(),
                (i + 1).to_string(),
                p.key.clone(),
                p.runs.join(" "),
                p.mean.to_string(),
                values.join(" "),
                if change.is_some() { "yes" } else { "" }.to_string(),
                change.map_or(String::new(), |c| format!("{:.3}", c.change_pct)),
                change.map_or(String::new(), |c| format!("{:e}", c.p)),
                change.map_or(String::new(), |c| {
                    if c.verdict == Verdict::Worse {
                        "worse"
                    } else {
                        "better"
                    }
                    .to_string()
                }),
            ]);
        }
    }
    let mut out = String::new();
    crate::tables::csv_table(&head, &body, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_are_named_as_compare_names_them() {
        let f = Figure::parse("read.response.p99.9").unwrap();
        assert_eq!(
            (f.kind, f.what, f.latency),
            (
                Some(OpKind::Read),
                What::Quantile(99.9 / 100.0),
                Latency::Response
            )
        );
        let f = Figure::parse("UPDATE.service.p50").unwrap();
        assert_eq!(
            (f.kind, f.what, f.latency),
            (Some(OpKind::Update), What::Quantile(0.5), Latency::Service)
        );
        assert_eq!(
            Figure::parse("read.p99").unwrap().what,
            What::Quantile(0.99)
        );
        assert_eq!(Figure::parse("read.mean").unwrap().what, What::Mean);
        assert_eq!(
            Figure::parse("throughput").unwrap().better(),
            Better::Higher
        );
        assert_eq!(Figure::parse("read.p99").unwrap().better(), Better::Lower);
        for bad in ["read", "nothing.p99", "read.p100", "read.pX"] {
            let e = Figure::parse(bad).unwrap_err();
            assert!(
                e.starts_with(&format!("figure '{bad}'")) && e.contains("KIND.pN"),
                "{e}"
            );
        }
    }

    #[test]
    fn a_sparkline_marks_its_change_points() {
        assert_eq!(sparkline(&[1.0, 1.0, 2.0, 2.0], &[2]), "▁▁|██");
        assert_eq!(sparkline(&[5.0, 5.0], &[]), "▄▄");
    }
}
