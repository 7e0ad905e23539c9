//! Running operations: N concurrent workers, each with its own connection,
//! driven either back to back (closed loop) or by one global schedule (open
//! loop), with every operation's service and response time recorded.
//!
//! Runtime threads: the connections are spread round-robin over a few OS
//! threads (as few as the load needs, at most one per core; see
//! [`RuntimeThreads`]), each running a single-threaded tokio runtime that
//! opens its own connections and polls their sockets. Nothing on the hot
//! path crosses threads: no operation needs a futex wake-up, which on a
//! virtual machine costs more CPU than the operation itself.
//!
//! Open loop: there is one schedule for the whole run (so `-target 10000`
//! offers 10,000 operations per second in total), dealt round-robin to the
//! threads: thread t takes arrivals t, t+T, t+2T, ... Each thread's pacer
//! task sleeps on a timerfd (microsecond precision, where tokio's own timer
//! has 1 ms) until its next arrival and wakes an idle worker. A worker takes
//! an arrival only once it is due, so when every worker is busy, arrivals
//! wait in the client without being materialised and their wait counts in
//! response time: the queue is the schedule itself. A worker that takes an
//! arrival and sees the next one due wakes a peer, so a burst fans out.
//!
//! Closed loop: workers claim operations from a shared budget in chunks and
//! yield between chunks, so connections share the work even when a backend
//! never suspends (`null:`).
//!
//! The calling thread coordinates: it releases all threads at one start
//! instant once every connection is open, collects an interval of results
//! every `interval`, and handles the deadline, Ctrl+C and the drain timeout.
//!
//! What a worker does per operation is a [`Step`]: the workload decides the
//! operation and calls the connection; the [`Meter`] records timings. A
//! [`Pool`] holds connections open across runs and is typed by the
//! connection alone, so each run brings steps of its own type (a load, then
//! a run; the steps of a capacity search; a workload's own step type found
//! through a backend's extensions) and every step is a direct call.

mod aggregate;
mod meter;
mod runtime_thread;
mod segments;
mod threads;

use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Barrier, OnceLock};
use std::time::{Duration, Instant, SystemTime};

use crate::backend::{Backend, BackendError, Schema, Status, Threading};
use crate::cpu::CpuTimes;
use crate::histograms::{LatencySummary, Recorder, Stats};
use crate::op::OpKind;
use crate::rate::{Segment, Target};
use crate::schedule::{Arrival, Schedule};
use crate::selfcheck::{ArrivalCheck, Arrivals, StartBins};

use aggregate::Aggregator;
use meter::take_step;
pub use meter::Meter;
pub use runtime_thread::spawn_beside;
use runtime_thread::{Job, Lane, Report, ThreadCtx};
pub use segments::{knee, SegmentOutcome, SegmentSlo, SegmentVerdict};
pub use threads::{
    RuntimeThreads, ThreadUse, ThreadsWhy, CONNECTIONS_PER_THREAD, RATE_PER_THREAD,
    THREAD_SATURATED,
};

/// One operation (or a compound such as read-modify-write) on one
/// connection. Implemented by workloads. In a closed loop the worker's
/// next step may start at the moment of this step's last
/// [`Meter::record`] (see `Meter::ended`), so a step records its last
/// call as the last thing it does that takes time.
pub trait Step<C>: Send + 'static {
    fn step(&mut self, conn: &mut C, meter: &mut Meter) -> impl Future<Output = ()> + Send;

    /// Once on each connection after its worker's last step of a phase
    /// (not after an abort), before the phase ends: what must reach the
    /// server before anyone looks at it, such as session statistics.
    fn finish(&mut self, conn: &mut C) -> impl Future<Output = ()> + Send {
        let _ = conn;
        async {}
    }
}

/// Opens connections. Called on the runtime thread that will use the
/// connection, so drivers that spawn a background task (tokio-postgres)
/// spawn it where the connection lives.
pub trait Connector: Sync {
    type Conn: Send + 'static;
    fn connect(&self) -> impl Future<Output = Result<Self::Conn, BackendError>>;

    /// What the connections ask of the runtime threads; see
    /// [`Backend::threading`].
    fn threading(&self) -> Threading {
        Threading::Remote
    }
}

/// A [`Connector`] for a backend and the table a workload uses.
pub struct BackendConnector<'a, B> {
    pub backend: &'a B,
    pub schema: Arc<Schema>,
}

