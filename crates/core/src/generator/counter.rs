//! Counters shared by all workers: the load phase's key sequence
//! ([`Counter`]), `requestdistribution=sequential` ([`Sequential`]) and the
//! run phase's insert keys ([`AcknowledgedCounter`]).
//!
//! These are the only generators that are shared rather than per worker, so
//! they are atomics behind `&self`; the caller wraps them in an `Arc`.
//!
//! The acknowledged counter exists because run-phase inserts finish out of
//! order: key `n+1` may be stored before key `n`. Reads must only pick keys
//! that exist, so `last()` reports the highest key below which every insert
//! has been acknowledged. YCSB tracks pending acknowledgements in a window of
//! 2^20 flags and throws when more than that are outstanding; we keep the
//! window (as a bitmap) for the common case and put acknowledgements beyond it
//! in a locked overflow list, so a stalled insert slows `last()` down but
//! never loses an acknowledgement, throws or blocks a worker.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use parking_lot::Mutex;

/// YCSB's `SequentialGenerator`: `lb, lb+1, …, ub, lb, …` across all callers.
#[derive(Debug)]
pub struct Sequential {
    lb: u64,
    /// `ub - lb + 1`, with 0 standing for the full 2^64 range.
    interval: u64,
    counter: AtomicU64,
}

impl Sequential {
    /// Cycles through `lb..=ub`; `ub < lb` yields `lb` only.
    pub fn new(lb: u64, ub: u64) -> Sequential {
        Sequential {
            lb,
            interval: ub.saturating_sub(lb).wrapping_add(1),
            counter: AtomicU64::new(0),
        }
    }

    #[inline]
    pub fn next(&self) -> u64 {
        let n = self.counter.fetch_add(1, Ordering::Relaxed);
        let offset = if self.interval == 0 {
            n
        } else {
            n % self.interval
        };
        self.lb.wrapping_add(offset)
    }
}

/// YCSB's `CounterGenerator`: `start, start+1, …` across all callers.
#[derive(Debug)]
pub struct Counter {
    next: AtomicU64,
}

impl Counter {
    pub fn new(start: u64) -> Counter {
        Counter {
            next: AtomicU64::new(start),
        }
    }

    #[inline]
    pub fn next(&self) -> u64 {
        self.next.fetch_add(1, Ordering::Relaxed)
    }

    /// The last value handed out (`start - 1`, wrapping, before the first).
    pub fn last(&self) -> u64 {
        self.next.load(Ordering::Relaxed).wrapping_sub(1)
    }
}

/// Number of pending acknowledgements tracked in the bitmap (YCSB's window).
const WINDOW: u64 = 1 << 20;
const WINDOW_MASK: u64 = WINDOW - 1;
const WORDS: usize = (WINDOW / 64) as usize;

/// YCSB's `AcknowledgedCounterGenerator`: hands out values like [`Counter`],
/// but [`last`](AcknowledgedCounter::last) only moves past a value once it
/// and every value before it has been acknowledged.
///
/// Acknowledging is lock-free in the common case: it sets a bit, and whoever
/// wins a try-lock moves `last` over the contiguous run of set bits. Up to
/// 2^20 values past `last` can be pending in the bitmap; acknowledgements
/// further ahead go to an overflow list (a mutex, off the common path) and
/// are moved into the bitmap as `last` catches up.
///
/// Acknowledge each value once. A repeated acknowledgement is ignored when
/// `last` has already passed the value, but one that races with `last`
/// passing it can mark the value 2^20 further on as done.
pub struct AcknowledgedCounter {
    counter: Counter,
    /// The lowest value not yet known to be acknowledged; `last() = low - 1`.
    /// Written only by the holder of `advancing`.
    low: AtomicU64,
    /// Bit `v & WINDOW_MASK` is set when `v` (in `low..low + WINDOW`) has been
    /// acknowledged but `low` has not moved past it yet.
    bits: Box<[AtomicU64]>,
    /// The try-lock for moving `low`.
    advancing: AtomicBool,
    /// Acknowledged values that were `WINDOW` or more past `low` when
    /// acknowledged.
    overflow: Mutex<Vec<u64>>,
    /// The smallest value in `overflow`, or `u64::MAX` when it is empty; lets
    /// the common path check the overflow without taking its lock.
    overflow_min: AtomicU64,
}

impl std::fmt::Debug for AcknowledgedCounter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AcknowledgedCounter")
            .field("next", &self.counter.next.load(Ordering::Relaxed))
            .field("last", &self.last())
            .field("overflow", &self.overflow.lock().len())
            .finish()
    }
}

impl AcknowledgedCounter {
    /// Values start at `start`; `last()` is `start - 1` (wrapping) until
    /// `start` is acknowledged.
    pub fn new(start: u64) -> AcknowledgedCounter {
        AcknowledgedCounter {
            counter: Counter::new(start),
            low: AtomicU64::new(start),
            bits: (0..WORDS).map(|_| AtomicU64::new(0)).collect(),
            advancing: AtomicBool::new(false),
            overflow: Mutex::new(Vec::new()),
            overflow_min: AtomicU64::new(u64::MAX),
        }
    }

    #[inline]
    pub fn next(&self) -> u64 {
        self.counter.next()
    }

    /// The highest value `v` such that every value from `start` to `v` has
    /// been acknowledged.
    #[inline]
    pub fn last(&self) -> u64 {
        self.low.load(Ordering::Acquire).wrapping_sub(1)
    }

