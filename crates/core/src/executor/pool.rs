//! The pool of runtime threads and their open connections, and the
//! coordinator that runs steps on it: opening the connections
//! ([`with_pool`]), dealing schedules to threads, releasing them at one
//! start, ticking intervals and stopping or draining the run.

use crate::backend::BackendError;
use crate::cpu::CpuTimes;
use crate::histograms::Recorder;
use crate::rate::{Segment, Target};
use crate::schedule::{Arrival, Schedule};
use crate::selfcheck::{ArrivalCheck, Arrivals, StartBins};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Barrier, OnceLock};
use std::time::{Duration, Instant, SystemTime};

use super::aggregate::Aggregator;
use super::config::{RunConfig, StopHandle};
use super::observer::Observer;
use super::outcome::{RunOutcome, RunOutcomeParts, StopReason};
use super::runtime_thread::{Job, Lane, Report};
use super::shared::{Budget, Shared};
use super::step::{Connector, Step};
use super::thread_ctx::ThreadCtx;
use super::threads::{RuntimeThreads, ThreadUse, ThreadsWhy};

/// How often the coordinator looks at the stop handle and the deadline.
pub(super) const POLL: Duration = Duration::from_millis(20);
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
                    super::runtime_thread::serve(conns, connector, job_rx, tx)
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
        assert_eq!(steps.len(), self.workers, "one step per connection");
        assert_eq!(
            cfg.groups.iter().map(|g| g.workers).sum::<usize>(),
            self.workers,
            "the groups share out every connection"
        );
        let n_threads = self.jobs.len();
        let segments = cfg.segments();
        let shared = shared_for(cfg, n_threads, &segments);
        // Every thread plus this one: released together once all are ready.
        let ready = Arc::new(Barrier::new(n_threads + 1));
        let lanes = deal_lanes(steps, cfg, n_threads);
        let wakers: Vec<Arc<ThreadCtx>> = lanes
            .iter()
            .flat_map(|l| l.iter().map(|lane| lane.ctx.clone()))
            .collect();
        self.start_jobs(lanes, &shared, &ready)?;

        let started_at = SystemTime::now();
        let cpu_start = CpuTimes::now();
        let start = Instant::now();
        let _ = shared.start.set(start);
        let _ = shared
            .deadline
            .set(cfg.max_execution_time.map(|d| start + d));
        ready.wait();

        let mut agg = Aggregator::new(cfg, cpu_start, segments);
        let coordinator = Coordinator {
            cfg,
            shared: &shared,
            wakers: &wakers,
            start,
            stop,
            observer,
        };
        let ended = coordinator.coordinate(&self.reports, n_threads, &mut agg);
        let stop_reason = stop_reason(cfg, &agg, &ended);
        // The run as a whole: open loop at the summed rate when every group
        // is, so the offered-rate checks read as for a single group.
        let total_target = cfg.target();
        let elapsed = ended.elapsed;
        Ok(agg.finish(RunOutcomeParts {
            started_at,
            elapsed,
            threads: self.workers,
            target: total_target,
            arrival: total_target.map(|_| cfg.arrival),
            scheduled: ended.scheduled,
            cpu: CpuTimes::now().since(cpu_start),
            stop_reason,
            abandoned: ended.abandoned,
            seed: cfg.seed,
            runtime_threads: n_threads,
            thread_use: ThreadUse {
                why: self.threads_why,
                busiest: if elapsed.is_zero() {
                    0.0
                } else {
                    ended.busiest.as_secs_f64() / elapsed.as_secs_f64()
                },
            },
            arrival_check: ended.arrival_check,
            rate_profile: match cfg.groups.as_slice() {
                [g] => g
                    .target
                    .as_ref()
                    .filter(|t| t.as_constant().is_none())
                    .map(Target::describe),
                _ => None,
            },
        }))
    }

    /// Hand each runtime thread its lanes and wait until every thread is
    /// ready. On an error, the threads that got a job are released at once
    /// into an aborted run, so that they return to the pool.
    fn start_jobs<S: Step<C>>(
        &mut self,
        lanes: Vec<Vec<Lane<S>>>,
        shared: &Arc<Shared>,
        ready: &Arc<Barrier>,
    ) -> Result<(), BackendError> {
        let n_threads = self.jobs.len();
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
        let Some(e) = error else {
            return Ok(());
        };
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
        Err(e)
    }
}

/// What every thread of a run with `cfg` on `n_threads` threads shares.
fn shared_for(cfg: &RunConfig, n_threads: usize, segments: &[Segment]) -> Arc<Shared> {
    Arc::new(Shared {
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
        budgets: cfg
            .groups
            .iter()
            .map(|g| {
                g.target
                    .is_none()
                    .then(|| Budget::new(g.operation_count.unwrap_or(u64::MAX), g.workers))
            })
            .collect(),
        segment_ends: segments.iter().map(|s| s.end.as_nanos() as u64).collect(),
        segment_offered: segments.iter().map(|_| AtomicU64::new(0)).collect(),
        lag_budget: cfg.lag_budget,
    })
}

