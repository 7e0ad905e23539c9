//! What a run is and what it measured, as every export format and report
//! reads it: its description ([`RunMeta`]), state and totals
//! ([`RunSummary`]), and everything it measured with the histograms
//! ([`RunRecord`]). A record comes from a run that just ended
//! ([`RunRecord::of_outcome`]) or is read back from the results store; the
//! formats cannot tell which.

use std::collections::BTreeMap;
use std::fmt;
use std::time::{Duration, SystemTime};

use serde::Serialize;

use crate::backend::{ServerStats, Status};
use crate::cpu::CpuTimes;
use crate::executor::{RunOutcome, SegmentOutcome, ThreadUse};
use crate::histograms::{LatencySummary, Stats};
use crate::op::OpKind;
use crate::selfcheck::SelfCheck;

/// A stored run's id (see [`new_run_id`]).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct RunId(pub String);

impl RunId {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for RunId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Where a run stands.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    /// Begun and not finished; shown as failed once its process is gone.
    Running,
    Completed,
    /// Stopped by Ctrl+C; what ran is kept.
    Interrupted,
    /// The phase failed after it began, or its process died.
    Failed,
}

impl RunStatus {
    pub const ALL: [RunStatus; 4] = [
        RunStatus::Running,
        RunStatus::Completed,
        RunStatus::Interrupted,
        RunStatus::Failed,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Completed => "completed",
            RunStatus::Interrupted => "interrupted",
            RunStatus::Failed => "failed",
        }
    }

    pub fn parse(s: &str) -> Option<RunStatus> {
        RunStatus::ALL.into_iter().find(|st| st.as_str() == s)
    }
}

impl fmt::Display for RunStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a run is, known when it begins. The caller removes secrets:
/// property values and the backend description are stored as given.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunMeta {
    pub id: RunId,
    /// PKB-style run URI: one benchmark's stages (its load and each of its
    /// runs) share it, and so do the client processes of each stage.
    pub run_uri: String,
    /// Which stage of its run URI this is (0 for the load and for a lone
    /// run; a suite counts its run stages from 1). The client processes of
    /// one stage share URI, phase and stage index, and merge.
    pub stage_index: u32,
    pub started_at: SystemTime,
    /// `load` or `run`.
    pub phase: String,
    /// Workload file names as given (`workloada`), in order.
    pub workloads: Vec<String>,
    /// Every resolved property, secrets redacted.
    pub properties: BTreeMap<String, String>,
    /// The backend as `Backend::describe` gives it (password-free).
    pub backend: String,
    /// Concurrent connections.
    pub threads: u64,
    /// Offered operations per second in total; `None` is closed loop.
    pub target: Option<f64>,
    /// `--label k=v` and PKB `metadata` pairs.
    pub labels: BTreeMap<String, String>,
    pub tool_version: String,
    pub host: String,
    /// This process's share of a multi-process run: 0..client_count.
    pub client_index: u32,
    pub client_count: u32,
    pub pid: u32,
    /// The command line, secrets redacted.
    pub command_line: String,
    /// Which latency blocks the YCSB summary prints: `op`, `intended` or
    /// `both` (the plan's resolved `measurement.interval`).
    pub measurement_interval: String,
    /// The summary's percentiles (`hdrhistogram.percentiles`, resolved).
    pub percentiles: Vec<f64>,
    /// Left out of the summary at the start of the run.
    pub warmup: Duration,
    pub seed: u64,
}

impl RunMeta {
    /// A run of `phase` starting now in this process: a fresh id and run
    /// URI, this host and pid, this sojourn's version, one client.
    pub fn new(phase: &str) -> RunMeta {
        // The store keeps times to the microsecond; starting from a whole
        // microsecond makes a stored run read back equal.
        let now = SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        RunMeta {
            id: RunId(new_run_id()),
            run_uri: new_run_uri(),
            stage_index: 0,
            started_at: std::time::UNIX_EPOCH + Duration::from_micros(now.as_micros() as u64),
            phase: phase.to_string(),
            workloads: Vec::new(),
            properties: BTreeMap::new(),
            backend: String::new(),
            threads: 1,
            target: None,
            labels: BTreeMap::new(),
            tool_version: env!("CARGO_PKG_VERSION").to_string(),
            host: host_name(),
            client_index: 0,
            client_count: 1,
            pid: std::process::id(),
            command_line: String::new(),
            measurement_interval: "op".to_string(),
            percentiles: vec![95.0, 99.0],
            warmup: Duration::ZERO,
            seed: 0,
        }
    }

    /// This metadata with every secret removed by the one rule of
    /// [`crate::redact`]: property and label values by their names and by
    /// any URL or keyword string in them, the backend's and the command
    /// line's URLs. Whatever stores or prints a run's metadata goes
    /// through here, so no field can be forgotten by one of them.
    pub fn redacted(&self) -> RunMeta {
        RunMeta {
            properties: crate::redact::pairs(&self.properties),
            labels: crate::redact::pairs(&self.labels),
            backend: crate::redact::redact_url(&self.backend),
            command_line: crate::redact::text(&self.command_line),
            ..self.clone()
        }
    }
}

