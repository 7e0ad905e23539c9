//! How a run is driven: [`RunConfig`], its connection [`Group`]s, the
//! pacer's lag budget, and the [`StopHandle`] that ends a run early.

use crate::rate::{Segment, Target};
use crate::schedule::Arrival;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use super::segments::SegmentSlo;

/// How a run is driven.
#[derive(Clone, Debug)]
pub struct RunConfig {
    /// The connections, shared out into groups in order, each paced and
    /// counted on its own: the one place a run's offered rate and
    /// operation count live. A plain run is one group of every connection.
    pub groups: Vec<Group>,
    pub arrival: Arrival,
    pub max_execution_time: Option<Duration>,
    /// Intervals that start before this are left out of the summary.
    pub warmup: Duration,
    pub seed: u64,
    /// Length of one time-series interval.
    pub interval: Duration,
    /// How long in-flight operations may take to finish once the run stops.
    pub drain_timeout: Duration,
    /// OS threads, each with its own single-threaded runtime; 0 sizes them
    /// to the connections and the rate (see [`RuntimeThreads::size`](super::threads::RuntimeThreads::size)).
    pub runtime_threads: usize,
    /// Judge each segment of a rate profile as it ends and stop the run at
    /// the first that misses (Noria's method: raise the rate step by step
    /// until response time leaves its SLO).
    pub segment_slo: Option<SegmentSlo>,
    /// Open loop: how late the pacer may release an arrival so that it
    /// wakes less often (`pacer.lag_budget_us`, see [`DEFAULT_LAG_BUDGET`]).
    pub lag_budget: Duration,
}

/// The pacer's default lag budget: how long an arrival may wait for the
/// pacer's wake-up, so that at rate r it wakes about once per 1 + r × 50 µs
/// arrivals rather than once per arrival. The pacer wakes at the last
/// arrival within this much (less its own measured lateness) of the first
/// one it has not released, the fewest wake-ups that keep each wait within
/// it. A wake-up costs the thread a context switch and two system calls,
/// more than most operations; the budget is a small fraction of the
/// self-check's bound and far inside the latency of any networked
/// database.
pub const DEFAULT_LAG_BUDGET: Duration = Duration::from_micros(50);

impl RunConfig {
    /// Connections the run uses: every group's.
    pub fn workers(&self) -> usize {
        self.groups.iter().map(|g| g.workers).sum()
    }

    /// Operations per second offered in total, on average over a rate
    /// profile: open loop at the summed rate when every group is, else
    /// `None` (closed loop somewhere).
    pub fn target(&self) -> Option<f64> {
        self.groups
            .iter()
            .map(|g| g.target.as_ref().map(Target::mean))
            .sum()
    }

    /// The highest total rate offered at any moment (as [`RunConfig::target`]
    /// under constant rates): what the runtime threads are sized for.
    pub fn peak_target(&self) -> Option<f64> {
        self.groups
            .iter()
            .map(|g| g.target.as_ref().map(Target::peak))
            .sum()
    }

    /// The summed rate when every group offers a constant one: the runs
    /// the Poisson self-check can judge.
    pub fn constant_target(&self) -> Option<f64> {
        self.groups
            .iter()
            .map(|g| g.target.as_ref().and_then(Target::as_constant))
            .sum()
    }

    /// Whether some group's rate changes over time (a profile or trace).
    pub fn shaped(&self) -> bool {
        self.groups
            .iter()
            .any(|g| g.target.as_ref().is_some_and(|t| t.as_constant().is_none()))
    }

    /// The segments of the run's rate profile that results break out
    /// (empty without one): a profile is the one group's.
    pub fn segments(&self) -> Vec<Segment> {
        match self.groups.as_slice() {
            [g] => g.target.as_ref().map(Target::segments).unwrap_or_default(),
            _ => Vec::new(),
        }
    }

    /// Operations the run performs, when every group has a count.
    pub fn operation_count(&self) -> Option<u64> {
        self.groups.iter().map(|g| g.operation_count).sum()
    }

    /// When the last group's profile or trace ends, when every group
    /// follows one (`None` otherwise: some group ends only by its count or
    /// the time limit).
    pub fn profile_length(&self) -> Option<Duration> {
        self.groups
            .iter()
            .map(|g| g.target.as_ref().and_then(Target::length))
            .try_fold(Duration::ZERO, |longest, l| Some(longest.max(l?)))
            .filter(|_| !self.groups.is_empty())
    }
}

impl Default for RunConfig {
    fn default() -> Self {
        RunConfig {
            groups: vec![Group::all(1, None, Some(1000))],
            arrival: Arrival::Poisson,
            max_execution_time: None,
            warmup: Duration::ZERO,
            seed: 0,
            interval: Duration::from_secs(1),
            drain_timeout: Duration::from_secs(10),
            runtime_threads: 0,
            segment_slo: None,
            lag_budget: DEFAULT_LAG_BUDGET,
        }
    }
}

/// A share of a run's connections with a pace and a budget of its own:
/// a workload with separate writer and reader pools runs two groups, each
/// open loop at its own target or closed loop. A plain run is one group
/// made of every connection.
#[derive(Clone, Debug, PartialEq)]
pub struct Group {
    pub workers: usize,
    /// Operations per second this group offers, constant or following a
    /// profile or trace; `None` is closed loop.
    pub target: Option<Target>,
    /// Steps this group performs; `None` runs until the deadline.
    pub operation_count: Option<u64>,
}

impl Group {
    /// `workers` connections offering `target` operations per second
    /// (closed loop when `None`), `operation_count` in all.
    pub fn all(workers: usize, target: Option<f64>, operation_count: Option<u64>) -> Group {
        Group::following(workers, target.map(Target::constant), operation_count)
    }

    /// `workers` connections offering what `target` says.
    pub fn following(
        workers: usize,
        target: Option<Target>,
        operation_count: Option<u64>,
    ) -> Group {
        Group {
            workers,
            target,
            operation_count,
        }
    }
}

/// Lets the caller stop a run (Ctrl+C): scheduling stops, in-flight
/// operations drain for at most the drain timeout, results are kept and
/// marked interrupted. The coordinator polls it every few milliseconds.
#[derive(Clone, Default)]
pub struct StopHandle(Arc<AtomicBool>);

impl StopHandle {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn stop(&self) {
        self.0.store(true, Ordering::SeqCst);
    }

    pub fn is_stopped(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}
