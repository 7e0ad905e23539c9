//! What a worker records of one step: each call's service time (from when
//! it started) and response time (from when the step was meant to start),
//! flushed into the worker's statistics under one lock when the step ends;
//! and when the step's last call ended, so that a closed loop's next step
//! can start from that moment instead of reading the clock again; and,
//! for a call that failed, why, in the database's words (taken from the
//! connection that failed it).

use std::pin::pin;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::{Instant, SystemTime};

use crate::backend::{Connection, Status};
use crate::histograms::Stats;
use crate::op::OpKind;
use crate::timer::PreciseTimer;

use super::shared::Shared;
use super::thread_ctx::ThreadCtx;

/// The timings of one step (read-modify-write records its read, its
/// update and itself; a script each statement and itself), flushed under
/// one lock when the step ends.
pub struct Meter {
    pub(super) intended: Instant,
    // Closed loop: the intended start was read from the clock just now, so
    // the first call may start from it instead of reading the clock again.
    pub(super) fresh: bool,
    /// The first timings, in place: YCSB's steps record at most three.
    pending: [(OpKind, Status, u64, u64); 3],
    n: usize,
    /// Any beyond those (a script's statements), kept for the next step.
    more: Vec<(OpKind, Status, u64, u64)>,
    /// Operations timed elsewhere ([`Meter::record_timed`]): kind, status,
    /// nanoseconds, how many.
    timed: Vec<(OpKind, Status, u64, u64)>,
    /// Why the step's failed calls failed, where the connection said:
    /// kind, status, the database's text, when.
    reasons: Vec<(OpKind, Status, String, SystemTime)>,
    /// The step stands for its worker's whole phase ([`Meter::whole_phase`]).
    pub(super) whole: bool,
    /// When the last [`Meter::record`] read the clock, and how many times
    /// the step had waited by then (see [`Meter::ended`]).
    ended: Option<(Instant, u32)>,
    /// How many times the current worker's steps have waited (returned
    /// `Pending`), counted by `take_step`.
    waits: Arc<AtomicU32>,
    /// What ends a step's own wait early ([`Meter::wait_until`]); none
    /// outside a run.
    pub(super) halt: Option<Halt>,
}

/// The run's stop and deadline, and the thread's wake-ups, that end a
/// step's own wait; and the timer it waits on, made at its first wait.
pub(super) struct Halt {
    pub shared: Arc<Shared>,
    pub ctx: Arc<ThreadCtx>,
    pub timer: Option<Option<PreciseTimer>>,
}

impl Meter {
    pub(super) fn new(now: Instant) -> Meter {
        Meter {
            intended: now,
            fresh: false,
            pending: [(OpKind::Read, Status::Ok, 0, 0); 3],
            n: 0,
            more: Vec::new(),
            timed: Vec::new(),
            reasons: Vec::new(),
            whole: false,
            ended: None,
            waits: Arc::new(AtomicU32::new(0)),
            halt: None,
        }
    }

    /// The counter `take_step` keeps.
    pub(super) fn waits(&self) -> Arc<AtomicU32> {
        self.waits.clone()
    }

    /// The moment the step just taken recorded its last call, if it
    /// recorded it with [`Meter::record`] and did not wait for anything
    /// since: what lies between that moment and now is the client's own
    /// bookkeeping (recording the call, the next key), a few hundred
    /// nanoseconds at most, so the worker's next call may start from it
    /// rather than read the clock again. A clock read was a twentieth of
    /// the client's time per operation in a pipelined Redis run, and this
    /// saves one of two. Counting that bookkeeping into the next call errs
    /// towards a longer latency, never a shorter one. After a step that
    /// waited since its last record (a retry's back-off), or that timed
    /// its last call itself ([`Meter::record_span`]: a read whose values
    /// are verified after the answer), the worker reads the clock afresh.
    pub(super) fn ended(&mut self) -> Option<Instant> {
        let (at, waits) = self.ended.take()?;
        (waits == self.waits.load(Ordering::Relaxed)).then_some(at)
    }

    /// When the current step was meant to start.
    pub fn intended_start(&self) -> Instant {
        self.intended
    }

