//! Running operations: N concurrent workers, each with its own connection,
//! driven either back to back (closed loop) or by one global schedule (open
//! loop), with every operation's service and response time recorded.
//!
//! Open loop: a pacer task sleeps on a timerfd (microsecond precision, where
//! tokio's own timer has 1 ms) until each intended start and wakes an idle
//! worker. A worker takes the next arrival only once it is due, so
//! when every worker is busy, arrivals wait in the client without being
//! materialised, and their wait counts in response time: the queue is the
//! schedule itself. A worker that takes an arrival and sees the next one due
//! too wakes another worker, so a burst fans out without the pacer.
//!
//! Closed loop: workers claim operations from a shared budget in small
//! chunks and yield between chunks, so connections share the work fairly
//! even when a backend never suspends (`null:`).
//!
//! What a worker does per operation is a [`Step`]: the workload decides the
//! operation and calls the connection; the [`Meter`] records timings.

use std::future::Future;
use std::pin::pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use parking_lot::Mutex;
use tokio::sync::Notify;
use tokio::task::JoinSet;

use crate::backend::Status;
use crate::cpu::CpuTimes;
use crate::op::OpKind;
use crate::recorder::{LatencySummary, Recorder, Stats};
use crate::schedule::{Arrival, Schedule};
use crate::timer::PreciseTimer;

/// One operation (or a compound such as read-modify-write) on one
/// connection. Implemented by workloads.
pub trait Step<C>: Send + 'static {
    fn step(&mut self, conn: &mut C, meter: &mut Meter) -> impl Future<Output = ()> + Send;
}

/// How a run is driven.
#[derive(Clone, Debug)]
pub struct RunConfig {
    pub threads: usize,
    /// Operations per second offered in total; `None` is closed loop.
    pub target: Option<f64>,
    pub arrival: Arrival,
    pub operation_count: Option<u64>,
    pub max_execution_time: Option<Duration>,
    /// Intervals that start before this are left out of the summary.
    pub warmup: Duration,
    pub seed: u64,
    /// Length of one time-series interval.
    pub interval: Duration,
    /// How long in-flight operations may take to finish once the run stops.
    pub drain_timeout: Duration,
}

impl Default for RunConfig {
    fn default() -> Self {
        RunConfig {
            threads: 1,
            target: None,
            arrival: Arrival::Poisson,
            operation_count: Some(1000),
            max_execution_time: None,
            warmup: Duration::ZERO,
            seed: 0,
            interval: Duration::from_secs(1),
            drain_timeout: Duration::from_secs(10),
        }
    }
}

/// Up to three timings per step (read-modify-write records its read, its
/// update and itself), flushed under one lock when the step ends.
pub struct Meter {
    intended: Instant,
    // Closed loop: the intended start was read from the clock just now, so
    // the first call may start from it instead of reading the clock again.
    fresh: bool,
    pending: [(OpKind, Status, u64, u64); 3],
    n: usize,
}

impl Meter {
    fn new(now: Instant) -> Meter {
        Meter {
            intended: now,
            fresh: false,
            pending: [(OpKind::Read, Status::Ok, 0, 0); 3],
            n: 0,
        }
    }

    /// The moment a database call starts.
    #[inline]
    pub fn start(&mut self) -> Instant {
        if std::mem::take(&mut self.fresh) {
            self.intended
        } else {
            Instant::now()
        }
    }

    /// Record a call that started at `started` and has just ended: its
    /// service time from `started`, its response time from the step's
    /// intended start.
    #[inline]
    pub fn record(&mut self, kind: OpKind, status: Status, started: Instant) {
        let end = Instant::now();
        let service = end.saturating_duration_since(started).as_nanos() as u64;
        let response = end.saturating_duration_since(self.intended).as_nanos() as u64;
        if self.n < self.pending.len() {
            self.pending[self.n] = (kind, status, service, response);
            self.n += 1;
        }
    }

    #[inline]
    fn flush(&mut self, stats: &mut Stats) {
        for &(k, s, sv, rs) in &self.pending[..self.n] {
            stats.record(k, s, sv, rs);
        }
        self.n = 0;
        stats.ops_done += 1;
    }
}

/// Lets the caller stop a run (Ctrl+C): scheduling stops, in-flight
/// operations drain for at most the drain timeout, results are kept and
/// marked interrupted.
#[derive(Clone, Default)]
pub struct StopHandle(Arc<StopInner>);

