//! The machine's own scheduling delay, measured beside a test: a probe
//! thread asks to sleep 1 ms, again and again, and records how late it
//! wakes. On a quiet machine that is tens of microseconds; with every core
//! busy (CI neighbours, a CPU hog) a runnable thread waits for a slice of
//! the scheduler, often several milliseconds and sometimes tens.
//!
//! A test that bounds a latency sojourn adds (how long a client waits
//! below capacity, how late an operation leaves) states the bound as what
//! the code may add plus what the machine added to any thread while it
//! ran ([`Lateness::allowance`]): a quiet machine keeps the bound tight, a
//! busy one loosens it by what it measurably did, and a defect (a stall of
//! seconds) stays outside it either way.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The sleep the probe asks for each time.
const NAP: Duration = Duration::from_millis(1);

/// A probe thread measuring wake-up lateness until [`Probe::finish`].
pub struct Probe {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<Vec<Duration>>,
}

/// How late the probe woke while it ran.
#[derive(Clone, Copy, Debug)]
pub struct Lateness {
    pub samples: usize,
    pub p99: Duration,
    pub max: Duration,
}

impl Probe {
    pub fn start() -> Probe {
        let stop = Arc::new(AtomicBool::new(false));
        let thread = std::thread::Builder::new()
            .name("lateness-probe".into())
            .spawn({
                let stop = stop.clone();
                move || {
                    let mut late = Vec::with_capacity(4096);
                    while !stop.load(Ordering::Relaxed) {
                        let asked = Instant::now();
                        std::thread::sleep(NAP);
                        late.push(asked.elapsed().saturating_sub(NAP));
                    }
                    late
                }
            })
            .expect("starting the lateness probe");
        Probe { stop, thread }
    }

    pub fn finish(self) -> Lateness {
        self.stop.store(true, Ordering::Relaxed);
        Lateness::of(self.thread.join().expect("the lateness probe"))
    }
}

/// Run `f` with a probe beside it: what it returned and how late the
/// machine woke a thread meanwhile.
pub fn measured<T>(f: impl FnOnce() -> T) -> (T, Lateness) {
    let probe = Probe::start();
    let out = f();
    (out, probe.finish())
}

impl Lateness {
    fn of(mut late: Vec<Duration>) -> Lateness {
        late.sort_unstable();
        // The nearest rank: the smallest sample with 99% at or below it.
        let rank = (late.len() * 99).div_ceil(100).max(1);
        Lateness {
            samples: late.len(),
            p99: late.get(rank - 1).copied().unwrap_or_default(),
            max: late.last().copied().unwrap_or_default(),
        }
    }

    /// What a bound on a latency should allow beyond the code's own: the
    /// worst wake-up the probe saw, which any thread of the code under
    /// test could have suffered as well.
    pub fn allowance(&self) -> Duration {
        self.max
    }
}

impl Lateness {
    /// A bound on a latency the code under test adds: `base` (what it may
    /// add on a quiet machine) plus the [`Lateness::allowance`], but never
    /// past `ceiling`, the least value at which the bound would no longer
    /// tell right from wrong (the latency a defect gives, less a margin).
    pub fn bound(&self, base: Duration, ceiling: Duration) -> Duration {
        (base + self.allowance()).min(ceiling)
    }
}

impl std::fmt::Display for Lateness {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the machine woke a thread up to {:.1} ms late (p99 {:.1} ms, {} samples)",
            self.max.as_secs_f64() * 1e3,
            self.p99.as_secs_f64() * 1e3,
            self.samples
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_figures_are_of_the_samples() {
        let ms = Duration::from_millis;
        // 200 samples: 197 of 0 ms, then 5, 7 and 30 ms.
        let mut late = vec![ms(0); 197];
        late.extend([ms(30), ms(5), ms(7)]);
        let l = Lateness::of(late);
        assert_eq!((l.samples, l.p99, l.max), (200, ms(5), ms(30)));
        assert_eq!(l.allowance(), ms(30));
        assert_eq!(l.bound(ms(20), ms(100)), ms(50));
        assert_eq!(l.bound(ms(80), ms(100)), ms(100));
        let none = Lateness::of(Vec::new());
        assert_eq!((none.samples, none.max), (0, Duration::ZERO));
    }

    #[test]
    fn a_probe_samples_while_it_runs() {
        // 100 ms of naps of 1 ms: dozens of samples, each a nap or more.
        let (_, l) = measured(|| std::thread::sleep(Duration::from_millis(100)));
        assert!((10..=110).contains(&l.samples), "{l}");
    }
}
