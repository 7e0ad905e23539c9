//! What the store keeps, as Rust values: a run's description ([`RunMeta`]),
//! its state and totals ([`RunSummary`]), and everything it measured with
//! the histograms decoded ([`StoredRun`]).

use std::collections::BTreeMap;
use std::fmt;
use std::time::{Duration, SystemTime};

use serde::Serialize;
use sojourn_core::backend::Status;
use sojourn_core::cpu::CpuTimes;
use sojourn_core::op::OpKind;
use sojourn_core::recorder::{LatencySummary, Stats};

/// A stored run's id (see [`crate::new_run_id`]).
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
    /// PKB-style run URI; the client processes of one run share it.
    pub run_uri: String,
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
            id: RunId(crate::new_run_id()),
            run_uri: crate::new_run_uri(),
            started_at: std::time::UNIX_EPOCH + Duration::from_micros(now.as_micros() as u64),
            phase: phase.to_string(),
            workloads: Vec::new(),
            properties: BTreeMap::new(),
            backend: String::new(),
            threads: 1,
            target: None,
            labels: BTreeMap::new(),
            tool_version: env!("CARGO_PKG_VERSION").to_string(),
            host: crate::host_name(),
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
    /// `operation_count`, `max_execution_time` or `interrupted`.
    pub stop_reason: String,
    pub seed: u64,
    pub runtime_threads: u64,
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

/// How much of a run's time series [`crate::Store::load_with`] decodes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum IntervalDetail {
    /// Every interval's histograms, decoded into [`StoredInterval::stats`]
    /// (exact re-aggregation, interval logs). A decoded histogram takes
    /// about 256 KB, so a 10-minute run at one interval per second with
    /// two operation kinds needs about 600 MB.
    Histograms,
    /// Only the figures stored beside each interval's histograms
    /// ([`StoredInterval::ops`]): enough for time-series plots and batch
    /// means at a few hundred bytes per interval. The run's totals keep all
    /// their histograms either way.
    Figures,
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
    pub cpu: CpuTimes,
    /// Left out of the summary.
    pub warmup: bool,
    /// Per kind, in YCSB's order: counts by status and latency figures.
    pub ops: Vec<IntervalOp>,
    /// Per kind: counts by status and the histograms of successful
    /// operations (failed operations' latencies are kept in the totals
    /// only), when loaded with [`IntervalDetail::Histograms`]; otherwise
    /// only `ops_done` is set.
    pub stats: Stats,
    /// Scheduling lag over the interval (open loop).
    pub lag: Option<LatencySummary>,
}

/// Everything stored about a run.
#[derive(Clone, Debug)]
pub struct StoredRun {
    pub summary: RunSummary,
    pub warnings: Vec<String>,
    /// The summary's statistics (warm-up excluded), with every histogram:
    /// service and response time of successful and of failed operations,
    /// and the scheduling lag. Empty until the run finished; see
    /// [`StoredRun::totals_or_intervals`] for a run that never did.
    pub total: Stats,
    pub intervals: Vec<StoredInterval>,
    /// What the database's own counters did over the run, where it tells.
    pub server: Option<sojourn_core::backend::ServerStats>,
}

impl StoredRun {
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

/// Which runs `list` returns. Every field set must match.
#[derive(Clone, Debug, Default)]
pub struct Filter {
    /// Each `(key, value)` must be among the run's labels.
    pub labels: Vec<(String, String)>,
    /// One of the run's workload names equals this.
    pub workload: Option<String>,
    /// The backend description contains this.
    pub backend: Option<String>,
    pub phase: Option<String>,
    pub status: Option<RunStatus>,
    pub run_uri: Option<String>,
    /// Started at or after.
    pub since: Option<SystemTime>,
    /// Started before.
    pub until: Option<SystemTime>,
    /// At most this many, the newest.
    pub limit: Option<usize>,
}

/// A value from `results query`.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Value {
    Null,
    Integer(i64),
    Real(f64),
    Text(String),
    Blob(Vec<u8>),
}

impl Value {
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Value::Text(t) => Some(t),
            _ => None,
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Null => f.write_str("NULL"),
            Value::Integer(i) => write!(f, "{i}"),
            Value::Real(r) => write!(f, "{r}"),
            Value::Text(t) => f.write_str(t),
            Value::Blob(b) => write!(f, "<{} bytes>", b.len()),
        }
    }
}

/// The rows of a read-only query.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct QueryResult {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<Value>>,
}