#[derive(Default)]
struct StopInner {
    requested: AtomicBool,
    notify: Notify,
}

impl StopHandle {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn stop(&self) {
        self.0.requested.store(true, Ordering::SeqCst);
        self.0.notify.notify_waiters();
    }

    pub fn is_stopped(&self) -> bool {
        self.0.requested.load(Ordering::SeqCst)
    }

    async fn wait(&self) {
        loop {
            let n = self.0.notify.notified();
            let mut n = pin!(n);
            n.as_mut().enable();
            if self.is_stopped() {
                return;
            }
            n.await;
        }
    }
}

/// Called once per interval, off the hot path, with what that interval
/// recorded. The CLI prints status lines and progress from it.
pub trait Observer: Send + Sync {
    fn interval(&self, _progress: &Progress<'_>) {}
}

/// An observer that ignores everything.
pub struct Quiet;
impl Observer for Quiet {}

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
    pub cpu: CpuTimes,
    pub warmup: bool,
    pub kinds: Vec<IntervalKind>,
    pub lag: Option<LatencySummary>,
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
    pub intervals: Vec<Interval>,
    pub threads: usize,
    pub target: Option<f64>,
    pub arrival: Option<Arrival>,
    /// Arrivals the schedule released (open loop).
    pub scheduled: u64,
    pub cpu: CpuTimes,
    pub stop_reason: StopReason,
    /// Operations still in flight when the drain timeout ran out.
    pub abandoned: u64,
    pub seed: u64,
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

    pub fn interrupted(&self) -> bool {
        self.stop_reason == StopReason::Interrupted
    }
}

struct Shared {
    recorder: Recorder,
    start: Instant,
    deadline: Option<Instant>,
    stop: AtomicBool,
    mode: Mode,
}

enum Mode {
    Closed { budget: AtomicU64 },
    Open(OpenLoop),
}

struct OpenLoop {
    schedule: Mutex<Schedule>,
    wake: Notify,
}

enum Take {
    Due(u64),
    Wait,
    Done,
}

impl OpenLoop {
    #[inline]
    fn take(&self, start: Instant) -> Take {
        let mut s = self.schedule.lock();
        let Some(t) = s.peek() else {
            return Take::Done;
        };
        let now = start.elapsed().as_nanos() as u64;
        if t > now {
            return Take::Wait;
        }
        s.advance();
        // Fan out a burst: if the next arrival is due as well, wake a peer.
        if s.peek().is_some_and(|n| n <= now) {
            drop(s);
            self.wake.notify_one();
        }
        Take::Due(t)
    }
}

/// Operations a closed-loop worker claims at once. Workers yield between
/// chunks; tokio polls its I/O driver on each yield, so yielding much more
/// often costs a syscall per few operations.
const CHUNK: u64 = 1024;

impl Shared {
    fn stopping(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    fn claim(&self, budget: &AtomicU64) -> u64 {
        let mut cur = budget.load(Ordering::Relaxed);
        loop {
            if cur == 0 {
                return 0;
            }
            let n = cur.min(CHUNK);
            match budget.compare_exchange_weak(cur, cur - n, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => return n,
                Err(c) => cur = c,
            }
        }
    }

    fn past_deadline(&self, now: Instant) -> bool {
        self.deadline.is_some_and(|d| now >= d)
    }
}

async fn worker<C: Send + 'static, S: Step<C>>(
    id: usize,
    mut conn: C,
    mut step: S,
    shared: Arc<Shared>,
) {
    let slot = shared.recorder.slot(id);
    let mut meter = Meter::new(shared.start);
    match &shared.mode {
        Mode::Closed { budget } => 'outer: loop {
            let n = shared.claim(budget);
            if n == 0 {
                break;
            }
            for _ in 0..n {
                let now = Instant::now();
                if shared.stopping() || shared.past_deadline(now) {
                    break 'outer;
                }
                meter.intended = now;
                meter.fresh = true;
                step.step(&mut conn, &mut meter).await;
                meter.flush(&mut slot.lock());
            }
            tokio::task::yield_now().await;
        },
        Mode::Open(open) => loop {
            let t = match open.take(shared.start) {
                Take::Due(t) => t,
                Take::Done => break,
                Take::Wait => {
                    let notified = open.wake.notified();
                    let mut notified = pin!(notified);
                    notified.as_mut().enable();
                    match open.take(shared.start) {
                        Take::Due(t) => t,
                        Take::Done => break,
                        Take::Wait => {
                            notified.await;
                            continue;
                        }
                    }
                }
            };
            if shared.stopping() {
                break;
            }
            let intended = shared.start + Duration::from_nanos(t);
            let lag = Instant::now().saturating_duration_since(intended);
            meter.intended = intended;
            step.step(&mut conn, &mut meter).await;
            let mut stats = slot.lock();
            meter.flush(&mut stats);
            stats.record_lag(lag.as_nanos() as u64);
        },
    }
}

