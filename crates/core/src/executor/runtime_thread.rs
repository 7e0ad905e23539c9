//! One runtime thread: a single-threaded tokio runtime that opens its share
//! of the pool's connections and keeps them. For each job (one run) it
//! waits for the common start, runs one worker task per connection (and,
//! under a target, a pacer for its share of the schedule) until they finish
//! or the coordinator aborts them, and takes the connections back.

use std::cell::RefCell;
use std::future::Future;
use std::pin::{pin, Pin};
use std::rc::Rc;
use std::sync::atomic::Ordering;
use std::sync::mpsc::Sender;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use tokio::sync::mpsc::UnboundedReceiver;

use crate::backend::BackendError;
use crate::schedule::Schedule;
use crate::timer::PreciseTimer;

use super::meter::{Halt, Meter};
use super::shared::Shared;
use super::step::take_step;
use super::step::{Connector, Step};
use super::thread_ctx::{Take, ThreadCtx};

/// What a thread tells the coordinator.
pub(super) enum Report {
    /// The pool's connections are open (or not).
    Connected(Result<(), BackendError>),
    /// A job arrived and the thread is at the start line.
    Ready(Result<(), BackendError>),
    /// A job ended; `busy` is the thread's CPU time over it.
    Done {
        scheduled: u64,
        abandoned: u64,
        busy: Duration,
    },
}

/// One run's share for one thread: a lane per group with workers here.
/// The lanes are boxed once per run, so a pool's threads serve runs of any
/// step type while every step inside a run is a direct call.
pub(super) struct Job<C> {
    pub lanes: Box<dyn Lanes<C>>,
    pub shared: Arc<Shared>,
    pub ready: Arc<Barrier>,
}

/// A run's lanes on one thread, whatever their step type.
pub(super) trait Lanes<C>: Send {
    fn run<'a>(
        self: Box<Self>,
        shared: Arc<Shared>,
        conns: &'a mut [Option<C>],
    ) -> Pin<Box<dyn Future<Output = (u64, u64)> + 'a>>;
}

impl<C: Send + 'static, S: Step<C>> Lanes<C> for Vec<Lane<S>> {
    fn run<'a>(
        self: Box<Self>,
        shared: Arc<Shared>,
        conns: &'a mut [Option<C>],
    ) -> Pin<Box<dyn Future<Output = (u64, u64)> + 'a>> {
        Box::pin(run_job(*self, shared, conns))
    }
}

/// One group's workers on one thread, with their share of its schedule.
pub(super) struct Lane<S> {
    pub group: usize,
    pub steps: Vec<(usize, S)>,
    pub ctx: Arc<ThreadCtx>,
}

/// The thread's whole life: connect, then serve jobs until the pool closes.
pub(super) fn serve<K: Connector>(
    n_conns: usize,
    connector: &K,
    jobs: UnboundedReceiver<Job<K::Conn>>,
    tx: Sender<Report>,
) {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            let _ = tx.send(Report::Connected(Err(BackendError::Config(format!(
                "cannot start a runtime thread: {e}"
            )))));
            return;
        }
    };
    let local = tokio::task::LocalSet::new();
    ON_A_RUNTIME_THREAD.set(true);
    local.block_on(&runtime, serve_jobs(n_conns, connector, jobs, &tx));
}

thread_local! {
    /// Whether this thread is one of the pool's runtime threads, whose
    /// connections and workers live in its `LocalSet`.
    static ON_A_RUNTIME_THREAD: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Spawn a connection's background task (a driver's socket loop) beside the
/// workers that use it: on a pool's runtime thread, as a task of the same
/// `LocalSet` as the workers; elsewhere (setup, tests) on the current
/// runtime.
///
/// Why it matters: a task of the runtime that wakes a `LocalSet` task sends
/// it through the set's remote queue and wakes the set's own future, and
/// tokio then polls its I/O driver once more (an `epoll_wait` that finds
/// nothing) before it runs the set again. Inside one set, a reply that wakes
/// a worker and the worker's next request that wakes the driver are both
/// pushes on one local queue, served in the same pass.
pub fn spawn_beside<F>(task: F) -> tokio::task::JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    if ON_A_RUNTIME_THREAD.get() {
        tokio::task::spawn_local(task)
    } else {
        tokio::spawn(task)
    }
}