/// The run's own figures, known once it finished.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunTotals {
    /// From the first operation to the end of the run.
    pub elapsed: Duration,
    /// The part of `elapsed` the summary covers (warm-up excluded).
    pub measured: Duration,
    /// Top-level operations in the summary (warm-up excluded).
    pub operations: u64,
    /// Top-level operations including the warm-up.
    pub operations_all: u64,
    /// Achieved operations per second over `measured`.
    pub throughput: f64,
    /// Arrivals the schedule released per second (open loop).
    pub offered: Option<f64>,
    pub scheduled: u64,
    /// Operations still in flight when the drain timeout ran out.
    pub abandoned: u64,
    /// `operation_count`, `max_execution_time`, `interrupted`,
    /// `slo_missed` or `profile_end` ([`crate::executor::StopReason::name`]).
    pub stop_reason: String,
    pub seed: u64,
    pub runtime_threads: u64,
    /// Why that many runtime threads, and how busy the busiest was; `None`
    /// for runs stored before it was kept.
    pub thread_use: Option<ThreadUse>,
    /// The client's own CPU time over the run.
    pub cpu: CpuTimes,
}

/// One run as `results list` shows it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunSummary {
    pub meta: RunMeta,
    pub status: RunStatus,
    pub ended_at: Option<SystemTime>,
    /// Why a failed run failed.
    pub error: Option<String>,
    /// `None` until the run finished (and for runs that failed before).
    pub totals: Option<RunTotals>,
    /// Time-series intervals stored so far.
    pub intervals: u64,
}

/// Latency figures of one interval and kind, as stored beside its
/// histogram (microseconds). After merging intervals that were loaded
/// without histograms the percentiles are NaN: percentiles cannot be
/// combined without the histograms.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct IntervalFigures {
    pub mean_us: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub p99_9_us: f64,
    pub max_us: f64,
}

impl IntervalFigures {
    /// The figures the store keeps of one of an interval's histograms.
    pub fn of(s: &LatencySummary) -> IntervalFigures {
        IntervalFigures {
            mean_us: s.mean_us,
            p50_us: s.p50_us,
            p99_us: s.p99_us,
            p99_9_us: s.p99_9_us,
            max_us: s.max_us,
        }
    }
}

/// One operation kind within a stored interval.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct IntervalOp {
    pub kind: OpKind,
    /// Counts by [`Status::index`].
    pub statuses: [u64; Status::COUNT],
    /// Successful operations: actual send to reply.
    pub service: IntervalFigures,
    /// Successful operations: intended send to reply.
    pub response: IntervalFigures,
}

impl IntervalOp {
    pub fn count(&self) -> u64 {
        self.statuses.iter().sum()
    }
}

/// One time-series interval read back.
#[derive(Clone, Debug)]
pub struct StoredInterval {
    /// Since the run's first operation.
    pub start: Duration,
    pub length: Duration,
    pub ops_done: u64,
    /// Arrivals released over it (open loop; `None` before schema 8).
    pub offered: Option<u64>,
    pub cpu: CpuTimes,
    /// Left out of the summary.
    pub warmup: bool,
    /// Per kind, in YCSB's order: counts by status and latency figures.
    pub ops: Vec<IntervalOp>,
    /// Per kind: counts by status and the histograms of successful
    /// operations (failed operations' latencies are kept in the totals
    /// only), when loaded with the store's `IntervalDetail::Histograms`; otherwise
    /// only `ops_done` is set.
    pub stats: Stats,
    /// Scheduling lag over the interval (open loop).
    pub lag: Option<LatencySummary>,
}

/// Everything known about a run: what the store keeps, or what a run
/// that just ended measured.
#[derive(Clone, Debug)]
pub struct RunRecord {
    pub summary: RunSummary,
    pub warnings: Vec<String>,
    /// Whether the load offered was the load intended, as checked when the
    /// run ended; `None` when read back from the store, which keeps the
    /// figures it rests on but not the arrival test's bins.
    pub self_check: Option<SelfCheck>,
    /// The summary's statistics (warm-up excluded), with every histogram:
    /// service and response time of successful and of failed operations,
    /// and the scheduling lag. Empty until the run finished; see
    /// [`RunRecord::totals_or_intervals`] for a run that never did.
    pub total: Stats,
    pub intervals: Vec<StoredInterval>,
    /// What the database's own counters did over the run, where it tells.
    pub server: Option<ServerStats>,
    /// A rate profile's segments, each summarised on its own (empty for a
    /// constant rate or a closed loop).
    pub segments: Vec<SegmentOutcome>,
}

