//! A rate profile's segments as a run measures them: each segment's
//! operations (by intended start), and under a segment SLO the verdict
//! that stops a staircase at its first missed step, and the knee.

use std::time::Duration;

use crate::histograms::Stats;
use crate::rate::Segment;

/// What each segment of a profile must hold (see `RunConfig::segment_slo`).
#[derive(Clone, Debug, PartialEq)]
pub struct SegmentSlo {
    pub slos: Vec<crate::capacity::Slo>,
    /// Highest share of failed operations a segment may have.
    pub max_error_rate: f64,
}

impl SegmentSlo {
    /// How long after a segment's end its verdict waits: an operation of
    /// the segment not done by then has outlived every limit, and counts
    /// as not served. (Verdicts come at interval ticks, which collect
    /// every operation ended before them.)
    pub(super) fn settle(&self) -> Duration {
        Duration::from_nanos(self.slos.iter().map(|s| s.limit_ns).max().unwrap_or(0))
    }
}

/// One segment of a rate profile: what was offered over it and every
/// operation whose intended start falls in it, however late it ended.
#[derive(Debug, Clone)]
pub struct SegmentOutcome {
    pub segment: Segment,
    pub stats: Stats,
    /// Arrivals the schedule released with an intended start in the
    /// segment, where the run counted them (`None` read back from a store).
    pub offered: Option<u64>,
    /// Under a segment SLO: whether it held, and if not why; `None` for a
    /// segment not judged (no SLO, or the run stopped before it).
    pub verdict: Option<SegmentVerdict>,
}

/// Whether a segment held its SLO (`RunConfig::segment_slo`).
#[derive(Debug, Clone, PartialEq)]
pub struct SegmentVerdict {
    pub held: bool,
    /// Why it missed (the first SLO or limit it broke).
    pub reason: Option<String>,
}

impl SegmentVerdict {
    /// `held`, or `missed: ` and why.
    pub fn text(&self) -> String {
        if self.held {
            "held".into()
        } else {
            format!("missed: {}", self.reason.as_deref().unwrap_or("?"))
        }
    }
}

impl SegmentOutcome {
    /// Operations intended in the segment that ended, per second of it.
    pub fn achieved(&self) -> f64 {
        let len = (self.segment.end - self.segment.start).as_secs_f64();
        if len > 0.0 {
            self.stats.ops_done as f64 / len
        } else {
            0.0
        }
    }

    /// Judge the segment against `slo` (as `capacity` judges a step).
    /// The share served is of the arrivals released in it, not of its
    /// target times its length: a Poisson step of 600 arrivals a second
    /// offers 5% fewer than that one time in nine.
    pub fn judge(&self, slo: &SegmentSlo) -> SegmentVerdict {
        let offered = self.offered.map_or(self.segment.expected, |n| n as f64);
        let served = if offered > 0.0 {
            (self.stats.ops_done as f64 / offered).min(1.0)
        } else {
            1.0
        };
        let v = crate::capacity::judge(
            crate::capacity::StepFigures {
                achieved: self.achieved(),
                served,
                total: &self.stats,
            },
            self.segment.mean_rate(),
            &slo.slos,
            slo.max_error_rate,
        );
        SegmentVerdict {
            held: v.sustained,
            reason: v.reason,
        }
    }
}

/// The highest-rate segment that held before the first that missed: the
/// knee of a staircase judged by a segment SLO.
pub fn knee(segments: &[SegmentOutcome]) -> Option<&SegmentOutcome> {
    segments
        .iter()
        .take_while(|s| s.verdict.as_ref().is_none_or(|v| v.held))
        .filter(|s| s.verdict.as_ref().is_some_and(|v| v.held))
        .max_by(|a, b| a.segment.mean_rate().total_cmp(&b.segment.mean_rate()))
}