/// Deal `steps` onto `n_threads` threads' lanes: worker `id` lives on
/// thread `id % n_threads`, as the pool opened its connections; within a
/// thread, lanes come in group order, and the threads hosting a group deal
/// its schedule among themselves.
fn deal_lanes<S>(steps: Vec<S>, cfg: &RunConfig, n_threads: usize) -> Vec<Vec<Lane<S>>> {
    // The Poisson self-check bins at one rate: a run whose rate changes
    // is not judged by it.
    let constant_target = cfg.constant_target();
    let mut lanes: Vec<Vec<Lane<S>>> = (0..n_threads).map(|_| Vec::new()).collect();
    let mut steps = steps.into_iter().enumerate();
    let mut first = 0;
    for (g, group) in cfg.groups.iter().enumerate() {
        let ids = first..first + group.workers;
        first += group.workers;
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
    lanes
}

/// The calling thread's part of a run once the threads are released.
struct Coordinator<'a> {
    cfg: &'a RunConfig,
    shared: &'a Shared,
    wakers: &'a [Arc<ThreadCtx>],
    start: Instant,
    stop: &'a StopHandle,
    observer: &'a dyn Observer,
}

/// What the coordinator saw of a run by its end.
struct Ended {
    elapsed: Duration,
    scheduled: u64,
    abandoned: u64,
    busiest: Duration,
    interrupted: bool,
    slo_missed: bool,
    arrival_check: Option<ArrivalCheck>,
}

impl Coordinator<'_> {
    /// Tick intervals until every thread is done, stopping the run at the
    /// stop handle, the deadline or a missed segment SLO and aborting it
    /// once the drain timeout is up.
    fn coordinate(
        &self,
        reports: &mpsc::Receiver<Report>,
        n_threads: usize,
        agg: &mut Aggregator,
    ) -> Ended {
        let (cfg, shared, start) = (self.cfg, self.shared, self.start);
        let mut arrivals = cfg
            .constant_target()
            .filter(|_| cfg.arrival == Arrival::Poisson)
            .map(|rate| Arrivals::new(StartBins::for_rate(rate).bin_ns()));
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
            match reports.recv_timeout(wait) {
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
                agg.offered(&shared.segment_offered);
                slo_missed |= agg.tick(
                    &shared.recorder,
                    now - start,
                    self.released(),
                    self.observer,
                );
                if let Some(a) = &mut arrivals {
                    let settled = (now - start).saturating_sub(FOLD_MARGIN).as_nanos() as u64;
                    a.fold(
                        self.starts(),
                        settled.min(self.untaken().unwrap_or(u64::MAX)),
                    );
                }
                next_tick += cfg.interval;
                if next_tick <= now {
                    next_tick = now + cfg.interval;
                }
            }
            if drain_until.is_none()
                && (self.stop.is_stopped() || shared.past_deadline(now) || slo_missed)
            {
                interrupted = self.stop.is_stopped();
                shared.stop.store(true, Ordering::SeqCst);
                self.wakers.iter().for_each(|w| w.wake_all());
                drain_until = Some(now + cfg.drain_timeout);
            }
            if drain_until.is_some_and(|d| now >= d) && !shared.abort.load(Ordering::SeqCst) {
                shared.abort.store(true, Ordering::SeqCst);
                self.wakers.iter().for_each(|w| w.wake_all());
            }
        }
        let elapsed = start.elapsed();
        // The threads' own counts include arrivals their workers took
        // before the pacer woke to count them: the last interval's offered
        // load, like the run's, is what the threads reported.
        let released_at_end = self.released().map(|r| r.max(scheduled));
        agg.offered(&shared.segment_offered);
        agg.tick(&shared.recorder, elapsed, released_at_end, self.observer);
        let arrival_check = arrivals.and_then(|mut a| {
            // Arrivals never taken (the run stopped behind schedule) leave
            // their bins short: those are not counted.
            let end = elapsed.as_nanos() as u64;
            a.fold(self.starts(), end.min(self.untaken().unwrap_or(u64::MAX)));
            a.check()
        });
        Ended {
            elapsed,
            scheduled,
            abandoned,
            busiest,
            interrupted,
            slo_missed,
            arrival_check,
        }
    }

    /// Every lane's send counts, for the Poisson check to fold.
    fn starts(&self) -> impl Iterator<Item = &parking_lot::Mutex<StartBins>> + Clone {
        self.wakers.iter().filter_map(|w| w.starts())
    }

    /// The earliest arrival no worker has taken yet.
    fn untaken(&self) -> Option<u64> {
        self.wakers.iter().filter_map(|w| w.next_untaken()).min()
    }

    /// Arrivals released so far, in an open-loop run.
    fn released(&self) -> Option<u64> {
        self.cfg
            .target()
            .is_some()
            .then(|| self.wakers.iter().map(|w| w.released()).sum::<u64>())
    }
}

/// Why the run ended. The reason follows from what was reached: under a
/// target the schedule's horizon can end the run a moment before the
/// deadline. A profile no longer than the time limit ends the run by
/// itself, however its last moments and the deadline fall.
fn stop_reason(cfg: &RunConfig, agg: &Aggregator, ended: &Ended) -> StopReason {
    let count_reached = cfg.operation_count().is_some_and(|n| agg.all.ops_done >= n);
    let profile_ended = cfg
        .profile_length()
        .is_some_and(|l| cfg.max_execution_time.is_none_or(|m| m >= l));
    if ended.interrupted {
        StopReason::Interrupted
    } else if ended.slo_missed {
        StopReason::SloMissed
    } else if count_reached {
        StopReason::OperationCount
    } else if profile_ended {
        StopReason::ProfileEnd
    } else if cfg.max_execution_time.is_some() {
        StopReason::MaxExecutionTime
    } else {
        StopReason::OperationCount
    }
}

/// Each group's schedule draws from its own stream: two groups at one rate
/// must not send in lockstep.
pub(super) fn group_seed(seed: u64, group: usize) -> u64 {
    if group == 0 {
        seed
    } else {
        seed ^ (group as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
    }
}
