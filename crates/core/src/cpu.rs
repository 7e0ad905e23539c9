//! The client's own CPU time, so that sojourn can say what each operation
//! cost it and warn when it, rather than the database, set the pace.

use std::time::Duration;

use serde::Serialize;

/// User and system CPU time consumed by this process.
#[derive(Copy, Clone, Debug, Default, PartialEq, Serialize)]
pub struct CpuTimes {
    pub user_s: f64,
    pub system_s: f64,
}

impl CpuTimes {
    /// CPU used by this process so far (all threads).
    pub fn now() -> CpuTimes {
        // SAFETY: getrusage writes into the zeroed struct we own.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
        if rc != 0 {
            return CpuTimes::default();
        }
        let secs = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6;
        CpuTimes {
            user_s: secs(ru.ru_utime),
            system_s: secs(ru.ru_stime),
        }
    }

    pub fn since(self, earlier: CpuTimes) -> CpuTimes {
        CpuTimes {
            user_s: (self.user_s - earlier.user_s).max(0.0),
            system_s: (self.system_s - earlier.system_s).max(0.0),
        }
    }

    pub fn total_s(&self) -> f64 {
        self.user_s + self.system_s
    }

    /// Fraction of the CPU the process may use (all cores) that it used
    /// over `wall`.
    pub fn utilisation(&self, wall: Duration) -> f64 {
        let cores = available_cores() as f64;
        let w = wall.as_secs_f64();
        if w <= 0.0 {
            0.0
        } else {
            self.total_s() / (w * cores)
        }
    }
}

/// CPU time the calling thread has used so far (zero where the clock
/// cannot be read).
pub fn thread_cpu() -> Duration {
    // SAFETY: clock_gettime writes into the zeroed struct we own.
    let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
    if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) } != 0 {
        return Duration::ZERO;
    }
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// Cores this process may run on.
pub fn available_cores() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busy_work_shows_up_as_user_time() {
        // Spin until the counter shows 20 ms of CPU. If it never moved, the
        // wall-clock bound ends the loop and the assertion fails.
        let before = CpuTimes::now();
        let start = std::time::Instant::now();
        let mut x = 0u64;
        let mut used = CpuTimes::default();
        while start.elapsed() < Duration::from_secs(20) {
            for _ in 0..100_000 {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
            }
            std::hint::black_box(x);
            used = CpuTimes::now().since(before);
            if used.user_s >= 0.02 {
                break;
            }
        }
        assert!(used.user_s >= 0.02, "{used:?}");
        assert!(used.total_s() <= start.elapsed().as_secs_f64() * available_cores() as f64 + 0.05);
    }
}