/// The pacer: wakes an idle worker at each intended start. It runs as a
/// task on the runtime, sleeping on a [`PreciseTimer`]; when it falls
/// behind, it releases every arrival already due in one go.
async fn pace(shared: Arc<Shared>, mut schedule: Schedule, workers: usize) {
    let Mode::Open(open) = &shared.mode else {
        return;
    };
    let timer = PreciseTimer::new().ok();
    while let Some(t) = schedule.peek() {
        if shared.stopping() {
            break;
        }
        let now = shared.start.elapsed().as_nanos() as u64;
        if t > now {
            let at = shared.start + Duration::from_nanos(t);
            match &timer {
                Some(timer) if timer.sleep_until(at).await.is_ok() => {}
                _ => tokio::time::sleep_until(tokio::time::Instant::from_std(at)).await,
            }
            continue;
        }
        let mut due = 0usize;
        while schedule.peek().is_some_and(|t| t <= now) {
            schedule.advance();
            due += 1;
        }
        for _ in 0..due.min(workers) {
            open.wake.notify_one();
        }
    }
    // Everything is released (or the run stopped): let waiting workers see it.
    open.wake.notify_waiters();
}

fn summarise_interval(
    stats: &Stats,
    start: Duration,
    length: Duration,
    cpu: CpuTimes,
    warmup: bool,
) -> Interval {
    let kinds = stats
        .kinds()
        .map(|(kind, s)| IntervalKind {
            kind,
            statuses: s.statuses,
            service: LatencySummary::of(&s.ok.service),
            response: LatencySummary::of(&s.ok.response),
            service_hist: crate::histlog::encode(&s.ok.service),
            response_hist: crate::histlog::encode(&s.ok.response),
        })
        .collect();
    Interval {
        start,
        length,
        ops_done: stats.ops_done,
        cpu,
        warmup,
        kinds,
        lag: stats.lag.as_deref().map(LatencySummary::of),
    }
}

/// Collects intervals from the recorder while the run goes on.
struct Aggregator {
    total: Stats,
    all: Stats,
    intervals: Vec<Interval>,
    spare: Stats,
    last_at: Duration,
    last_cpu: CpuTimes,
    warmup: Duration,
    warmup_end: Option<Duration>,
}

impl Aggregator {
    fn tick(&mut self, shared: &Shared, now: Duration, cfg: &RunConfig, obs: &dyn Observer) {
        let stats = shared.recorder.collect(&mut self.spare);
        let cpu_now = CpuTimes::now();
        let cpu = cpu_now.since(self.last_cpu);
        let in_warmup = self.last_at < self.warmup;
        self.all.add(&stats);
        if !in_warmup {
            self.warmup_end.get_or_insert(self.last_at);
            self.total.add(&stats);
        }
        let length = now.saturating_sub(self.last_at);
        obs.interval(&Progress {
            elapsed: now,
            interval_length: length,
            interval: &stats,
            ops_done: self.all.ops_done,
            expected_ops: cfg.operation_count,
            max_execution_time: cfg.max_execution_time,
        });
        if stats.ops_done > 0 || length > Duration::ZERO {
            self.intervals.push(summarise_interval(
                &stats,
                self.last_at,
                length,
                cpu,
                in_warmup,
            ));
        }
        self.last_at = now;
        self.last_cpu = cpu_now;
    }
}

