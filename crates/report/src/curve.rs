//! Latency against throughput: runs of one workload on one database at
//! several open-loop targets (or the steps of one capacity session) as a
//! curve, with its knee, the highest rate before latency takes off.
//!
//! The knee of a capacity session is the search's own verdict: the step
//! with the highest achieved rate among those it judged sustained (which
//! includes its SLOs with their confidence intervals). For other runs it is
//! found the way Noria's authors find capacity by eye, made explicit: walk
//! the runs by target; a run is sustained when it achieved at least 95% of
//! its target (PerfKitBenchmarker's rule) and its p99 response time is at
//! most [`TAKE_OFF`] times that of the lightest load; the knee is the last
//! run before the first one that is not.

use std::collections::BTreeMap;

use sojourn_core::capacity::{parse_slos, Slo};
use sojourn_core::op::OpKind;
use sojourn_store::RunRecord;

use crate::run::{self, Latency, SESSION_LABEL, SLOS_LABEL, SUSTAINED_LABEL};

/// How many times the lightest load's p99 response time a run may show
/// and still be on the flat part of the curve.
pub const TAKE_OFF: f64 = 5.0;

/// One run on a curve.
#[derive(Clone, Debug)]
pub struct Point {
    pub run: String,
    pub target: f64,
    pub achieved: f64,
    pub sustained: bool,
    /// Per kind (and `None` for all kinds merged): p50, p99, p99.9 of
    /// service and response time, in nanoseconds.
    pub latency: BTreeMap<Option<OpKind>, [[f64; 3]; 2]>,
}

/// Runs that belong together on one plot.
#[derive(Clone, Debug)]
pub struct Curve {
    pub title: String,
    /// The capacity session id, when the curve is one.
    pub session: Option<String>,
    /// Ordered by target.
    pub points: Vec<Point>,
    /// Index into `points` of the knee.
    pub knee: Option<usize>,
    pub slos: Vec<Slo>,
    pub kinds: Vec<OpKind>,
}

pub const QUANTILES: [f64; 3] = [0.5, 0.99, 0.999];

fn point(r: &RunRecord, target: f64) -> Point {
    let total = run::totals(r);
    let mut latency = BTreeMap::new();
    let read = |h: &hdrhistogram::Histogram<u64>| {
        QUANTILES.map(|q| {
            if h.is_empty() {
                f64::NAN
            } else {
                h.value_at_quantile(q) as f64
            }
        })
    };
    for (k, o) in total.kinds() {
        latency.insert(Some(k), [read(&o.ok.service), read(&o.ok.response)]);
    }
    latency.insert(
        None,
        [
            read(&run::all_kinds(&total, Latency::Service)),
            read(&run::all_kinds(&total, Latency::Response)),
        ],
    );
    Point {
        run: run::short_id(r),
        target,
        achieved: run::throughput(r),
        sustained: true,
        latency,
    }
}

/// The curves among `runs`: one per capacity session with at least two of
/// its steps selected, and one per group of open-loop runs of the same
/// phase, workload and database with at least two different targets.
pub fn curves(runs: &[RunRecord]) -> Vec<Curve> {
    let mut sessions: BTreeMap<String, Vec<&RunRecord>> = BTreeMap::new();
    let mut groups: BTreeMap<(String, String, String), Vec<&RunRecord>> = BTreeMap::new();
    for r in runs {
        let m = r.meta();
        if m.target.is_none() {
            continue;
        }
        if let Some(s) = m.labels.get(SESSION_LABEL) {
            sessions.entry(s.clone()).or_default().push(r);
        } else {
            groups
                .entry((m.phase.clone(), run::workload_name(r), m.backend.clone()))
                .or_default()
                .push(r);
        }
    }
    let mut out = Vec::new();
    // One point is not a curve.
    for (id, steps) in sessions.into_iter().filter(|(_, s)| s.len() >= 2) {
        let mut points: Vec<Point> = steps
            .iter()
            .map(|r| {
                let mut p = point(r, r.meta().target.unwrap_or(0.0));
                p.sustained =
                    r.meta().labels.get(SUSTAINED_LABEL).map(String::as_str) == Some("true");
                p
            })
            .collect();
        points.sort_by(|a, b| a.target.total_cmp(&b.target));
        let knee = points
            .iter()
            .enumerate()
            .filter(|(_, p)| p.sustained)
            .max_by(|a, b| a.1.achieved.total_cmp(&b.1.achieved))
            .map(|(i, _)| i);
        let first = steps[0];
        let slos = first
            .meta()
            .labels
            .get(SLOS_LABEL)
            .and_then(|s| parse_slos(s).ok())
            .unwrap_or_default();
        out.push(Curve {
            title: format!(
                "capacity session {id}: {} on {}",
                run::workload_name(first),
                first.meta().backend
            ),
            session: Some(id),
            points,
            knee,
            slos,
            kinds: run::kinds_of(&steps),
        });
    }
    for ((phase, workload, backend), rs) in groups {
        let mut targets: Vec<f64> = rs.iter().filter_map(|r| r.meta().target).collect();
        targets.sort_by(f64::total_cmp);
        targets.dedup();
        if targets.len() < 2 {
            continue;
        }
        let mut points: Vec<Point> = rs
            .iter()
            .map(|r| point(r, r.meta().target.unwrap_or(0.0)))
            .collect();
        points.sort_by(|a, b| a.target.total_cmp(&b.target));
        let knee = judge(&mut points);
        out.push(Curve {
            title: format!("{workload} ({phase}) on {backend}"),
            session: None,
            points,
            knee,
            slos: Vec::new(),
            kinds: run::kinds_of(&rs),
        });
    }
    out
}

/// Mark each point sustained or not and return the knee (see the module
/// documentation). Points are ordered by target.
fn judge(points: &mut [Point]) -> Option<usize> {
    let base = points
        .first()
        .and_then(|p| p.latency.get(&None))
        .map(|l| l[1][1])
        .filter(|v| v.is_finite() && *v > 0.0)?;
    let mut knee = None;
    let mut broken = false;
    for (i, p) in points.iter_mut().enumerate() {
        let p99 = p.latency.get(&None).map_or(f64::NAN, |l| l[1][1]);
        p.sustained = p.achieved >= 0.95 * p.target && p99 <= TAKE_OFF * base;
        if p.sustained && !broken {
            knee = Some(i);
        } else {
            broken = true;
        }
    }
    knee
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(target: f64, achieved: f64, p99_ms: f64) -> Point {
        let l = [f64::NAN, p99_ms * 1e6, f64::NAN];
        Point {
            run: String::new(),
            target,
            achieved,
            sustained: false,
            latency: BTreeMap::from([(None, [l, l])]),
        }
    }

    #[test]
    fn the_knee_is_the_last_run_before_latency_takes_off() {
        let mut pts = vec![
            p(100.0, 100.0, 1.0),
            p(200.0, 199.0, 1.2),
            p(400.0, 398.0, 2.5),
            p(800.0, 790.0, 40.0),
            p(1600.0, 900.0, 900.0),
        ];
        assert_eq!(judge(&mut pts), Some(2));
        assert!(pts[2].sustained && !pts[3].sustained && !pts[4].sustained);
        // A run that fell short of its target ends the flat part too.
        let mut pts = vec![p(100.0, 100.0, 1.0), p(200.0, 150.0, 1.1)];
        assert_eq!(judge(&mut pts), Some(0));
        // Nothing to compare against: no knee.
        let mut pts = vec![p(100.0, 100.0, f64::NAN)];
        assert_eq!(judge(&mut pts), None);
    }
}
