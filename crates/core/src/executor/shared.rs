//! The state every runtime thread of one run shares with the coordinator:
//! the recorder's slots, the start and deadline, the stop and abort flags,
//! the closed-loop budgets.

use crate::histograms::Recorder;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// What every thread of a run shares.
pub(super) struct Shared {
    pub(super) recorder: Recorder,
    pub(super) start: OnceLock<Instant>,
    pub(super) deadline: OnceLock<Option<Instant>>,
    /// Stop scheduling new operations.
    pub(super) stop: AtomicBool,
    /// Stop waiting for in-flight operations: drop them.
    pub(super) abort: AtomicBool,
    /// Per group, closed loop only: operations left to hand out.
    pub(super) budgets: Vec<Option<Budget>>,
    /// Where each segment of a rate profile ends, in nanoseconds after the
    /// start (empty without segments).
    pub(super) segment_ends: Vec<u64>,
    /// Per segment, the arrivals the pacers released with an intended
    /// start in it: what it offered, which a Poisson schedule draws.
    pub(super) segment_offered: Vec<AtomicU64>,
    /// How late the pacer may release an arrival (`RunConfig::lag_budget`).
    pub(super) lag_budget: Duration,
}

impl Shared {
    pub(super) fn start(&self) -> Instant {
        *self.start.get().expect("start is set before workers run")
    }

    pub(super) fn stopping(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// The segment an operation intended `t` ns after the start counts in.
    #[inline]
    pub(super) fn segment_of(&self, t: u64) -> usize {
        self.segment_ends
            .partition_point(|&end| end <= t)
            .min(self.segment_ends.len().saturating_sub(1))
    }

    pub(super) fn past_deadline(&self, now: Instant) -> bool {
        self.deadline
            .get()
            .copied()
            .flatten()
            .is_some_and(|d| now >= d)
    }
}

/// Operations a closed-loop worker claims at once. Workers yield between
/// chunks; the runtime polls its I/O driver on each yield, so yielding much
/// more often costs a syscall every few operations.
const CHUNK: u64 = 1024;

/// A group's closed-loop operations, handed out to its workers.
pub(super) struct Budget {
    left: AtomicU64,
    workers: u64,
}

impl Budget {
    pub(super) fn new(operations: u64, workers: usize) -> Budget {
        Budget {
            left: AtomicU64::new(operations),
            workers: (workers as u64).max(1),
        }
    }

    /// Claim up to a chunk, and never more than a fair share of what is
    /// left (half of it over the workers): a worker that claimed a whole
    /// chunk of a short run would run it alone while the others, finding
    /// nothing left, stopped, and a run of 1,000 operations over 16
    /// connections would measure one. Shares shrink as the budget runs
    /// out, so the workers also end together.
    pub(super) fn claim(&self) -> u64 {
        let mut cur = self.left.load(Ordering::Relaxed);
        loop {
            if cur == 0 {
                return 0;
            }
            let share = cur.div_ceil(2 * self.workers);
            let n = cur.min(CHUNK).min(share);
            match self.left.compare_exchange_weak(
                cur,
                cur - n,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return n,
                Err(c) => cur = c,
            }
        }
    }
}