    /// Mark `value` as done (whether the insert succeeded or not, as YCSB
    /// does, so that one failure does not freeze `last()`).
    pub fn acknowledge(&self, value: u64) {
        let low = self.low.load(Ordering::SeqCst);
        let ahead = value.wrapping_sub(low);
        if ahead >= 1 << 63 {
            // Below `low`: already covered.
            return;
        }
        if ahead < WINDOW {
            // `low` cannot pass `value` before this bit is set, so the slot
            // still belongs to `value` (no older value shares it any more).
            self.set_bit(value);
        } else {
            let mut overflow = self.overflow.lock();
            overflow.push(value);
            self.overflow_min.fetch_min(value, Ordering::SeqCst);
        }
        self.advance();
    }

    #[inline]
    fn set_bit(&self, value: u64) {
        let slot = value & WINDOW_MASK;
        self.bits[(slot >> 6) as usize].fetch_or(1 << (slot & 63), Ordering::SeqCst);
    }

    /// Whether work is waiting at `low`: its bit is set, or an overflowed
    /// value now fits in the window.
    fn work_pending(&self) -> bool {
        let low = self.low.load(Ordering::SeqCst);
        let slot = low & WINDOW_MASK;
        let bit_set =
            self.bits[(slot >> 6) as usize].load(Ordering::SeqCst) & (1 << (slot & 63)) != 0;
        bit_set || self.overflow_min.load(Ordering::SeqCst).wrapping_sub(low) < WINDOW
    }

    fn advance(&self) {
        // Every acknowledger sets its bit (SeqCst) before trying the lock, and
        // the holder re-checks the bits (SeqCst) after releasing it. So either
        // an acknowledger gets the lock itself, or the holder it lost to sees
        // its bit: no acknowledgement is left unprocessed with nobody
        // advancing.
        loop {
            if self
                .advancing
                .compare_exchange(false, true, Ordering::SeqCst, Ordering::SeqCst)
                .is_err()
            {
                return;
            }
            self.advance_locked();
            self.advancing.store(false, Ordering::SeqCst);
            if !self.work_pending() {
                return;
            }
        }
    }

    /// Move `low` over every acknowledged value; the caller holds the lock.
    fn advance_locked(&self) {
        let mut low = self.low.load(Ordering::Relaxed);
        loop {
            // Consume the run of set bits starting at `low`, a word at a time.
            loop {
                let slot = low & WINDOW_MASK;
                let word = &self.bits[(slot >> 6) as usize];
                let shift = slot & 63;
                let run = (!(word.load(Ordering::SeqCst) >> shift)).trailing_zeros() as u64;
                let run = run.min(64 - shift);
                if run == 0 {
                    break;
                }
                let mask = if run == 64 {
                    u64::MAX
                } else {
                    ((1u64 << run) - 1) << shift
                };
                // Clear before publishing the new `low`: an acknowledger that
                // sees the new `low` may reuse these slots.
                word.fetch_and(!mask, Ordering::SeqCst);
                low = low.wrapping_add(run);
                self.low.store(low, Ordering::SeqCst);
            }
            if self.overflow_min.load(Ordering::SeqCst).wrapping_sub(low) >= WINDOW {
                return;
            }
            // Some overflowed values now fit in the window: move them.
            let mut overflow = self.overflow.lock();
            let mut min = u64::MAX;
            overflow.retain(|&v| {
                let ahead = v.wrapping_sub(low);
                if ahead >= 1 << 63 {
                    false
                } else if ahead < WINDOW {
                    self.set_bit(v);
                    false
                } else {
                    min = min.min(v);
                    true
                }
            });
            self.overflow_min.store(min, Ordering::SeqCst);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequential_wraps() {
        let s = Sequential::new(5, 7);
        let got: Vec<u64> = (0..7).map(|_| s.next()).collect();
        assert_eq!(got, [5, 6, 7, 5, 6, 7, 5]);
        let one = Sequential::new(3, 3);
        assert_eq!((one.next(), one.next()), (3, 3));
        let full = Sequential::new(0, u64::MAX);
        assert_eq!((full.next(), full.next()), (0, 1));
    }

    #[test]
    fn counter_last() {
        let c = Counter::new(10);
        assert_eq!(c.last(), 9);
        assert_eq!(c.next(), 10);
        assert_eq!(c.next(), 11);
        assert_eq!(c.last(), 11);
        assert_eq!(Counter::new(0).last(), u64::MAX);
    }

    #[test]
    fn ack_in_order_and_out_of_order() {
        let c = AcknowledgedCounter::new(100);
        assert_eq!(c.last(), 99);
        let v: Vec<u64> = (0..5).map(|_| c.next()).collect();
        assert_eq!(v, [100, 101, 102, 103, 104]);
        c.acknowledge(101);
        assert_eq!(c.last(), 99);
        c.acknowledge(100);
        assert_eq!(c.last(), 101);
        c.acknowledge(104);
        c.acknowledge(103);
        assert_eq!(c.last(), 101);
        c.acknowledge(102);
        assert_eq!(c.last(), 104);
        // Duplicates and stale values are ignored.
        c.acknowledge(100);
        c.acknowledge(104);
        assert_eq!(c.last(), 104);
        assert_eq!(AcknowledgedCounter::new(0).last(), u64::MAX);
    }

    #[test]
    fn more_than_the_window_outstanding() {
        let start = 7;
        let c = AcknowledgedCounter::new(start);
        let n = 2 * WINDOW + 12_345;
        for _ in 0..n {
            c.next();
        }
        // Newest first: everything but the oldest WINDOW values overflows.
        for v in (start + 1..start + n).rev() {
            c.acknowledge(v);
        }
        assert_eq!(c.last(), start - 1);
        assert!(!c.overflow.lock().is_empty());
        c.acknowledge(start);
        assert_eq!(c.last(), start + n - 1);
        assert!(c.overflow.lock().is_empty());
        assert_eq!(c.overflow_min.load(Ordering::SeqCst), u64::MAX);
    }
}