impl RunTotals {
    /// The figures of a run that has ended.
    pub fn of(outcome: &RunOutcome) -> RunTotals {
        let elapsed = outcome.elapsed.as_secs_f64();
        RunTotals {
            elapsed: outcome.elapsed,
            measured: outcome.measured,
            operations: outcome.total.ops_done,
            operations_all: outcome.all.ops_done,
            throughput: outcome.throughput(),
            offered: outcome.target.map(|_| {
                if elapsed > 0.0 {
                    outcome.scheduled as f64 / elapsed
                } else {
                    0.0
                }
            }),
            scheduled: outcome.scheduled,
            abandoned: outcome.abandoned,
            stop_reason: outcome.stop_reason.name().to_string(),
            seed: outcome.seed,
            runtime_threads: outcome.runtime_threads as u64,
            thread_use: Some(outcome.thread_use),
            cpu: outcome.cpu,
        }
    }
}

impl RunRecord {
    /// The record of a run that just ended, described by `meta`, with its
    /// warnings: what storing it and reading it back gives, the time
    /// series aside (the run handed each interval to the store as it closed
    /// and kept none: only the count is here), and the self-check the
    /// store does not keep.
    pub fn of_outcome(mut meta: RunMeta, outcome: &RunOutcome, warnings: Vec<String>) -> RunRecord {
        // As the store does: the run starts at its first operation.
        meta.started_at = outcome.started_at;
        let status = if outcome.interrupted() {
            RunStatus::Interrupted
        } else {
            RunStatus::Completed
        };
        RunRecord {
            summary: RunSummary {
                meta,
                status,
                ended_at: Some(SystemTime::now()),
                error: None,
                totals: Some(RunTotals::of(outcome)),
                intervals: outcome.intervals,
            },
            warnings,
            self_check: outcome.target.map(|_| {
                let lag_p99_us = outcome
                    .all
                    .lag
                    .as_deref()
                    .filter(|l| !l.is_empty())
                    .map_or(0.0, |l| l.value_at_quantile(0.99) as f64 / 1e3);
                SelfCheck::new(
                    outcome.served_fraction(),
                    lag_p99_us,
                    outcome.arrival_check.clone(),
                )
            }),
            total: outcome.total.clone(),
            // The time series went to the store as the run went; the run
            // does not keep it.
            intervals: Vec::new(),
            server: outcome.server.clone(),
            segments: outcome.segments.clone(),
        }
    }

    /// Achieved operations per second over [`RunRecord::measured`]: the
    /// stored figure, or the non-warm-up intervals' operations over their
    /// span for a run that never finished.
    pub fn throughput(&self) -> f64 {
        if let Some(t) = &self.summary.totals {
            return t.throughput;
        }
        let ops: u64 = self
            .intervals
            .iter()
            .filter(|i| !i.warmup)
            .map(|i| i.ops_done)
            .sum();
        let s = self.measured().as_secs_f64();
        if s > 0.0 {
            ops as f64 / s
        } else {
            0.0
        }
    }

    pub fn id(&self) -> &RunId {
        &self.summary.meta.id
    }

    pub fn meta(&self) -> &RunMeta {
        &self.summary.meta
    }

    /// The totals if the run finished; otherwise the sum of its stored
    /// non-warm-up intervals (successful operations' histograms only), so a
    /// run that died still shows what it measured.
    pub fn totals_or_intervals(&self) -> Stats {
        if self.summary.totals.is_some() {
            return self.total.clone();
        }
        let mut s = Stats::default();
        for iv in self.intervals.iter().filter(|iv| !iv.warmup) {
            s.add(&iv.stats);
        }
        s
    }

    /// The measured period: the stored figure, or the span of the
    /// non-warm-up intervals for a run that never finished.
    pub fn measured(&self) -> Duration {
        match &self.summary.totals {
            Some(t) => t.measured,
            None => self
                .intervals
                .iter()
                .filter(|iv| !iv.warmup)
                .map(|iv| iv.length)
                .sum(),
        }
    }
}

/// A new run id: a random UUID, so ids never collide across client
/// machines writing to one store, and a short prefix (as `results list`
/// shows) already tells runs apart. Runs are ordered by their start time,
/// not by id.
pub fn new_run_id() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// A PKB-style run URI: eight hex digits, as PerfKitBenchmarker takes the
/// tail of a UUID4. Client processes of one run share it.
pub fn new_run_uri() -> String {
    let u = uuid::Uuid::new_v4().simple().to_string();
    u[u.len() - 8..].to_string()
}

/// This machine's host name ("localhost" if it cannot be read).
pub fn host_name() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: gethostname writes at most buf.len() bytes into our buffer.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if rc != 0 {
        return "localhost".to_string();
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    let name = String::from_utf8_lossy(&buf[..end]).into_owned();
    if name.is_empty() {
        "localhost".to_string()
    } else {
        name
    }
}
