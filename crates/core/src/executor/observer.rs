//! What a run reports while it goes: the [`Observer`] called once per
//! interval, the [`Interval`]s of the time series and the [`Progress`]
//! handed to it.

use crate::backend::Status;
use crate::cpu::CpuTimes;
use crate::histograms::{LatencySummary, Stats};
use crate::op::OpKind;
use std::time::Duration;

/// Called once per interval, off the hot path, with what that interval
/// recorded. The CLI prints status lines and progress from it, and records
/// the time series in the results store as the run goes.
pub trait Observer: Send + Sync {
    fn interval(&self, _progress: &Progress<'_>) {}

    /// The interval as it enters the time series (histograms encoded),
    /// right after [`Observer::interval`]; intervals that recorded nothing
    /// and lasted no time are skipped. The run keeps none of them (see
    /// [`RunOutcome::intervals`](super::outcome::RunOutcome::intervals)): an observer that wants the time series
    /// stores it, or keeps it as [`KeepSeries`] does.
    fn interval_closed(&self, _interval: &Interval) {}
}

/// An observer that ignores everything.
pub struct Quiet;
impl Observer for Quiet {}

/// An observer that keeps every closed interval in memory, for callers
/// that want a short run's whole time series at hand (tests, library
/// users). A run left going for days streams its intervals to a store
/// instead, as `sojourn run` does, and its memory stays flat.
#[derive(Default)]
pub struct KeepSeries(parking_lot::Mutex<Vec<Interval>>);

impl KeepSeries {
    pub fn into_intervals(self) -> Vec<Interval> {
        self.0.into_inner()
    }
}

impl Observer for KeepSeries {
    fn interval_closed(&self, interval: &Interval) {
        self.0.lock().push(interval.clone());
    }
}

/// The interval in which the run's slowest answer came (a timeout
/// included), for the stall warning, which places a stall in time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlowestAnswer {
    pub service_ns: u64,
    pub interval_start: Duration,
    pub interval_length: Duration,
}

/// One interval as it ends.
pub struct Progress<'a> {
    pub elapsed: Duration,
    pub interval_length: Duration,
    pub interval: &'a Stats,
    pub ops_done: u64,
    pub expected_ops: Option<u64>,
    pub max_execution_time: Option<Duration>,
}

/// One interval of the time series.
#[derive(Clone, Debug)]
pub struct Interval {
    pub start: Duration,
    pub length: Duration,
    pub ops_done: u64,
    /// Arrivals the schedule released over the interval (open loop): the
    /// load offered, to set beside what was achieved.
    pub offered: Option<u64>,
    pub cpu: CpuTimes,
    pub warmup: bool,
    pub kinds: Vec<IntervalKind>,
    pub lag: Option<LatencySummary>,
}

impl Interval {
    /// The interval whose statistics are `stats`, its histograms encoded
    /// for the time series.
    pub fn of(
        stats: &Stats,
        start: Duration,
        length: Duration,
        cpu: CpuTimes,
        warmup: bool,
    ) -> Interval {
        Interval {
            start,
            length,
            ops_done: stats.ops_done,
            offered: None,
            cpu,
            warmup,
            kinds: stats
                .kinds()
                .map(|(kind, s)| IntervalKind {
                    kind,
                    statuses: s.statuses,
                    service: LatencySummary::of(&s.ok.service),
                    response: LatencySummary::of(&s.ok.response),
                    service_hist: crate::hist_codec::encode(&s.ok.service),
                    response_hist: crate::hist_codec::encode(&s.ok.response),
                })
                .collect(),
            lag: stats.lag.as_deref().map(LatencySummary::of),
        }
    }
}

/// One operation kind within an interval.
#[derive(Clone, Debug)]
pub struct IntervalKind {
    pub kind: OpKind,
    pub statuses: [u64; Status::COUNT],
    pub service: LatencySummary,
    pub response: LatencySummary,
    /// The interval's histograms in HdrHistogram's compressed V2 encoding,
    /// so interval logs and exact re-aggregation stay possible.
    pub service_hist: Vec<u8>,
    pub response_hist: Vec<u8>,
}