async fn serve_jobs<K: Connector>(
    n_conns: usize,
    connector: &K,
    mut jobs: UnboundedReceiver<Job<K::Conn>>,
    tx: &Sender<Report>,
) {
    let mut conns: Vec<Option<K::Conn>> = Vec::with_capacity(n_conns);
    let mut error = None;
    for _ in 0..n_conns {
        match connector.connect().await {
            Ok(c) => conns.push(Some(c)),
            Err(e) => {
                error = Some(e);
                break;
            }
        }
    }
    let failed = error.is_some();
    let _ = tx.send(Report::Connected(error.map_or(Ok(()), Err)));
    if failed {
        return;
    }
    while let Some(job) = jobs.recv().await {
        // Connections lost to an aborted job are opened again.
        let mut error = None;
        for slot in conns.iter_mut().filter(|c| c.is_none()) {
            match connector.connect().await {
                Ok(c) => *slot = Some(c),
                Err(e) => {
                    error = Some(e);
                    break;
                }
            }
        }
        let _ = tx.send(Report::Ready(error.map_or(Ok(()), Err)));
        // Blocking here is fine: the wait is as short as the slowest
        // thread's reconnecting, and nothing of ours is in flight.
        job.ready.wait();
        let cpu = crate::cpu::thread_cpu();
        let (scheduled, abandoned) = if job.shared.abort.load(Ordering::SeqCst) {
            (0, 0)
        } else {
            job.lanes.run(job.shared, &mut conns).await
        };
        let _ = tx.send(Report::Done {
            scheduled,
            abandoned,
            busy: crate::cpu::thread_cpu().saturating_sub(cpu),
        });
    }
}

/// Run one job's workers on the thread's connections; returns the arrivals
/// this thread's pacers released and the operations abandoned in flight.
async fn run_job<C: Send + 'static, S: Step<C>>(
    lanes: Vec<Lane<S>>,
    shared: Arc<Shared>,
    conns: &mut [Option<C>],
) -> (u64, u64) {
    // Lanes come in group order and worker ids ascend within them: the
    // order in which this thread's connections were dealt.
    let mut handles = Vec::with_capacity(conns.len());
    let mut pacers = Vec::new();
    let mut slots = conns.iter_mut();
    for lane in &lanes {
        let n = lane.steps.len();
        pacers.extend(
            lane.ctx
                .schedule
                .is_some()
                .then(|| tokio::task::spawn_local(pace(shared.clone(), lane.ctx.clone(), n))),
        );
    }
    let ctxs: Vec<Arc<ThreadCtx>> = lanes.iter().map(|l| l.ctx.clone()).collect();
    for lane in lanes {
        let free = Rc::new(LaneFree::new(lane.steps.len()));
        for (seat, (id, step)) in lane.steps.into_iter().enumerate() {
            let slot = slots.next().expect("a connection per worker");
            let conn = slot.take().expect("every connection is open at the start");
            handles.push(tokio::task::spawn_local(worker(
                id,
                lane.group,
                conn,
                step,
                shared.clone(),
                Seat {
                    ctx: lane.ctx.clone(),
                    free: free.clone(),
                    index: seat,
                },
            )));
        }
    }
    {
        let all_done = async {
            for (h, slot) in handles.iter_mut().zip(conns.iter_mut()) {
                if let Ok(conn) = h.await {
                    *slot = Some(conn);
                }
            }
        };
        // The coordinator wakes every lane on abort; one is enough to hear.
        let aborted = wait_abort(&shared, &ctxs[0]);
        tokio::select! {
            _ = all_done => {}
            _ = aborted => {}
        }
    }
    // After an abort: keep the connections of workers that did finish.
    let mut abandoned = 0;
    for (h, slot) in handles.iter_mut().zip(conns.iter_mut()) {
        if slot.is_some() {
            continue;
        }
        if h.is_finished() {
            if let Ok(conn) = h.await {
                *slot = Some(conn);
            }
        } else {
            abandoned += 1;
            h.abort();
        }
    }
    for p in pacers {
        p.abort();
    }
    // Workers may take the last due arrivals before the pacer wakes to
    // count them; an overloaded thread's pacer runs ahead of its workers.
    // Either way the larger count is what was offered.
    let released = ctxs
        .iter()
        .map(|ctx| {
            let taken = ctx.schedule.as_ref().map_or(0, |s| s.lock().issued());
            ctx.released.load(Ordering::Relaxed).max(taken)
        })
        .sum();
    (released, abandoned)
}

