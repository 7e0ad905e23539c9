//! What a comparison says, as `--format json` prints it: per operation
//! kind each figure in both runs, its change, how significance was judged
//! and the verdict.

use serde::Serialize;

/// Which way is better.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Better {
    Higher,
    Lower,
}

/// What the change amounts to.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Better,
    Worse,
    Unchanged,
}

/// How significance was judged for one figure.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "method", rename_all = "snake_case")]
pub enum Test {
    /// Welch's t-test on batch means.
    Welch {
        t: f64,
        df: f64,
        p: f64,
        /// Batches and intervals per batch in A and in B.
        batches: [usize; 2],
        batch_size: [usize; 2],
        /// Standard errors of A's and B's means.
        std_error: [f64; 2],
        /// Lag-1 autocorrelation left among A's and B's batch means (the
        /// standard errors are inflated for it).
        lag1: [f64; 2],
    },
    /// 95% confidence intervals, compared for overlap.
    Intervals {
        /// `order statistics` or `order statistics and interval bootstrap`
        /// for A and for B.
        how: [String; 2],
    },
    /// No test was possible (too few intervals, no operations).
    None { reason: String },
}

/// One figure of one operation kind in both runs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Figure {
    /// `throughput`, `service mean`, `response p99`, ...
    pub metric: String,
    /// `ops/s` or `ms`.
    pub unit: &'static str,
    pub a: f64,
    pub b: f64,
    /// 95% confidence intervals of A and B: for a mean, mean -+ t * se.
    pub a_ci95: Option<[f64; 2]>,
    pub b_ci95: Option<[f64; 2]>,
    /// `(b - a) / a` in percent; `None` when A is zero.
    pub change_pct: Option<f64>,
    pub better: Better,
    /// Whether the configurations differ: never claimed from one run per
    /// side (see [`crate::groups`] for groups of repetitions), so false.
    pub significant: bool,
    /// Whether the two runs' figures differ beyond each run's own sampling
    /// error (the test below); says nothing of run-to-run noise.
    pub beyond_sampling_error: bool,
    /// `unchanged` for one run per side.
    pub verdict: Verdict,
    pub test: Test,
}

/// Every figure of one operation kind (`all` is every top-level
/// operation: throughput only).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Operation {
    pub operation: String,
    pub figures: Vec<Figure>,
}

/// What a comparison says about each run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunBrief {
    pub id: String,
    pub phase: String,
    pub workload: String,
    pub backend: String,
    pub target: Option<f64>,
    pub throughput: f64,
    pub status: String,
    pub measured_s: f64,
    pub intervals: usize,
    /// The most common interval length, in seconds.
    pub interval_s: f64,
}

/// The whole comparison, as `--format json` prints it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Comparison {
    pub a: RunBrief,
    pub b: RunBrief,
    pub alpha: f64,
    /// How significance was judged, in words.
    pub method: String,
    /// Differences in what ran that make the comparison questionable.
    pub caveats: Vec<String>,
    pub operations: Vec<Operation>,
}
