//! A rate profile's segments as people and tools read them: one line per
//! segment after YCSB's summary (starting with `#`, so parsers of the
//! summary skip it), and the JSON report's `segments`. Each segment counts
//! the operations whose intended start falls in it, however late they
//! ended, so a backlog carried into the next segment stays where it was
//! offered.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::executor::SegmentOutcome;
use crate::record::RunRecord;
use crate::recorder::LatencySummary;

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
}

/// One operation kind within a segment.
#[derive(Serialize)]
pub struct SegmentOp {
    pub count: u64,
    pub failed: u64,
    pub service: LatencySummary,
    pub response: LatencySummary,
}

fn achieved(s: &SegmentOutcome) -> f64 {
    let len = (s.segment.end - s.segment.start).as_secs_f64();
    if len > 0.0 {
        s.stats.ops_done as f64 / len
    } else {
        0.0
    }
}

impl SegmentReport {
    pub fn of(s: &SegmentOutcome) -> SegmentReport {
        SegmentReport {
            label: s.segment.label.clone(),
            start_s: s.segment.start.as_secs_f64(),
            end_s: s.segment.end.as_secs_f64(),
            target_ops_per_sec: s.segment.mean_rate(),
            achieved_ops_per_sec: achieved(s),
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
        }
    }
}

/// The lines the summary prints for `run`'s segments; empty without.
pub fn lines(run: &RunRecord) -> String {
    let mut out = String::new();
    let n = run.segments.len();
    for (i, s) in run.segments.iter().enumerate() {
        let ms = |ns: u64| ns as f64 / 1e6;
        let per_kind: Vec<String> = s
            .stats
            .kinds()
            .map(|(k, o)| {
                let r = &o.ok.response;
                format!(
                    "{} {:.2}/{:.2} ms",
                    k.ycsb_name(),
                    ms(r.value_at_quantile(0.5)),
                    ms(r.value_at_quantile(0.99))
                )
            })
            .collect();
        let failed: u64 = s.stats.kinds().map(|(_, o)| o.failures()).sum();
        out.push_str(&format!(
            "# segment {} of {n}, {:.1}-{:.1} s, {}: target {:.0} ops/s, achieved {:.0} ops/s ({} ops{}); response p50/p99: {}\n",
            i + 1,
            s.segment.start.as_secs_f64(),
            s.segment.end.as_secs_f64(),
            s.segment.label,
            s.segment.mean_rate(),
            achieved(s),
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
        ));
    }
    out
}
