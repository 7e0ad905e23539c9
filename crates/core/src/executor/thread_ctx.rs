//! What the coordinator shares with one runtime thread's job: the
//! thread's share of the schedule, the notifications that wake its workers
//! and its job task, and the counts the coordinator reads as the run goes.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use parking_lot::Mutex;
use tokio::sync::Notify;

use crate::schedule::Schedule;
use crate::selfcheck::StartBins;

/// One job's state that the coordinator may poke from its own thread.
pub(super) struct ThreadCtx {
    /// Idle open-loop workers wait here for a due arrival, and steps for
    /// their own time (`Meter::wait_until`).
    pub(super) wake: Notify,
    /// The thread's job task waits here for an abort.
    pub(super) abort: Notify,
    /// This thread's share of the schedule (open loop).
    pub(super) schedule: Option<Mutex<Schedule>>,
    /// Arrivals the pacer has released: the load actually offered, whether
    /// or not workers were free to take it.
    pub(super) released: AtomicU64,
    /// Sends per time bin, for the Poisson self-check.
    pub(super) starts: Option<Mutex<StartBins>>,
}

impl ThreadCtx {
    pub fn new(schedule: Option<Schedule>, starts: Option<StartBins>) -> ThreadCtx {
        ThreadCtx {
            wake: Notify::new(),
            abort: Notify::new(),
            schedule: schedule.map(Mutex::new),
            released: AtomicU64::new(0),
            starts: starts.map(Mutex::new),
        }
    }

    /// Arrivals released so far.
    pub fn released(&self) -> u64 {
        self.released.load(Ordering::Relaxed)
    }

    /// This job's send counts, for the coordinator to fold.
    pub fn starts(&self) -> Option<&Mutex<StartBins>> {
        self.starts.as_ref()
    }

    /// The intended time (from the start) of this job's next arrival no
    /// worker has taken yet; `None` when none is left. An operation is
    /// counted for the Poisson check at or after its intended time, so the
    /// bins before this one are complete but for a release a worker has
    /// taken and not yet counted, a few instructions later.
    pub fn next_untaken(&self) -> Option<u64> {
        self.schedule.as_ref().and_then(|s| s.lock().peek())
    }

    /// Wake every waiting worker and the job task, so they look at the
    /// stop and abort flags.
    pub fn wake_all(&self) {
        self.wake.notify_waiters();
        self.abort.notify_waiters();
    }

    #[inline]
    pub(super) fn take(&self, start: Instant) -> Take {
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

pub(super) enum Take {
    Due(u64),
    Wait,
    Done,
}
