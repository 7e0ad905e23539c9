//! What the user sees while a run goes on, chosen once per command: the
//! live dashboard when stderr is a terminal (see [`crate::dashboard`]);
//! with `--no-dashboard` a one-line progress bar; with `-s` YCSB's status
//! lines on stderr (or the workload's own line, as the key-value workload
//! prints yb-sample-apps'); with `--no-progress`, or when stderr is not a
//! terminal, nothing. `--metrics-listen` adds the Prometheus endpoint
//! beside any of them. Called once per time-series interval, off the hot
//! path.

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use anyhow::Result;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use sojourn_core::executor::{Interval, Observer, Progress, RunOutcome, StopHandle};
use sojourn_core::histograms::Stats;
use sojourn_core::output::ycsb::status_line;
use sojourn_core::plan::MeasurementInterval;
use sojourn_core::workload::Narrator;
use sojourn_session::{PhaseView, Show, Watch};

use crate::cli::{LiveArgs, MetricsArgs};
use crate::dashboard::Dashboard;
use crate::metrics::Metrics;

/// How the terminal shows phases, and the metrics endpoint if asked for.
pub struct Terminal {
    status: bool,
    progress: bool,
    dashboard: Option<Dashboard>,
    metrics: Option<Metrics>,
    /// Phases run several at once (a suite's unordered configs): no
    /// dashboard or bar, which would fight over the terminal.
    together: AtomicBool,
}

impl Terminal {
    /// What `live` asks for; `json`: the summary is JSON (no dashboard,
    /// whose frame would sit above it); `keep_final`: leave each phase's
    /// last frame on the screen.
    pub fn new(
        live: &LiveArgs,
        json: bool,
        stop: &StopHandle,
        keep_final: bool,
    ) -> Result<Terminal> {
        let dashboard = (!live.status
            && !live.no_dashboard
            && !live.no_progress
            && !json
            && std::io::stderr().is_terminal()
            && std::env::var("TERM").map_or(true, |t| t != "dumb"))
        .then(|| Dashboard::new(stop.clone(), keep_final));
        Ok(Terminal {
            status: live.status,
            progress: !live.no_progress,
            dashboard,
            metrics: metrics(&live.metrics)?,
            together: AtomicBool::new(false),
        })
    }

    /// Nothing drawn (a coordinator, whose phases run on agents), the
    /// session's notes on stderr.
    pub fn quiet() -> Terminal {
        Terminal {
            status: false,
            progress: false,
            dashboard: None,
            metrics: None,
            together: AtomicBool::new(false),
        }
    }

    /// Whether the phases to come run several at once.
    pub fn together(&self, yes: bool) {
        self.together.store(yes, Ordering::Relaxed);
    }
}

/// The endpoint `--metrics-listen` asks for, said on stderr.
pub fn metrics(args: &MetricsArgs) -> Result<Option<Metrics>> {
    let Some(addr) = &args.metrics_listen else {
        return Ok(None);
    };
    if !(args.metrics_linger >= 0.0 && args.metrics_linger.is_finite()) {
        anyhow::bail!(
            "--metrics-linger {}: expected a number of seconds, 0 or more",
            args.metrics_linger
        );
    }
    let m = Metrics::listen(addr, Duration::from_secs_f64(args.metrics_linger))?;
    eprintln!("metrics: Prometheus metrics at {}", m.url());
    Ok(Some(m))
}

impl Show for Terminal {
    fn watch<'v>(&'v self, phase: &PhaseView) -> Box<dyn Watch + 'v> {
        let together = self.together.load(Ordering::Relaxed);
        let dashboard = self.dashboard.as_ref().filter(|_| !together);
        let screen: Box<dyn Watch + 'v> = match dashboard.and_then(|d| d.watch(phase)) {
            Some(d) => Box::new(d),
            None => Box::new(Display::new(self.status, !self.progress || together, phase)),
        };
        match &self.metrics {
            Some(m) => Box::new(Both(screen, Box::new(m.watch(phase)))),
            None => screen,
        }
    }

    fn note(&self, line: &str) {
        match &self.dashboard {
            Some(d) => d.note(line),
            None => eprintln!("{line}"),
        }
    }
}

/// A display's live view without its notes: a capacity search's steps,
/// whose own line each says what the step found.
pub struct WatchOnly<'t>(pub &'t Terminal);

impl Show for WatchOnly<'_> {
    fn watch<'v>(&'v self, phase: &PhaseView) -> Box<dyn Watch + 'v> {
        self.0.watch(phase)
    }

    fn note(&self, _: &str) {}
}

/// Two watches of one phase.
pub struct Both<'v>(pub Box<dyn Watch + 'v>, pub Box<dyn Watch + 'v>);

