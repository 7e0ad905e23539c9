//! One runtime thread: a single-threaded tokio runtime that opens its share
//! of the connections, waits for the common start, then runs one worker
//! task per connection (and, under a target, a pacer for its share of the
//! schedule) until they finish or the coordinator aborts them.

use std::pin::pin;
use std::sync::atomic::Ordering;
use std::sync::mpsc::Sender;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use tokio::sync::Notify;

use crate::backend::BackendError;
use crate::schedule::Schedule;
use crate::timer::PreciseTimer;

use super::{Connector, Meter, Shared, Step};

/// What a thread tells the coordinator.
pub(super) enum Report {
    Connected(Result<(), BackendError>),
    Done { scheduled: u64, abandoned: u64 },
}

/// Operations a closed-loop worker claims at once. Workers yield between
/// chunks; the runtime polls its I/O driver on each yield, so yielding much
/// more often costs a syscall every few operations.
const CHUNK: u64 = 1024;

/// What the coordinator may poke from its own thread.
pub(super) struct ThreadCtx {
    /// Idle open-loop workers wait here for a due arrival.
    wake: Notify,
    /// The thread's main task waits here for an abort.
    abort: Notify,
    /// This thread's share of the schedule (open loop).
    schedule: Option<Mutex<Schedule>>,
}

impl ThreadCtx {
    /// Wake every waiting worker and the main task, so they look at the
    /// stop and abort flags.
    pub fn wake_all(&self) {
        self.wake.notify_waiters();
        self.abort.notify_waiters();
    }
}

pub(super) struct CoreThread<S> {
    index: usize,
    steps: Vec<(usize, S)>,
    shared: Arc<Shared>,
    ctx: Arc<ThreadCtx>,
}

enum Take {
    Due(u64),
    Wait,
    Done,
}

impl ThreadCtx {
    #[inline]
    fn take(&self, start: Instant) -> Take {
        let Some(schedule) = &self.schedule else {
            return Take::Done;
        };
        let mut s = schedule.lock();
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

impl<S> CoreThread<S> {
    pub fn new(
        index: usize,
        steps: Vec<(usize, S)>,
        schedule: Option<Schedule>,
        shared: Arc<Shared>,
    ) -> Self {
        CoreThread {
            index,
            steps,
            shared,
            ctx: Arc::new(ThreadCtx {
                wake: Notify::new(),
                abort: Notify::new(),
                schedule: schedule.map(Mutex::new),
            }),
        }
    }

    pub fn index(&self) -> usize {
        self.index
    }

    pub fn waker(&self) -> Arc<ThreadCtx> {
        self.ctx.clone()
    }

    pub fn run<K: Connector>(self, connector: &K, ready: &Barrier, tx: Sender<Report>)
    where
        S: Step<K::Conn>,
    {
        let runtime = match tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        {
            Ok(rt) => rt,
            Err(e) => {
                let _ = tx.send(Report::Connected(Err(BackendError::Config(format!(
                    "cannot start a runtime thread: {e}"
                )))));
                ready.wait();
                let _ = tx.send(Report::Done {
                    scheduled: 0,
                    abandoned: 0,
                });
                return;
            }
        };
        let local = tokio::task::LocalSet::new();
        let (scheduled, abandoned) = local.block_on(&runtime, self.main(connector, ready, &tx));
        let _ = tx.send(Report::Done {
            scheduled,
            abandoned,
        });
    }

    async fn main<K: Connector>(
        self,
        connector: &K,
        ready: &Barrier,
        tx: &Sender<Report>,
    ) -> (u64, u64)
    where
        S: Step<K::Conn>,
    {
        let mut conns = Vec::with_capacity(self.steps.len());
        let mut error = None;
        for _ in 0..self.steps.len() {
            match connector.connect().await {
                Ok(c) => conns.push(c),
                Err(e) => {
                    error = Some(e);
                    break;
                }
            }
        }
        let _ = tx.send(Report::Connected(error.map_or(Ok(()), Err)));
        // Blocking here is fine: nothing else runs on this thread yet, and
        // the wait is as short as the slowest thread's connecting.
        ready.wait();
        if self.shared.abort.load(Ordering::SeqCst) {
            return (0, 0);
        }

        let n = self.steps.len();
        let mut handles: Vec<_> = self
            .steps
            .into_iter()
            .zip(conns)
            .map(|((id, step), conn)| {
                tokio::task::spawn_local(worker(
                    id,
                    conn,
                    step,
                    self.shared.clone(),
                    self.ctx.clone(),
                ))
            })
            .collect();
        let pacer = self
            .ctx
            .schedule
            .is_some()
            .then(|| tokio::task::spawn_local(pace(self.shared.clone(), self.ctx.clone(), n)));

        {
            let all_done = async {
                for h in handles.iter_mut() {
                    let _ = h.await;
                }
            };
            let aborted = wait_abort(&self.shared, &self.ctx);
            tokio::select! {
                _ = all_done => {}
                _ = aborted => {}
            }
        }
        let abandoned = handles.iter().filter(|h| !h.is_finished()).count() as u64;
        for h in &handles {
            h.abort();
        }
        if let Some(p) = pacer {
            p.abort();
        }
        let scheduled = self.ctx.schedule.as_ref().map_or(0, |s| s.lock().issued());
        (scheduled, abandoned)
    }
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

async fn worker<C, S: Step<C>>(
    id: usize,
    mut conn: C,
    mut step: S,
    shared: Arc<Shared>,
    ctx: Arc<ThreadCtx>,
) {
    let slot = shared.recorder.slot(id);
    let start = shared.start();
    let mut meter = Meter::new(start);
    if let Some(budget) = &shared.budget {
        'outer: loop {
            let n = claim(budget);
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
        }
        return;
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
        let lag = Instant::now().saturating_duration_since(intended);
        meter.intended = intended;
        step.step(&mut conn, &mut meter).await;
        let mut stats = slot.lock();
        meter.flush(&mut stats);
        stats.record_lag(lag.as_nanos() as u64);
    }
}

/// Claim up to a chunk of the closed-loop budget.
fn claim(budget: &std::sync::atomic::AtomicU64) -> u64 {
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

/// The pacer: wakes an idle worker at each of this thread's intended
/// starts. It sleeps on a [`PreciseTimer`]; when it falls behind, it
/// releases every arrival already due in one go.
async fn pace(shared: Arc<Shared>, ctx: Arc<ThreadCtx>, workers: usize) {
    let Some(schedule) = &ctx.schedule else {
        return;
    };
    // The pacer reads its own copy: the workers' copy advances as they take
    // arrivals, and the two must not wait for each other.
    let mut mine = schedule.lock().clone();
    let start = shared.start();
    let timer = PreciseTimer::new().ok();
    while let Some(t) = mine.peek() {
        if shared.stopping() {
            break;
        }
        let now = start.elapsed().as_nanos() as u64;
        if t > now {
            let at = start + Duration::from_nanos(t);
            match &timer {
                Some(timer) if timer.sleep_until(at).await.is_ok() => {}
                _ => tokio::time::sleep_until(tokio::time::Instant::from_std(at)).await,
            }
            continue;
        }
        let mut due = 0usize;
        while mine.peek().is_some_and(|t| t <= now) {
            mine.advance();
            due += 1;
        }
        for _ in 0..due.min(workers) {
            ctx.wake.notify_one();
        }
    }
    // Everything is released (or the run stopped): let waiting workers see it.
    ctx.wake.notify_waiters();
}
