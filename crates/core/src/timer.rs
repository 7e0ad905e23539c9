//! Sleeping until an instant with microsecond precision inside the async
//! runtime.
//!
//! tokio's timer wheel has millisecond resolution: good for timeouts, far too
//! coarse to pace 100,000 operations per second. A Linux timerfd armed for
//! the exact instant and registered with tokio's reactor wakes the waiting
//! task on time, on a runtime thread, with no extra thread and no
//! cross-thread wake-up (on this kind of virtual machine each sleep/wake
//! syscall costs tens of microseconds of CPU, so avoiding them is most of the
//! client's cost under a target rate). Other platforms fall back to tokio's
//! timer.

use std::io;
use std::time::{Duration, Instant};

#[cfg(target_os = "linux")]
mod imp {
    use super::*;
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    use tokio::io::unix::AsyncFd;
    use tokio::io::Interest;

    pub struct PreciseTimer {
        fd: AsyncFd<OwnedFd>,
    }

    impl PreciseTimer {
        pub fn new() -> io::Result<PreciseTimer> {
            // SAFETY: timerfd_create returns a new descriptor or -1.
            let raw = unsafe {
                libc::timerfd_create(
                    libc::CLOCK_MONOTONIC,
                    libc::TFD_NONBLOCK | libc::TFD_CLOEXEC,
                )
            };
            if raw < 0 {
                return Err(io::Error::last_os_error());
            }
            // SAFETY: raw is a descriptor we own from here on; the OwnedFd
            // keeps it open, unchanged, for as long as the AsyncFd lives.
            let fd = unsafe {
                let owned = OwnedFd::from_raw_fd(raw);
                AsyncFd::register_with_interest(owned, Interest::READABLE)
            }
            .map_err(|e| io::Error::other(e.to_string()))?;
            Ok(PreciseTimer { fd })
        }

        pub async fn sleep_until(&self, deadline: Instant) -> io::Result<()> {
            let wait = deadline.saturating_duration_since(Instant::now());
            // An all-zero it_value disarms the timer, so a wait under a
            // microsecond is simply over.
            if wait < Duration::from_micros(1) {
                return Ok(());
            }
            let spec = libc::itimerspec {
                it_interval: libc::timespec {
                    tv_sec: 0,
                    tv_nsec: 0,
                },
                it_value: libc::timespec {
                    tv_sec: wait.as_secs() as libc::time_t,
                    tv_nsec: wait.subsec_nanos() as libc::c_long,
                },
            };
            let fd = self.fd.get_ref().as_raw_fd();
            // SAFETY: fd is our timerfd; spec outlives the call.
            if unsafe { libc::timerfd_settime(fd, 0, &spec, std::ptr::null_mut()) } != 0 {
                return Err(io::Error::last_os_error());
            }
            loop {
                let mut guard = self.fd.readable().await?;
                let mut expirations = [0u8; 8];
                let res = guard.try_io(|inner| {
                    // SAFETY: reading 8 bytes into our buffer from our fd.
                    let n = unsafe {
                        libc::read(
                            inner.get_ref().as_raw_fd(),
                            expirations.as_mut_ptr().cast(),
                            8,
                        )
                    };
                    if n < 0 {
                        Err(io::Error::last_os_error())
                    } else {
                        Ok(())
                    }
                });
                match res {
                    Ok(Ok(())) => {
                        // Consumed: clear readiness now rather than
                        // discovering it with a failed read next time.
                        guard.clear_ready();
                        return Ok(());
                    }
                    Ok(Err(e)) => return Err(e),
                    // Spurious readiness: wait again.
                    Err(_) => continue,
                }
            }
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    use super::*;

    pub struct PreciseTimer;

    impl PreciseTimer {
        pub fn new() -> io::Result<PreciseTimer> {
            Ok(PreciseTimer)
        }

        pub async fn sleep_until(&self, deadline: Instant) -> io::Result<()> {
            tokio::time::sleep_until(tokio::time::Instant::from_std(deadline)).await;
            Ok(())
        }
    }
}

pub use imp::PreciseTimer;

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn wakes_after_the_deadline_not_before() {
        let t = PreciseTimer::new().unwrap();
        for micros in [0u64, 50, 300, 2_000] {
            let deadline = Instant::now() + Duration::from_micros(micros);
            t.sleep_until(deadline).await.unwrap();
            assert!(Instant::now() >= deadline, "woke early for {micros} us");
        }
    }
}
