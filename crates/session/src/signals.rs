//! Ctrl+C, SIGTERM and SIGHUP: the first stops scheduling, lets in-flight
//! operations drain and keeps what was measured (the run is stored as
//! interrupted); the second quits at once, after undoing what must not
//! outlive the process (a dashboard's hold on the terminal, see
//! [`before_quit`]).
//!
//! SIGTERM is what Kubernetes and service managers send before they kill:
//! stopping as Ctrl+C does keeps the run. A display that owns the terminal
//! in raw mode gets no SIGINT from Ctrl+C; it reads the key, stops the run
//! and calls [`quit_now`] itself.

use std::sync::Mutex;

use sojourn_core::executor::StopHandle;

type Hook = Box<dyn Fn() + Send>;

/// What to undo before quitting at once.
static BEFORE_QUIT: Mutex<Option<Hook>> = Mutex::new(None);

/// Run `hook` before the process quits at once (the second Ctrl+C or
/// signal); `None` clears it. One at a time: the display that owns the
/// terminal sets it while it does.
pub fn before_quit(hook: Option<Hook>) {
    *BEFORE_QUIT.lock().unwrap_or_else(|e| e.into_inner()) = hook;
}

/// Quit now, as the second Ctrl+C does: undo what [`before_quit`] holds,
/// then exit with 130.
pub fn quit_now() -> ! {
    if let Some(hook) = BEFORE_QUIT.lock().unwrap_or_else(|e| e.into_inner()).take() {
        hook();
    }
    std::process::exit(130)
}

/// What the first interruption says, wherever it came from.
pub const INTERRUPTED: &str =
    "interrupted: stopping and draining in-flight operations (Ctrl+C again to quit now)";

/// Watch for Ctrl+C, SIGTERM and SIGHUP on a thread of its own, stopping
/// `stop` on the first.
pub fn watch_ctrl_c(stop: StopHandle) {
    let spawned = std::thread::Builder::new()
        .name("sojourn-signals".into())
        .spawn(move || {
            let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            else {
                return;
            };
            rt.block_on(async {
                let mut signals = Signals::new();
                if signals.next().await {
                    // A display in raw mode may have stopped already.
                    if !stop.is_stopped() {
                        eprintln!("\n{INTERRUPTED}");
                        stop.stop();
                    }
                    if signals.next().await {
                        quit_now();
                    }
                }
            });
        });
    if let Err(e) = spawned {
        eprintln!("warning: Ctrl+C will end the run without a summary ({e})");
    }
}

/// The signals that interrupt a run.
struct Signals {
    #[cfg(unix)]
    term: Option<tokio::signal::unix::Signal>,
    #[cfg(unix)]
    hup: Option<tokio::signal::unix::Signal>,
}

impl Signals {
    fn new() -> Signals {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{signal, SignalKind};
            Signals {
                term: signal(SignalKind::terminate()).ok(),
                hup: signal(SignalKind::hangup()).ok(),
            }
        }
        #[cfg(not(unix))]
        Signals {}
    }

    /// The next one; false if none can come.
    async fn next(&mut self) -> bool {
        #[cfg(unix)]
        {
            async fn recv(s: &mut Option<tokio::signal::unix::Signal>) -> Option<()> {
                match s {
                    Some(s) => s.recv().await,
                    None => std::future::pending().await,
                }
            }
            tokio::select! {
                r = tokio::signal::ctrl_c() => r.is_ok(),
                r = recv(&mut self.term) => r.is_some(),
                r = recv(&mut self.hup) => r.is_some(),
            }
        }
        #[cfg(not(unix))]
        tokio::signal::ctrl_c().await.is_ok()
    }
}