async fn wait_abort(shared: &Shared, ctx: &ThreadCtx) {
    loop {
        let n = ctx.abort.notified();
        let mut n = pin!(n);
        n.as_mut().enable();
        if shared.abort.load(Ordering::SeqCst) {
            return;
        }
        n.await;
    }
}

/// When each connection of a lane would have come free had the client
/// kept its schedule, as its worker last left it (`None`: in flight). An
/// operation ended `lag` later than a punctual client's would have when it
/// left `lag` late, so a connection's time is its last end less that lag.
///
/// An arrival waits for a connection, the database's doing, only while
/// every connection of its lane is (virtually) busy; while one is free, any
/// delay is the client's. Judged by the worker's own connection alone, a
/// stall of the thread was hidden: the worker that held the thread took the
/// backlog it left, one operation after another, each seemingly waiting
/// for that worker's connection while the others stood idle.
struct LaneFree(RefCell<Vec<Option<Instant>>>);

impl LaneFree {
    fn new(workers: usize) -> LaneFree {
        LaneFree(RefCell::new(vec![Some(Instant::now()); workers]))
    }

    /// The earliest an arrival due at `intended` could have left: then, if
    /// a connection of the lane was free by then; else when the first came
    /// free. `seat` is the taker's own connection, free now.
    fn could_leave(&self, seat: usize, intended: Instant) -> Instant {
        let times = self.0.borrow();
        if times[seat].is_some_and(|t| t <= intended) {
            return intended;
        }
        let first = times.iter().flatten().min().copied();
        first.map_or(intended, |f| f.max(intended))
    }

    fn set(&self, seat: usize, free: Option<Instant>) {
        self.0.borrow_mut()[seat] = free;
    }
}

/// A worker's place: its lane's schedule and connections, and which of
/// those connections is its own.
struct Seat {
    ctx: Arc<ThreadCtx>,
    free: Rc<LaneFree>,
    index: usize,
}