impl Observer for Both<'_> {
    fn interval(&self, p: &Progress<'_>) {
        self.0.interval(p);
        self.1.interval(p);
    }

    fn interval_closed(&self, interval: &Interval) {
        self.0.interval_closed(interval);
        self.1.interval_closed(interval);
    }
}

impl Watch for Both<'_> {
    fn finish(&self, outcome: Option<&RunOutcome>) {
        self.0.finish(outcome);
        self.1.finish(outcome);
    }
}

pub enum Display {
    Status {
        every: Duration,
        mi: MeasurementInterval,
        window: Mutex<Window>,
        line: Option<Arc<dyn Narrator>>,
    },
    Bar(ProgressBar),
    Nothing,
}

impl Display {
    pub fn new(status: bool, no_progress: bool, phase: &PhaseView) -> Display {
        if status {
            return Display::Status {
                every: phase.status_interval,
                mi: phase.measurement_interval,
                window: Mutex::new(Window::default()),
                line: phase.narrator.clone(),
            };
        }
        if no_progress || !std::io::stderr().is_terminal() {
            return Display::Nothing;
        }
        let bar = match phase.expected_ops {
            Some(n) => ProgressBar::with_draw_target(Some(n), ProgressDrawTarget::stderr()),
            None => ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr()),
        };
        let style = ProgressStyle::with_template(
            "{prefix} {elapsed_precise} [{wide_bar}] {pos}/{len} ops {msg}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar());
        bar.set_style(style);
        bar.set_prefix(phase.phase.name());
        Display::Bar(bar)
    }
}

/// What `-s` has gathered since its last status line.
#[derive(Default)]
pub struct Window {
    stats: Stats,
    /// When the last line was printed (the run's start before the first).
    since: Duration,
    /// Where the run stood at the latest interval, for the line its end
    /// prints.
    latest: Option<Place>,
}

#[derive(Clone, Copy)]
struct Place {
    elapsed: Duration,
    ops_done: u64,
    expected_ops: Option<u64>,
    max_execution_time: Option<Duration>,
}

impl Window {
    /// The status line of everything since the last one, which starts the
    /// next window.
    fn line(
        &mut self,
        mi: MeasurementInterval,
        narrator: Option<&Arc<dyn Narrator>>,
    ) -> Option<String> {
        let at = self.latest?;
        let period = Progress {
            elapsed: at.elapsed,
            interval_length: at.elapsed.saturating_sub(self.since),
            interval: &self.stats,
            ops_done: at.ops_done,
            expected_ops: at.expected_ops,
            max_execution_time: at.max_execution_time,
        };
        let line = narrator
            .and_then(|n| n.status_line(&period))
            .unwrap_or_else(|| status_line(&period, mi, SystemTime::now()));
        self.stats.reset();
        self.since = at.elapsed;
        Some(line)
    }
}

impl Watch for Display {
    fn finish(&self, _: Option<&RunOutcome>) {
        match self {
            Display::Bar(b) => b.finish_and_clear(),
            // YCSB ends with a status line as of the run's end, whatever
            // its status interval: a run shorter than one still gets one
            // (unless the workload's own lines say otherwise).
            Display::Status {
                mi, window, line, ..
            } => {
                if line.as_ref().is_some_and(|n| !n.status_at_end()) {
                    return;
                }
                let Ok(mut w) = window.lock() else { return };
                if w.latest.is_some_and(|at| at.elapsed > w.since) {
                    if let Some(text) = w.line(*mi, line.as_ref()) {
                        let _ = writeln!(std::io::stderr(), "{text}");
                    }
                }
            }
            Display::Nothing => {}
        }
    }
}

impl Observer for Display {
    fn interval(&self, p: &Progress<'_>) {
        match self {
            Display::Nothing => {}
            Display::Bar(bar) => {
                bar.set_position(p.ops_done);
                let rate = p.interval.ops_done as f64 / p.interval_length.as_secs_f64().max(1e-9);
                let mut p99 = 0u64;
                for (_, s) in p.interval.kinds() {
                    if !s.ok.response.is_empty() {
                        p99 = p99.max(s.ok.response.value_at_quantile(0.99));
                    }
                }
                bar.set_message(format!("{rate:.0} ops/s, p99 {:.2} ms", p99 as f64 / 1e6));
            }
            Display::Status {
                every,
                mi,
                window,
                line,
            } => {
                let Ok(mut w) = window.lock() else { return };
                w.stats.add(p.interval);
                w.latest = Some(Place {
                    elapsed: p.elapsed,
                    ops_done: p.ops_done,
                    expected_ops: p.expected_ops,
                    max_execution_time: p.max_execution_time,
                });
                // Print when a status period has passed since the last line.
                if p.elapsed.saturating_sub(w.since) + Duration::from_millis(1) < *every {
                    return;
                }
                if let Some(text) = w.line(*mi, line.as_ref()) {
                    let _ = writeln!(std::io::stderr(), "{text}");
                }
            }
        }
    }
}