    /// Wait until `at`, the moment the step means its calls to start (a
    /// TPC-C terminal's keying time over): a step that keeps a schedule of
    /// its own in a closed loop. From here on the step's response times
    /// count from `at`, however late its calls leave: a call still
    /// waiting for the one before it, on a database that fell behind,
    /// counts that wait as the database's. False (the step then records
    /// nothing and returns) when the run stops first, or ends before `at`:
    /// then the wait lasts until the run's end, not beyond.
    pub async fn wait_until(&mut self, at: Instant) -> bool {
        self.intended = at;
        self.fresh = false;
        let Some(halt) = &mut self.halt else {
            tokio::time::sleep_until(tokio::time::Instant::from_std(at)).await;
            return true;
        };
        let (until, reached) = match halt.shared.deadline.get().copied().flatten() {
            Some(d) if d <= at => (d, false),
            _ => (at, true),
        };
        // The same microsecond timer as the pacer's: tokio's millisecond
        // wheel would add up to a millisecond of the client's own to
        // every response time.
        let timer = halt.timer.get_or_insert_with(|| PreciseTimer::new().ok());
        loop {
            // Armed before the stop flag is read: a stop announced in
            // between still wakes this wait.
            let woken = halt.ctx.wake.notified();
            let mut woken = pin!(woken);
            woken.as_mut().enable();
            if halt.shared.stopping() {
                return false;
            }
            if Instant::now() >= until {
                return reached;
            }
            let sleep = async {
                match timer {
                    Some(t) if t.sleep_until(until).await.is_ok() => {}
                    _ => tokio::time::sleep_until(tokio::time::Instant::from_std(until)).await,
                }
            };
            tokio::select! {
                _ = sleep => {}
                _ = woken => {}
            }
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
        let now = Instant::now();
        self.record_span(kind, status, started, now);
        self.ended = Some((now, self.waits.load(Ordering::Relaxed)));
    }

    /// [`Meter::record`] for a call on `conn`: a failed call's reason, if
    /// the connection has one, is kept with it.
    #[inline]
    pub fn record_on<C: Connection>(
        &mut self,
        conn: &mut C,
        kind: OpKind,
        status: Status,
        started: Instant,
    ) {
        self.record(kind, status, started);
        if !status.is_ok() {
            self.reason_from(conn, kind, status);
        }
    }

    /// [`Meter::record_span`] for a call on `conn`, as [`Meter::record_on`].
    #[inline]
    pub fn record_span_on<C: Connection>(
        &mut self,
        conn: &mut C,
        kind: OpKind,
        status: Status,
        started: Instant,
        ended: Instant,
    ) {
        self.record_span(kind, status, started, ended);
        if !status.is_ok() {
            self.reason_from(conn, kind, status);
        }
    }

    /// A call that failed in the client for `why` (a script's run-time
    /// error: a division by zero, an undefined variable), before or
    /// instead of reaching the database.
    pub fn record_because(&mut self, kind: OpKind, status: Status, started: Instant, why: String) {
        self.record(kind, status, started);
        self.reasons.push((kind, status, why, SystemTime::now()));
    }

    /// A whole made of calls this step recorded (a read-modify-write): a
    /// failed whole fails for the reason its last failed call gave.
    pub fn record_whole(&mut self, kind: OpKind, status: Status, started: Instant) {
        self.record(kind, status, started);
        if status.is_ok() {
            return;
        }
        if let Some((_, _, text, at)) = self.reasons.last() {
            let (text, at) = (text.clone(), *at);
            self.reasons.push((kind, status, text, at));
        }
    }

    #[cold]
    fn reason_from<C: Connection>(&mut self, conn: &mut C, kind: OpKind, status: Status) {
        if let Some(text) = conn.take_failure() {
            self.reasons.push((kind, status, text, SystemTime::now()));
        }
    }

    /// Record a call that ran from `started` to `ended`.
    #[inline]
    pub fn record_span(&mut self, kind: OpKind, status: Status, started: Instant, ended: Instant) {
        self.ended = None;
        let service = ended.saturating_duration_since(started).as_nanos() as u64;
        let response = ended.saturating_duration_since(self.intended).as_nanos() as u64;
        if self.n < self.pending.len() {
            self.pending[self.n] = (kind, status, service, response);
            self.n += 1;
        } else {
            self.more.push((kind, status, service, response));
        }
    }

    /// Record `count` operations timed by someone else, each `ns` long:
    /// statements a server ran in a loop of its own and timed itself
    /// (LIOPS' `liops.loop=server`). No client waited between them, so
    /// their response time is their service time. Each counts as an
    /// operation done.
    pub fn record_timed(&mut self, kind: OpKind, status: Status, ns: u64, count: u64) {
        if count > 0 {
            self.timed.push((kind, status, ns, count));
        }
    }

    /// This step is its worker's whole phase: the worker takes no other
    /// step, and the operations recorded are what it did (not one step).
    pub fn whole_phase(&mut self) {
        self.whole = true;
    }

    #[inline]
    pub(super) fn flush(&mut self, stats: &mut Stats) {
        for &(k, s, sv, rs) in &self.pending[..self.n] {
            stats.record(k, s, sv, rs);
        }
        let more = self.more.len() as u64;
        if more > 0 {
            for (k, s, sv, rs) in self.more.drain(..) {
                stats.record(k, s, sv, rs);
            }
        }
        if !self.reasons.is_empty() {
            for (k, s, text, at) in self.reasons.drain(..) {
                stats.note_reason(k, s, &text, at);
            }
        }
        if self.whole {
            let mut done = self.n as u64 + more;
            for (k, s, ns, count) in self.timed.drain(..) {
                stats.record_n(k, s, ns, ns, count);
                done += count;
            }
            stats.ops_done += done;
        } else if self.n > 0 {
            // A step that recorded nothing (a wait the run's end cut
            // short) did no operation.
            stats.ops_done += 1;
        }
        self.n = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::super::step::{take_step, Step};
    use super::*;

    /// Records one read, then waits (or not) before it returns.
    struct RecordThen {
        wait: bool,
    }

    impl Step<()> for RecordThen {
        async fn step(&mut self, _: &mut (), m: &mut Meter) {
            let t = m.start();
            m.record(OpKind::Read, Status::Ok, t);
            if self.wait {
                tokio::task::yield_now().await;
            }
        }
    }

    fn ended_after(step: &mut RecordThen) -> Option<Instant> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let mut meter = Meter::new(Instant::now());
        let waits = meter.waits();
        let before = Instant::now();
        rt.block_on(take_step(step, &mut (), &mut meter, &waits));
        let ended = meter.ended();
        if let Some(at) = ended {
            assert!(at >= before, "the recorded end precedes the step");
        }
        // Taken once: a second look reads the clock afresh.
        assert_eq!(meter.ended(), None);
        ended
    }

    #[test]
    fn a_step_that_returns_at_its_last_record_hands_its_end_on() {
        assert!(ended_after(&mut RecordThen { wait: false }).is_some());
    }

    #[test]
    fn a_step_that_waits_after_its_last_record_does_not() {
        assert_eq!(ended_after(&mut RecordThen { wait: true }), None);
    }

    #[test]
    fn a_span_timed_apart_is_not_handed_on() {
        let mut meter = Meter::new(Instant::now());
        let t = meter.start();
        meter.record(OpKind::Read, Status::Ok, t);
        let answered = Instant::now();
        meter.record_span(OpKind::Read, Status::Ok, t, answered);
        assert_eq!(meter.ended(), None);
    }

    #[test]
    fn a_step_of_many_calls_keeps_every_timing() {
        let mut meter = Meter::new(Instant::now());
        let mut stats = Stats::default();
        for round in 0..2 {
            let t = meter.start();
            for _ in 0..5 {
                meter.record(OpKind::Update, Status::Ok, t);
            }
            meter.record(OpKind::Read, Status::Ok, t);
            meter.flush(&mut stats);
            assert_eq!(stats.op(OpKind::Update).unwrap().count(), 5 * (round + 1));
        }
        assert_eq!(stats.op(OpKind::Read).unwrap().count(), 2);
        assert_eq!(stats.ops_done, 2, "one step is one operation done");
    }
}