impl<B: Backend> Connector for BackendConnector<'_, B> {
    type Conn = B::Conn;
    fn connect(&self) -> impl Future<Output = Result<B::Conn, BackendError>> {
        self.backend.connect(self.schema.clone())
    }

    fn threading(&self) -> Threading {
        self.backend.threading()
    }
}

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
    /// to the connections and the rate (see [`RuntimeThreads::size`]).
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

/// Called once per interval, off the hot path, with what that interval
/// recorded. The CLI prints status lines and progress from it, and records
/// the time series in the results store as the run goes.
pub trait Observer: Send + Sync {
    fn interval(&self, _progress: &Progress<'_>) {}

    /// The interval as it enters the time series (histograms encoded),
    /// right after [`Observer::interval`]; intervals that recorded nothing
    /// and lasted no time are skipped. The run keeps none of them (see
    /// [`RunOutcome::intervals`]): an observer that wants the time series
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

/// What every thread of a run shares.
struct Shared {
    recorder: Recorder,
    start: OnceLock<Instant>,
    deadline: OnceLock<Option<Instant>>,
    /// Stop scheduling new operations.
    stop: AtomicBool,
    /// Stop waiting for in-flight operations: drop them.
    abort: AtomicBool,
    /// Per group, closed loop only: operations left to hand out.
    budgets: Vec<Option<runtime_thread::Budget>>,
    /// Where each segment of a rate profile ends, in nanoseconds after the
    /// start (empty without segments).
    segment_ends: Vec<u64>,
    /// How late the pacer may release an arrival (`RunConfig::lag_budget`).
    lag_budget: Duration,
}

impl Shared {
    fn start(&self) -> Instant {
        *self.start.get().expect("start is set before workers run")
    }

    fn stopping(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// The segment an operation intended `t` ns after the start counts in.
    #[inline]
    fn segment_of(&self, t: u64) -> usize {
        self.segment_ends
            .partition_point(|&end| end <= t)
            .min(self.segment_ends.len().saturating_sub(1))
    }

    fn past_deadline(&self, now: Instant) -> bool {
        self.deadline
            .get()
            .copied()
            .flatten()
            .is_some_and(|d| now >= d)
    }
}

/// How often the coordinator looks at the stop handle and the deadline.
const POLL: Duration = Duration::from_millis(20);
/// How long after a moment the Poisson check folds the bins before it: a
/// lane reads the clock a little before it counts a release. Nor does it
/// fold a bin where an arrival no worker has taken yet is due (behind a
/// busy database, that can be seconds ago): its release is still to come.
const FOLD_MARGIN: Duration = Duration::from_millis(100);

/// Run one `step` per connection as `cfg` says, on connections opened for
/// this run alone. Blocks until the run ends; returns an error only when
/// connections could not be opened (then nothing ran).
pub fn run<K: Connector, S: Step<K::Conn>>(
    connector: &K,
    steps: Vec<S>,
    cfg: &RunConfig,
    stop: &StopHandle,
    observer: &dyn Observer,
) -> Result<RunOutcome, BackendError> {
    assert_eq!(steps.len(), cfg.workers(), "one step per connection");
    with_pool(connector, cfg, |pool| pool.run(steps, cfg, stop, observer))?
}

/// Open `cfg`'s connections, spread over runtime threads sized for it (see
/// [`RuntimeThreads::size`]), and hand the pool to `f`, which may run
/// several phases or steps on it (a load then a run; the steps of a
/// capacity search) without reconnecting. The threads and connections end
/// when `f` returns.
pub fn with_pool<K, R>(
    connector: &K,
    cfg: &RunConfig,
    f: impl FnOnce(&mut Pool<K::Conn>) -> R,
) -> Result<R, BackendError>
where
    K: Connector,
{
    let workers = cfg.workers();
    assert!(workers > 0, "at least one connection");
    let sizing = RuntimeThreads::size(
        cfg.runtime_threads,
        workers,
        cfg.peak_target(),
        crate::cpu::available_cores(),
        connector.threading(),
    );
    let n_threads = sizing.count;
    let (tx, rx) = mpsc::channel::<Report>();
    std::thread::scope(|scope| {
        let mut jobs = Vec::with_capacity(n_threads);
        for t in 0..n_threads {
            let (job_tx, job_rx) = tokio::sync::mpsc::unbounded_channel();
            let conns = (t..workers).step_by(n_threads).count();
            let tx = tx.clone();
            std::thread::Builder::new()
                .name(format!("sojourn-core-{t}"))
                .spawn_scoped(scope, move || {
                    runtime_thread::serve(conns, connector, job_rx, tx)
                })
                .expect("spawning a runtime thread");
            jobs.push(job_tx);
        }
        drop(tx);
        let mut error = None;
        for _ in 0..n_threads {
            match rx.recv() {
                Ok(Report::Connected(Ok(()))) => {}
                Ok(Report::Connected(Err(e))) => {
                    error.get_or_insert(e);
                }
                Ok(_) | Err(_) => {
                    error.get_or_insert(BackendError::Config(
                        "a runtime thread ended before connecting".into(),
                    ));
                }
            }
        }
        if let Some(e) = error {
            // Dropping the job senders ends the threads.
            return Err(e);
        }
        let mut pool = Pool {
            jobs,
            reports: rx,
            workers,
            threads_why: sizing.why,
        };
        Ok(f(&mut pool))
    })
}

/// Runtime threads holding open connections of type `C`; see
/// [`with_pool`]. Each run brings its own steps.
pub struct Pool<C> {
    jobs: Vec<tokio::sync::mpsc::UnboundedSender<Job<C>>>,
    reports: mpsc::Receiver<Report>,
    workers: usize,
    /// Why the pool has the threads it has (their count is `jobs.len()`).
    threads_why: ThreadsWhy,
}

impl<C: Send + 'static> Pool<C> {
    /// Connections in the pool; a run takes exactly one step per connection.
    pub fn workers(&self) -> usize {
        self.workers
    }

    /// Run one `step` per connection, the connections split into
    /// `cfg.groups` in order (the first `groups[0].workers` steps are the
    /// first group's, and so on), each paced and counted on its own. The
    /// run ends when every group has, or at `cfg.max_execution_time`.
    /// Blocks until the run ends.
    pub fn run<S: Step<C>>(
        &mut self,
        steps: Vec<S>,
        cfg: &RunConfig,
        stop: &StopHandle,
        observer: &dyn Observer,
    ) -> Result<RunOutcome, BackendError> {
        let groups = &cfg.groups;
        assert_eq!(steps.len(), self.workers, "one step per connection");
        assert_eq!(
            groups.iter().map(|g| g.workers).sum::<usize>(),
            self.workers,
            "the groups share out every connection"
        );
        let n_threads = self.jobs.len();
        let segments = cfg.segments();
        let shared = Arc::new(Shared {
            // One slot per runtime thread: worker `id` lives on thread
            // `id % n_threads` and records into slot `id % n_threads`, so no
            // two threads share a slot and a thread's workers (which take
            // turns) share one set of histograms. A slot per worker would
            // multiply the histograms the hot path touches and the
            // aggregator scans every tick by the connections per thread.
            recorder: Recorder::new(n_threads),
            start: OnceLock::new(),
            deadline: OnceLock::new(),
            stop: AtomicBool::new(false),
            abort: AtomicBool::new(false),
            budgets: groups
                .iter()
                .map(|g| {
                    g.target.is_none().then(|| {
                        runtime_thread::Budget::new(
                            g.operation_count.unwrap_or(u64::MAX),
                            g.workers,
                        )
                    })
                })
                .collect(),
            segment_ends: segments.iter().map(|s| s.end.as_nanos() as u64).collect(),
            lag_budget: cfg.lag_budget,
        });
        // The run as a whole: open loop at the summed rate when every group
        // is, so the offered-rate checks read as for a single group.
        let total_target = cfg.target();
        // The Poisson self-check bins at one rate: a run whose rate changes
        // is not judged by it.
        let constant_target = cfg.constant_target();
        // Every thread plus this one: released together once all are ready.
        let ready = Arc::new(Barrier::new(n_threads + 1));
        // Worker `id` lives on thread `id % n_threads`, as the pool opened
        // its connections; within a thread, lanes come in group order.
        let mut lanes: Vec<Vec<Lane<S>>> = (0..n_threads).map(|_| Vec::new()).collect();
        let mut steps = steps.into_iter().enumerate();
        let mut first = 0;
        for (g, group) in groups.iter().enumerate() {
            let ids = first..first + group.workers;
            first += group.workers;
            // Threads hosting this group deal its schedule among themselves.
            let mut hosts: Vec<usize> = ids.clone().map(|id| id % n_threads).collect();
            hosts.sort_unstable();
            hosts.dedup();
            let mut by_thread: Vec<Vec<(usize, S)>> = (0..n_threads).map(|_| Vec::new()).collect();
            for _ in ids {
                let (id, step) = steps.next().expect("one step per connection");
                by_thread[id % n_threads].push((id, step));
            }
            for (j, &t) in hosts.iter().enumerate() {
                let schedule = group.target.as_ref().map(|target| {
                    Schedule::of(
                        target,
                        cfg.arrival,
                        group_seed(cfg.seed, g),
                        group.operation_count,
                        cfg.max_execution_time,
                    )
                    .dealt(j, hosts.len())
                });
                // Poisson runs count sends per time bin for the self-check;
                // every lane bins at the run's total rate so the counts add
                // up (a sum of Poisson streams is Poisson).
                let starts = constant_target
                    .filter(|_| cfg.arrival == Arrival::Poisson)
                    .map(StartBins::for_rate);
                lanes[t].push(Lane {
                    group: g,
                    steps: std::mem::take(&mut by_thread[t]),
                    ctx: Arc::new(ThreadCtx::new(schedule, starts)),
                });
            }
        }
        let wakers: Vec<Arc<ThreadCtx>> = lanes
            .iter()
            .flat_map(|l| l.iter().map(|lane| lane.ctx.clone()))
            .collect();
        let mut sent = 0;
        for (t, lanes) in lanes.into_iter().enumerate() {
            let job = Job {
                lanes: Box::new(lanes),
                shared: shared.clone(),
                ready: ready.clone(),
            };
            if self.jobs[t].send(job).is_ok() {
                sent += 1;
            }
        }
        let mut error =
            (sent < n_threads).then(|| BackendError::Config("a runtime thread has ended".into()));
        for _ in 0..sent {
            match self.reports.recv() {
                Ok(Report::Ready(Ok(()))) => {}
                Ok(Report::Ready(Err(e))) => {
                    error.get_or_insert(e);
                }
                Ok(_) | Err(_) => {
                    error.get_or_insert(BackendError::Config(
                        "a runtime thread ended before its run".into(),
                    ));
                }
            }
        }
        if let Some(e) = error {
            shared.abort.store(true, Ordering::SeqCst);
            shared.stop.store(true, Ordering::SeqCst);
            let _ = shared.start.set(Instant::now());
            let _ = shared.deadline.set(None);
            if sent == n_threads {
                ready.wait();
                for _ in 0..sent {
                    let _ = self.reports.recv();
                }
            }
            return Err(e);
        }

        let started_at = SystemTime::now();
        let cpu_start = CpuTimes::now();
        let start = Instant::now();
        let _ = shared.start.set(start);
        let _ = shared
            .deadline
            .set(cfg.max_execution_time.map(|d| start + d));
        ready.wait();

        let mut agg = Aggregator::new(cfg, cpu_start, segments);
        let mut arrivals = constant_target
            .filter(|_| cfg.arrival == Arrival::Poisson)
            .map(|rate| Arrivals::new(StartBins::for_rate(rate).bin_ns()));
        let starts = || wakers.iter().filter_map(|w| w.starts());
        let untaken = || wakers.iter().filter_map(|w| w.next_untaken()).min();
        let open_loop = total_target.is_some();
        let released = || open_loop.then(|| wakers.iter().map(|w| w.released()).sum::<u64>());
        let mut next_tick = start + cfg.interval;
        let mut running = n_threads;
        let mut scheduled = 0u64;
        let mut abandoned = 0u64;
        let mut busiest = Duration::ZERO;
        let mut interrupted = false;
        let mut drain_until: Option<Instant> = None;
        let mut slo_missed = false;
        while running > 0 {
            let now = Instant::now();
            let wait = next_tick.min(now + POLL).saturating_duration_since(now);
            match self.reports.recv_timeout(wait) {
                Ok(Report::Done {
                    scheduled: s,
                    abandoned: a,
                    busy,
                }) => {
                    running -= 1;
                    scheduled += s;
                    abandoned += a;
                    busiest = busiest.max(busy);
                }
                Ok(_) | Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
            let now = Instant::now();
            if now >= next_tick {
                slo_missed |= agg.tick(&shared.recorder, now - start, released(), observer);
                if let Some(a) = &mut arrivals {
                    let settled = (now - start).saturating_sub(FOLD_MARGIN).as_nanos() as u64;
                    a.fold(starts(), settled.min(untaken().unwrap_or(u64::MAX)));
                }
                next_tick += cfg.interval;
                if next_tick <= now {
                    next_tick = now + cfg.interval;
                }
            }
            if drain_until.is_none()
                && (stop.is_stopped() || shared.past_deadline(now) || slo_missed)
            {
                interrupted = stop.is_stopped();
                shared.stop.store(true, Ordering::SeqCst);
                wakers.iter().for_each(|w| w.wake_all());
                drain_until = Some(now + cfg.drain_timeout);
            }
            if drain_until.is_some_and(|d| now >= d) && !shared.abort.load(Ordering::SeqCst) {
                shared.abort.store(true, Ordering::SeqCst);
                wakers.iter().for_each(|w| w.wake_all());
            }
        }
        let elapsed = start.elapsed();
        // The threads' own counts include arrivals their workers took
        // before the pacer woke to count them: the last interval's offered
        // load, like the run's, is what the threads reported.
        let released_at_end = released().map(|r| r.max(scheduled));
        agg.tick(&shared.recorder, elapsed, released_at_end, observer);
        let arrival_check = arrivals.and_then(|mut a| {
            // Arrivals never taken (the run stopped behind schedule) leave
            // their bins short: those are not counted.
            let end = elapsed.as_nanos() as u64;
            a.fold(starts(), end.min(untaken().unwrap_or(u64::MAX)));
            a.check()
        });
        // The reason follows from what was reached: under a target the
        // schedule's horizon can end the run a moment before the deadline.
        // A profile no longer than the time limit ends the run by itself,
        // however its last moments and the deadline fall.
        let count_reached = cfg.operation_count().is_some_and(|n| agg.all.ops_done >= n);
        let profile_ended = cfg
            .profile_length()
            .is_some_and(|l| cfg.max_execution_time.is_none_or(|m| m >= l));
        let stop_reason = if interrupted {
            StopReason::Interrupted
        } else if slo_missed {
            StopReason::SloMissed
        } else if count_reached {
            StopReason::OperationCount
        } else if profile_ended {
            StopReason::ProfileEnd
        } else if cfg.max_execution_time.is_some() {
            StopReason::MaxExecutionTime
        } else {
            StopReason::OperationCount
        };
        Ok(agg.finish(RunOutcomeParts {
            started_at,
            elapsed,
            threads: self.workers,
            target: total_target,
            arrival: total_target.map(|_| cfg.arrival),
            scheduled,
            cpu: CpuTimes::now().since(cpu_start),
            stop_reason,
            abandoned,
            seed: cfg.seed,
            runtime_threads: n_threads,
            thread_use: ThreadUse {
                why: self.threads_why,
                busiest: if elapsed.is_zero() {
                    0.0
                } else {
                    busiest.as_secs_f64() / elapsed.as_secs_f64()
                },
            },
            arrival_check,
            rate_profile: match groups.as_slice() {
                [g] => g
                    .target
                    .as_ref()
                    .filter(|t| t.as_constant().is_none())
                    .map(Target::describe),
                _ => None,
            },
        }))
    }
}

/// Each group's schedule draws from its own stream: two groups at one rate
/// must not send in lockstep.
fn group_seed(seed: u64, group: usize) -> u64 {
    if group == 0 {
        seed
    } else {
        seed ^ (group as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
    }
}

/// What the coordinator knows of a run besides the aggregated statistics.
struct RunOutcomeParts {
    started_at: SystemTime,
    elapsed: Duration,
    threads: usize,
    target: Option<f64>,
    arrival: Option<Arrival>,
    scheduled: u64,
    cpu: CpuTimes,
    stop_reason: StopReason,
    abandoned: u64,
    seed: u64,
    runtime_threads: usize,
    thread_use: ThreadUse,
    arrival_check: Option<ArrivalCheck>,
    rate_profile: Option<String>,
}