async fn worker<C, S: Step<C>>(
    id: usize,
    group: usize,
    mut conn: C,
    mut step: S,
    shared: Arc<Shared>,
    seat: Seat,
) -> C {
    let ctx = &seat.ctx;
    let slot = shared.recorder.slot(id);
    let start = shared.start();
    let mut meter = Meter::new(start);
    meter.halt = Some(Halt {
        shared: shared.clone(),
        ctx: ctx.clone(),
        timer: None,
    });
    let waits = meter.waits();
    if let Some(budget) = &shared.budgets[group] {
        'outer: loop {
            let n = budget.claim();
            if n == 0 {
                break;
            }
            // Closed loop: a step starts when the one before it ended.
            let mut ended = None;
            for _ in 0..n {
                let now = ended.take().unwrap_or_else(Instant::now);
                if shared.stopping() || shared.past_deadline(now) {
                    break 'outer;
                }
                meter.intended = now;
                meter.fresh = true;
                take_step(&mut step, &mut conn, &mut meter, &waits).await;
                meter.flush(slot.lock().segment(0));
                ended = meter.ended();
                if meter.whole {
                    break 'outer;
                }
            }
            tokio::task::yield_now().await;
        }
        finish(&mut step, &mut conn, &shared).await;
        return conn;
    }
    loop {
        let t = match ctx.take(start) {
            Take::Due(t) => t,
            Take::Done => break,
            Take::Wait => {
                let notified = ctx.wake.notified();
                let mut notified = pin!(notified);
                notified.as_mut().enable();
                if shared.stopping() {
                    break;
                }
                match ctx.take(start) {
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
        let intended = start + Duration::from_nanos(t);
        let sent = Instant::now();
        // The client's own lateness: from when the operation could have
        // left (its intended time, or when a connection of its lane came
        // free if that was later; see `LaneFree`) to when it did. A waiting
        // worker's connection stays free, so a pacer that wakes late counts
        // as the client's lateness.
        let lag = sent.saturating_duration_since(seat.free.could_leave(seat.index, intended));
        seat.free.set(seat.index, None);
        if let Some(bins) = &ctx.starts {
            // The Poisson check judges the client: an operation counts at
            // its intended time plus the client's lateness, its wait for a
            // busy connection left out (the database's doing, which response
            // time, the stall warning and the served fraction report).
            // Counted when sent, the operations queued behind a database
            // that held every connection for a moment bunched up after it,
            // and the check blamed the client.
            bins.lock()
                .record((intended + lag).duration_since(start).as_nanos() as u64);
        }
        meter.intended = intended;
        take_step(&mut step, &mut conn, &mut meter, &waits).await;
        let mut slot_stats = slot.lock();
        let stats = slot_stats.segment(shared.segment_of(t));
        meter.flush(stats);
        stats.record_lag(lag.as_nanos() as u64);
        drop(slot_stats);
        let end = meter.ended().unwrap_or_else(Instant::now);
        seat.free
            .set(seat.index, Some(end.checked_sub(lag).unwrap_or(end)));
        if meter.whole {
            break;
        }
    }
    finish(&mut step, &mut conn, &shared).await;
    conn
}

/// A worker's [`Step::finish`], unless the run is being abandoned.
async fn finish<C, S: Step<C>>(step: &mut S, conn: &mut C, shared: &Shared) {
    if !shared.abort.load(Ordering::SeqCst) {
        step.finish(conn).await;
    }
}

/// How late the pacer releases an arrival after the time it slept until
/// (its timer's lateness, and its own work on waking), as a high quantile
/// followed over the run: it rises a quarter of the way to any later
/// release and decays by 1/256 of itself on each earlier one (so it sits
/// near the 99th percentile of steady lateness and forgets a stall within
/// a few hundred wake-ups). The pacer's gap is the lag budget less this,
/// so that an arrival's wait, the gap and the lateness together, aims at
/// the budget on a machine whose timers are late as well as on one whose
/// are not (a busy thread's own delays come on top).
#[derive(Debug, Default)]
struct Lateness {
    ns: u64,
}

impl Lateness {
    fn observe(&mut self, late: Duration) {
        let late = late.as_nanos().min(u128::from(u64::MAX)) as u64;
        if late > self.ns {
            self.ns += (late - self.ns) / 4;
        } else {
            self.ns -= self.ns / 256;
        }
    }

    /// The gap to leave between wake-ups under `budget`: never under half
    /// of it. A thread too busy to wake on time looks like a late timer,
    /// and shortening the gap for it would add wake-ups where they cost
    /// most.
    fn gap(&self, budget: Duration) -> Duration {
        budget
            .saturating_sub(Duration::from_nanos(self.ns))
            .max(budget / 2)
    }
}

/// The pacer: wakes an idle worker at each of this thread's intended
/// starts. It sleeps on a [`PreciseTimer`] and releases every arrival due
/// when it wakes, so an arrival's intended time never changes and its wait
/// for the wake-up counts in its response time and its scheduling lag.
///
/// Where it wakes is the fewest wake-ups that keep every arrival's wait
/// within the lag budget (less the timer's own lateness, [`Lateness`]):
/// the first arrival not yet released opens a window of that gap, and the
/// pacer wakes at the last arrival inside it, which releases the whole
/// window at once and no later than its last member needs. This is the
/// greedy cover of points by intervals, which needs the fewest intervals;
/// waking a gap after the previous wake-up instead, whatever was due,
/// spends a wake-up per gap even where the first arrival came late in it.
/// At rate r with gap g it wakes about once per 1 + r·g arrivals, and
/// below one arrival per gap, at each arrival.
async fn pace(shared: Arc<Shared>, ctx: Arc<ThreadCtx>, workers: usize) {
    let Some(schedule) = &ctx.schedule else {
        return;
    };
    // The pacer reads its own copy: the workers' copy advances as they take
    // arrivals, and the two must not wait for each other.
    let mut mine = schedule.lock().clone();
    let start = shared.start();
    let timer = PreciseTimer::new().ok();
    let mut lateness = Lateness::default();
    // When the pacer last slept until, if it has not released since.
    let mut slept_until = None;
    while let Some(first) = mine.peek() {
        if shared.stopping() {
            break;
        }
        let now = start.elapsed().as_nanos() as u64;
        if first > now {
            let wake = window_wake(&mine, lateness.gap(shared.lag_budget));
            let at = start + Duration::from_nanos(wake);
            match &timer {
                Some(timer) if timer.sleep_until(at).await.is_ok() => {}
                _ => tokio::time::sleep_until(tokio::time::Instant::from_std(at)).await,
            }
            slept_until = Some(at);
            continue;
        }
        let mut due = 0usize;
        while let Some(t) = mine.peek().filter(|&t| t <= now) {
            if let Some(offered) = shared.segment_offered.get(shared.segment_of(t)) {
                offered.fetch_add(1, Ordering::Relaxed);
            }
            mine.advance();
            due += 1;
        }
        ctx.released.fetch_add(due as u64, Ordering::Relaxed);
        for _ in 0..due.min(workers) {
            ctx.wake.notify_one();
        }
        if let Some(at) = slept_until.take() {
            // Late by the timer and by this release: the first arrival's
            // worker can go now.
            lateness.observe(Instant::now().saturating_duration_since(at));
        }
        // The workers just woken go first: reading ahead for the next
        // window and arming the timer (a system call) would otherwise come
        // before the first of them sends, and add to every window's
        // longest wait.
        behind_the_woken().await;
        // Behind schedule (the next arrival is due already), the loop would
        // release again without ever waiting, and on this single-threaded
        // runtime the workers it woke, and the sockets they wait on, would
        // never run: give them their turn first.
        if mine
            .peek()
            .is_some_and(|t| t <= start.elapsed().as_nanos() as u64)
        {
            tokio::task::yield_now().await;
        }
    }
    // Everything is released (or the run stopped): let waiting workers see it.
    ctx.wake.notify_waiters();
}

/// When to wake for the window the next arrival of `schedule` opens: at
/// the last arrival within `gap` of it. Reads ahead on a copy, so an
/// arrival is generated about twice in all: here, and when released.
fn window_wake(schedule: &Schedule, gap: Duration) -> u64 {
    let mut ahead = schedule.clone();
    let Some(first) = ahead.peek() else {
        return 0;
    };
    let end = first.saturating_add(gap.as_nanos() as u64);
    let mut wake = first;
    while let Some(t) = ahead.peek().filter(|&t| t <= end) {
        wake = t;
        ahead.advance();
    }
    wake
}

/// Let the tasks woken so far run before the caller resumes: the caller
/// goes to the back of its runtime's queue. (`tokio::task::yield_now`
/// resumes only after the runtime next polls its I/O driver, a system call
/// this does not need.)
async fn behind_the_woken() {
    let mut requeued = false;
    std::future::poll_fn(|cx| {
        if std::mem::replace(&mut requeued, true) {
            return std::task::Poll::Ready(());
        }
        cx.waker().wake_by_ref();
        std::task::Poll::Pending
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_wakes_at_its_last_arrival_within_the_gap() {
        use crate::schedule::Arrival;
        let us = Duration::from_micros;
        // One arrival every 10 µs from the start: a 45 µs window from the
        // first holds those at 0 to 40 µs.
        let mut s = Schedule::new(100_000.0, Arrival::Uniform, 1, None, None);
        assert_eq!(s.peek(), Some(0));
        assert_eq!(window_wake(&s, us(45)), 40_000);
        assert_eq!(window_wake(&s, us(40)), 40_000, "the end is inside");
        assert_eq!(window_wake(&s, us(9)), 0, "alone in its window");
        // The pacer's copy is not moved by reading ahead.
        assert_eq!(s.peek(), Some(0));
        s.advance();
        assert_eq!(window_wake(&s, us(45)), 50_000);
        // Up to the last arrival, and no further.
        let limited = Schedule::new(100_000.0, Arrival::Uniform, 1, Some(3), None);
        assert_eq!(window_wake(&limited, us(1000)), 20_000);
    }

    #[test]
    fn the_gap_is_the_budget_less_the_timers_lateness() {
        let budget = Duration::from_micros(50);
        let mut late = Lateness::default();
        assert_eq!(late.gap(budget), budget);
        // Steady lateness of 12 µs: the estimate climbs to it.
        for _ in 0..40 {
            late.observe(Duration::from_micros(12));
        }
        let gap = late.gap(budget);
        assert!(
            gap >= Duration::from_micros(38) && gap <= Duration::from_micros(39),
            "{gap:?}"
        );
        // A stall (or a busy thread) never halves the gap, and is
        // forgotten over a few hundred punctual wake-ups.
        late.observe(Duration::from_millis(2));
        assert_eq!(late.gap(budget), budget / 2);
        for _ in 0..2000 {
            late.observe(Duration::ZERO);
        }
        assert!(late.gap(budget) > Duration::from_micros(49));
    }
}
