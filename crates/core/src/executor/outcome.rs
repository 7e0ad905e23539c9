//! What a run measured once it ended: [`RunOutcome`], why it stopped
//! ([`StopReason`]), and the coordinator's parts of it that the aggregated
//! statistics are joined with.

use crate::cpu::CpuTimes;
use crate::histograms::Stats;
use crate::schedule::Arrival;
use crate::selfcheck::ArrivalCheck;
use std::time::{Duration, SystemTime};

use super::observer::SlowestAnswer;
use super::segments::SegmentOutcome;
use super::threads::ThreadUse;

/// Why a run ended.
#[derive(Copy, Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    OperationCount,
    MaxExecutionTime,
    Interrupted,
    /// A segment of the rate profile missed its SLO.
    SloMissed,
    /// The rate profile or trace came to its end.
    ProfileEnd,
}

impl StopReason {
    /// As the JSON report and the store write it.
    pub fn name(self) -> &'static str {
        match self {
            StopReason::OperationCount => "operation_count",
            StopReason::MaxExecutionTime => "max_execution_time",
            StopReason::Interrupted => "interrupted",
            StopReason::SloMissed => "slo_missed",
            StopReason::ProfileEnd => "profile_end",
        }
    }
}

/// Everything a run measured.
#[derive(Debug)]
pub struct RunOutcome {
    pub started_at: SystemTime,
    /// From the first operation to the end of the run.
    pub elapsed: Duration,
    /// The part of `elapsed` the summary covers (warm-up excluded).
    pub measured: Duration,
    /// Summary statistics, warm-up excluded.
    pub total: Stats,
    /// Everything, warm-up included.
    pub all: Stats,
    /// How many intervals the time series has. The intervals themselves
    /// went to the observer as they closed and are not kept: memory stays
    /// flat however long the run.
    pub intervals: u64,
    pub slowest: Option<SlowestAnswer>,
    pub threads: usize,
    pub target: Option<f64>,
    pub arrival: Option<Arrival>,
    /// Arrivals the schedule released (open loop): the load offered, which
    /// under a Poisson schedule differs from the target by chance.
    pub scheduled: u64,
    pub cpu: CpuTimes,
    pub stop_reason: StopReason,
    /// Operations still in flight when the drain timeout ran out.
    pub abandoned: u64,
    pub seed: u64,
    /// Runtime threads the connections were spread over.
    pub runtime_threads: usize,
    /// Why that many, and how busy the busiest was.
    pub thread_use: ThreadUse,
    /// Whether the sends of a Poisson run looked Poisson (see
    /// [`crate::selfcheck`]); `None` for other runs or too few bins.
    pub arrival_check: Option<ArrivalCheck>,
    /// What the database's own counters did over the phase, where it tells
    /// (see [`crate::backend::counters`]); the executor leaves it `None`
    /// and the caller, which samples the server around the phase, fills it.
    pub server: Option<crate::backend::ServerStats>,
    /// The rate profile or trace the run followed (`None`: a constant
    /// rate or a closed loop), as given.
    pub rate_profile: Option<String>,
    /// The profile's segments, each summarised on its own (empty without).
    pub segments: Vec<SegmentOutcome>,
}

impl RunOutcome {
    /// Top-level operations per second over the measured period.
    pub fn throughput(&self) -> f64 {
        let s = self.measured.as_secs_f64();
        if s > 0.0 {
            self.total.ops_done as f64 / s
        } else {
            0.0
        }
    }

    /// Share of the offered operations that completed (open loop; 1 in
    /// closed loop). Below 0.95 the database did not keep up.
    pub fn served_fraction(&self) -> f64 {
        if self.target.is_none() || self.scheduled == 0 {
            1.0
        } else {
            self.all.ops_done as f64 / self.scheduled as f64
        }
    }

    pub fn interrupted(&self) -> bool {
        self.stop_reason == StopReason::Interrupted
    }
}

/// What the coordinator knows of a run besides the aggregated statistics.
pub(super) struct RunOutcomeParts {
    pub(super) started_at: SystemTime,
    pub(super) elapsed: Duration,
    pub(super) threads: usize,
    pub(super) target: Option<f64>,
    pub(super) arrival: Option<Arrival>,
    pub(super) scheduled: u64,
    pub(super) cpu: CpuTimes,
    pub(super) stop_reason: StopReason,
    pub(super) abandoned: u64,
    pub(super) seed: u64,
    pub(super) runtime_threads: usize,
    pub(super) thread_use: ThreadUse,
    pub(super) arrival_check: Option<ArrivalCheck>,
    pub(super) rate_profile: Option<String>,
}
