//! What the user sees while a run goes on: YCSB status lines on stderr with
//! `-s` (or the workload's own line, as the key-value workload prints
//! yb-sample-apps'), otherwise a live progress bar when stderr is a
//! terminal, otherwise nothing. Called once per time-series interval, off
//! the hot path.

use std::io::{IsTerminal, Write};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use sojourn_core::executor::{Observer, Progress};
use sojourn_core::output::ycsb::status_line;
use sojourn_core::plan::MeasurementInterval;
use sojourn_core::recorder::Stats;
use sojourn_core::workload::Narrator;
use sojourn_session::{PhaseView, Show, Watch};

/// How the terminal shows phases: status lines (`-s`), a progress bar
/// unless `--no-progress`, and the session's notes on stderr.
pub struct Terminal {
    pub status: bool,
    pub progress: bool,
}

impl Show for Terminal {
    fn watch<'v>(&'v self, phase: &PhaseView) -> Box<dyn Watch + 'v> {
        Box::new(Display::new(self.status, !self.progress, phase))
    }
}

pub enum Display {
    Status {
        every: Duration,
        mi: MeasurementInterval,
        window: Mutex<(Stats, Duration)>,
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
                window: Mutex::new((Stats::default(), Duration::ZERO)),
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

impl Watch for Display {
    fn finish(&self) {
        if let Display::Bar(b) = self {
            b.finish_and_clear();
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
                w.0.add(p.interval);
                // Print when a status period has passed since the last line.
                let period_start = w.1;
                if p.elapsed.saturating_sub(period_start) + Duration::from_millis(1) < *every {
                    return;
                }
                let length = p.elapsed.saturating_sub(period_start);
                let period = Progress {
                    elapsed: p.elapsed,
                    interval_length: length,
                    interval: &w.0,
                    ops_done: p.ops_done,
                    expected_ops: p.expected_ops,
                    max_execution_time: p.max_execution_time,
                };
                let line = line
                    .as_ref()
                    .and_then(|n| n.status_line(&period))
                    .unwrap_or_else(|| status_line(&period, *mi, SystemTime::now()));
                let _ = writeln!(std::io::stderr(), "{line}");
                w.0.reset();
                w.1 = p.elapsed;
            }
        }
    }
}