/// Run `steps` over `conns` (one worker each) as `cfg` says.
pub async fn run<C: Send + 'static, S: Step<C>>(
    conns: Vec<C>,
    steps: Vec<S>,
    cfg: &RunConfig,
    stop: &StopHandle,
    observer: &dyn Observer,
) -> RunOutcome {
    assert_eq!(conns.len(), steps.len(), "one step per connection");
    let workers = conns.len();
    let started_at = SystemTime::now();
    let cpu_start = CpuTimes::now();
    let start = Instant::now();
    let mode = match cfg.target {
        None => Mode::Closed {
            budget: AtomicU64::new(cfg.operation_count.unwrap_or(u64::MAX)),
        },
        Some(rate) => Mode::Open(OpenLoop {
            schedule: Mutex::new(Schedule::new(
                rate,
                cfg.arrival,
                cfg.seed,
                cfg.operation_count,
                cfg.max_execution_time,
            )),
            wake: Notify::new(),
        }),
    };
    let shared = Arc::new(Shared {
        recorder: Recorder::new(workers),
        start,
        deadline: cfg.max_execution_time.map(|d| start + d),
        stop: AtomicBool::new(false),
        mode,
    });

    let pacer = match (&shared.mode, cfg.target) {
        (Mode::Open(_), Some(rate)) => {
            let sched = Schedule::new(
                rate,
                cfg.arrival,
                cfg.seed,
                cfg.operation_count,
                cfg.max_execution_time,
            );
            Some(tokio::spawn(pace(shared.clone(), sched, workers)))
        }
        _ => None,
    };

    let mut set = JoinSet::new();
    for (id, (conn, step)) in conns.into_iter().zip(steps).enumerate() {
        set.spawn(worker(id, conn, step, shared.clone()));
    }

    let mut agg = Aggregator {
        total: Stats::default(),
        all: Stats::default(),
        intervals: Vec::new(),
        spare: Stats::default(),
        last_at: Duration::ZERO,
        last_cpu: cpu_start,
        warmup: cfg.warmup,
        warmup_end: None,
    };
    let mut ticker = tokio::time::interval_at(
        tokio::time::Instant::from_std(start + cfg.interval),
        cfg.interval,
    );
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);

    let deadline = async {
        match shared.deadline {
            Some(d) => tokio::time::sleep_until(tokio::time::Instant::from_std(d)).await,
            None => std::future::pending().await,
        }
    };
    let mut deadline = pin!(deadline);
    let mut interrupted = false;
    let mut drain_until: Option<tokio::time::Instant> = None;
    let mut abandoned = 0u64;
    loop {
        let drain = async {
            match drain_until {
                Some(d) => tokio::time::sleep_until(d).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            joined = set.join_next() => {
                if joined.is_none() {
                    break;
                }
            }
            _ = ticker.tick() => {
                agg.tick(&shared, start.elapsed(), cfg, observer);
            }
            _ = stop.wait(), if drain_until.is_none() => {
                interrupted = true;
                shared.stop.store(true, Ordering::SeqCst);
                if let Mode::Open(o) = &shared.mode { o.wake.notify_waiters(); }
                drain_until = Some(tokio::time::Instant::now() + cfg.drain_timeout);
            }
            _ = &mut deadline, if drain_until.is_none() => {
                shared.stop.store(true, Ordering::SeqCst);
                if let Mode::Open(o) = &shared.mode { o.wake.notify_waiters(); }
                drain_until = Some(tokio::time::Instant::now() + cfg.drain_timeout);
            }
            _ = drain => {
                abandoned = set.len() as u64;
                set.abort_all();
                while set.join_next().await.is_some() {}
                break;
            }
        }
    }
    let elapsed = start.elapsed();
    shared.stop.store(true, Ordering::SeqCst);
    if let Some(p) = pacer {
        p.abort();
    }
    agg.tick(&shared, elapsed, cfg, observer);

    let scheduled = match &shared.mode {
        Mode::Open(o) => o.schedule.lock().issued(),
        Mode::Closed { .. } => 0,
    };
    let measured = elapsed.saturating_sub(agg.warmup_end.unwrap_or(elapsed));
    let stop_reason = if interrupted {
        StopReason::Interrupted
    } else if shared.past_deadline(start + elapsed)
        && cfg.operation_count.is_none_or(|n| agg.all.ops_done < n)
    {
        StopReason::MaxExecutionTime
    } else {
        StopReason::OperationCount
    };
    RunOutcome {
        started_at,
        elapsed,
        measured,
        total: agg.total,
        all: agg.all,
        intervals: agg.intervals,
        threads: workers,
        target: cfg.target,
        arrival: cfg.target.map(|_| cfg.arrival),
        scheduled,
        cpu: CpuTimes::now().since(cpu_start),
        stop_reason,
        abandoned,
        seed: cfg.seed,
    }
}
