//! A rate profile's segments as people and tools read them: one line per
//! segment after YCSB's summary (starting with `#`, so parsers of the
//! summary skip it), and the JSON report's `segments`. Each segment counts
//! the operations whose intended start falls in it, however late they
//! ended, so a backlog carried into the next segment stays where it was
//! offered.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::executor::{knee, SegmentOutcome};
use crate::histograms::{LatencySummary, Stats};
use crate::run_record::RunRecord;

/// One segment in the JSON report.
#[derive(Serialize)]
pub struct SegmentReport {
    pub label: String,
    pub start_s: f64,
    pub end_s: f64,
    /// Operations per second the profile offered over it, on average.
    pub target_ops_per_sec: f64,
    /// Operations intended in it that ended, per second of its length.
    pub achieved_ops_per_sec: f64,
    pub operations: u64,
    pub ops: BTreeMap<&'static str, SegmentOp>,
    /// Under `rate.slo`: whether the segment held (absent when not judged).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub held: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub missed_because: Option<String>,
}

/// One operation kind within a segment.
#[derive(Serialize)]
pub struct SegmentOp {
    pub count: u64,
    pub failed: u64,
    pub service: LatencySummary,
    pub response: LatencySummary,
}

impl SegmentReport {
    pub fn of(s: &SegmentOutcome) -> SegmentReport {
        SegmentReport {
            label: s.segment.label.clone(),
            start_s: s.segment.start.as_secs_f64(),
            end_s: s.segment.end.as_secs_f64(),
            target_ops_per_sec: s.segment.mean_rate(),
            achieved_ops_per_sec: s.achieved(),
            operations: s.stats.ops_done,
            ops: s
                .stats
                .kinds()
                .map(|(k, o)| {
                    (
                        k.name(),
                        SegmentOp {
                            count: o.count(),
                            failed: o.failures(),
                            service: LatencySummary::of(&o.ok.service),
                            response: LatencySummary::of(&o.ok.response),
                        },
                    )
                })
                .collect(),
            held: s.verdict.as_ref().map(|v| v.held),
            missed_because: s.verdict.as_ref().and_then(|v| v.reason.clone()),
        }
    }
}

/// The knee of a judged staircase: the rate of the highest segment that
/// held before the first that missed.
pub fn knee_rate(run: &RunRecord) -> Option<f64> {
    knee(&run.segments).map(|s| s.segment.mean_rate())
}

/// Per operation kind of `stats`, its successful operations' response time
/// at each of `qs`: `READ 1.93/5.12 ms`.
pub fn response_text(stats: &Stats, qs: &[f64]) -> Vec<String> {
    stats
        .kinds()
        .map(|(k, o)| {
            let values: Vec<String> = qs
                .iter()
                .map(|&q| format!("{:.2}", o.ok.response.value_at_quantile(q) as f64 / 1e6))
                .collect();
            format!("{} {} ms", k.ycsb_name(), values.join("/"))
        })
        .collect()
}

/// The lines the summary prints for `run`'s segments; empty without.
pub fn lines(run: &RunRecord) -> String {
    let mut out = String::new();
    let n = run.segments.len();
    for (i, s) in run.segments.iter().enumerate() {
        let per_kind = response_text(&s.stats, &[0.5, 0.99]);
        let failed: u64 = s.stats.kinds().map(|(_, o)| o.failures()).sum();
        out.push_str(&format!(
            "# segment {} of {n}, {:.1}-{:.1} s, {}: target {:.0} ops/s, achieved {:.0} ops/s ({} ops{}); response p50/p99: {}{}\n",
            i + 1,
            s.segment.start.as_secs_f64(),
            s.segment.end.as_secs_f64(),
            s.segment.label,
            s.segment.mean_rate(),
            s.achieved(),
            s.stats.ops_done,
            if failed > 0 {
                format!(", {failed} failed")
            } else {
                String::new()
            },
            if per_kind.is_empty() {
                "-".to_string()
            } else {
                per_kind.join(", ")
            },
            s.verdict
                .as_ref()
                .map_or(String::new(), |v| format!("; {}", v.text())),
        ));
    }
    if run.segments.iter().any(|s| s.verdict.is_some()) {
        let slo = run
            .meta()
            .properties
            .get("rate.slo")
            .cloned()
            .unwrap_or_default();
        match knee(&run.segments) {
            Some(k) => out.push_str(&format!(
                "# knee: {:.0} ops/s ({}), the highest rate that held {slo}\n",
                k.segment.mean_rate(),
                k.segment.label
            )),
            None => out.push_str(&format!("# knee: none, the first segment missed {slo}\n")),
        }
    }
    out
}
