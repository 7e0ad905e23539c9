//! Reconnection pacing shared by the backends whose connections come back
//! by themselves: after a failed attempt the next one waits, the wait
//! doubling per failure up to [`Backoff::MAX`], and a success starts over.

use std::time::Duration;

use tokio::time::{sleep_until, Instant};

/// When the next attempt to reach a server may start.
#[derive(Debug)]
pub(crate) struct Backoff {
    next: Instant,
    delay: Duration,
    /// The first wait, after one failure (and again after a success).
    first: Duration,
}

impl Backoff {
    /// The longest wait between two attempts.
    pub(crate) const MAX: Duration = Duration::from_secs(1);

    /// No wait before the first attempt; `first` after the first failure.
    pub(crate) fn new(first: Duration) -> Backoff {
        Backoff {
            next: Instant::now(),
            delay: first,
            first,
        }
    }

    /// When the next attempt is due.
    pub(crate) fn next(&self) -> Instant {
        self.next
    }

    /// Whether an attempt now would come too soon.
    pub(crate) fn blocked(&self) -> bool {
        Instant::now() < self.next
    }

    /// An attempt failed: the next waits, longer than this one did.
    pub(crate) fn failed(&mut self) {
        self.next = Instant::now() + self.delay;
        self.delay = (self.delay * 2).min(Self::MAX);
    }

    /// Wait until an attempt is due, and book the one after it (for callers
    /// that learn of success only later, through [`Backoff::succeeded`]).
    pub(crate) async fn wait_turn(&mut self) {
        sleep_until(self.next).await;
        self.failed();
    }

    pub(crate) fn succeeded(&mut self) {
        self.delay = self.first;
    }
}
