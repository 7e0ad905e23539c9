//! The live dashboard: what a phase does, drawn on the terminal stderr is
//! attached to while it runs (`ratatui` over `crossterm`), so
//! `sojourn run … > result.txt` still shows it and stdout keeps only the
//! summary. Offered, achieved and target throughput over time; one
//! operation's service and response percentiles over time (←/→ pick
//! which); per operation the counts and p50/p99/p99.9 so far; errors by
//! status, scheduling lag, client CPU, and time or operations left.
//!
//! It is drawn in the terminal's last rows, below what the terminal
//! already shows, rather than on the alternate screen: when the phase
//! ends its last frame, drawn from the phase's totals (the figures the
//! summary prints), stays in the scrollback above the summary. A line
//! said while it runs (the store's warnings) shows in the frame and is
//! printed under it when the phase ends. Phases one after another (a
//! capacity search's steps, repetitions) add a point each to a
//! throughput-latency curve.
//!
//! Raw mode turns Ctrl+C into a key: the first stops the run as the
//! signal would (partial results kept, stored as interrupted), the second
//! restores the terminal and quits; `q` and Esc stop too. The terminal is
//! restored when the phase ends, on error, on panic and before the second
//! Ctrl+C or signal quits (`sojourn_session::before_quit`).

mod draw;

use std::collections::BTreeMap;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Once};
use std::time::Duration;

use hdrhistogram::Histogram;
use ratatui::backend::CrosstermBackend;
use ratatui::crossterm::event::{self, Event, KeyCode, KeyEventKind, KeyModifiers};
use ratatui::crossterm::{cursor, execute, terminal};
use ratatui::layout::{Position, Rect};
use ratatui::{Terminal, TerminalOptions, Viewport};
use sojourn_core::backend::Status;
use sojourn_core::executor::{Interval, Observer, Progress, RunOutcome, StopHandle};
use sojourn_core::histograms::Stats;
use sojourn_core::op::OpKind;
use sojourn_core::rate::{total_rate_at, Target};
use sojourn_session::{PhaseView, Watch};

/// Rows the dashboard takes (fewer on a smaller terminal).
const HEIGHT: u16 = 26;
/// Points kept per series: ten minutes of one-second intervals; a longer
/// run shows its most recent ten minutes.
const KEEP: usize = 600;
/// Labels that tell a command's phases apart, shown before the others.
const FIRST_LABELS: [&str; 4] = ["capacity_step", "repetition", "suite_iteration", "ab_side"];
/// How often the clock and the keys are looked at between intervals.
const TICK: Duration = Duration::from_millis(100);

/// The dashboard of a command: one frame per phase.
pub struct Dashboard {
    stop: StopHandle,
    /// Leave each phase's last frame on the screen (not for a capacity
    /// search's probes and steps, which print a line each).
    keep_final: bool,
    /// What each earlier phase achieved, by its kind and workload:
    /// throughput and response p99 (a load is no point of a run's curve).
    earlier: Mutex<Vec<(String, (f64, f64))>>,
    /// The phase being drawn, to which notes go.
    current: Mutex<Option<Arc<Shared>>>,
}

impl Dashboard {
    pub fn new(stop: StopHandle, keep_final: bool) -> Dashboard {
        Dashboard {
            stop,
            keep_final,
            earlier: Mutex::new(Vec::new()),
            current: Mutex::new(None),
        }
    }

    /// The live display of one phase; `None` if the terminal cannot be
    /// taken (the caller falls back to the progress bar).
    pub fn watch(&self, view: &PhaseView) -> Option<PhaseDashboard<'_>> {
        let kind = curve_kind(view);
        let earlier = lock(&self.earlier)
            .iter()
            .filter(|(k, _)| *k == kind)
            .map(|(_, p)| *p)
            .collect();
        let shared = Arc::new(Shared {
            state: Mutex::new(State::new(view, earlier)),
            notes: Mutex::new((Vec::new(), false)),
            done: AtomicBool::new(false),
        });
        let ui = Ui::open(self.stop.clone())?;
        let thread = {
            let shared = shared.clone();
            let keep_final = self.keep_final;
            std::thread::Builder::new()
                .name("sojourn-dashboard".into())
                .spawn(move || ui.run(&shared, keep_final))
                .ok()?
        };
        *lock(&self.current) = Some(shared.clone());
        Some(PhaseDashboard {
            owner: self,
            shared,
            thread: Mutex::new(Some(thread)),
        })
    }

    /// A line for the person running it: shown in the frame while one is
    /// drawn and printed under it when the phase ends, else on stderr.
    pub fn note(&self, line: &str) {
        if let Some(s) = &*lock(&self.current) {
            // Under the notes' lock: a line is either held, and printed by
            // `close`, or printed here once `close` has printed the others.
            let mut notes = lock(&s.notes);
            if !notes.1 {
                notes.0.push(line.to_string());
                return;
            }
        }
        eprintln!("{line}");
    }
}

/// Which phases share a curve: the same kind of phase of one workload.
fn curve_kind(view: &PhaseView) -> String {
    format!("{} {}", view.phase.name(), view.workload)
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// What the run's thread and the drawing thread share.
struct Shared {
    state: Mutex<State>,
    /// Lines said while the frame is drawn, and whether they have been
    /// printed (the phase has ended).
    notes: Mutex<(Vec<String>, bool)>,
    done: AtomicBool,
}

/// One phase's dashboard.
pub struct PhaseDashboard<'d> {
    owner: &'d Dashboard,
    shared: Arc<Shared>,
    thread: Mutex<Option<std::thread::JoinHandle<()>>>,
}

impl PhaseDashboard<'_> {
    fn close(&self) {
        self.shared.done.store(true, Ordering::Release);
        if let Some(t) = lock(&self.thread).take() {
            let _ = t.join();
        }
        // Under the frame, once it is no longer drawn.
        let mut notes = lock(&self.shared.notes);
        for line in notes.0.drain(..) {
            eprintln!("{line}");
        }
        notes.1 = true;
    }
}

impl Observer for PhaseDashboard<'_> {
    fn interval(&self, p: &Progress<'_>) {
        lock(&self.shared.state).interval(p);
    }

    fn interval_closed(&self, interval: &Interval) {
        lock(&self.shared.state).interval_closed(interval);
    }
}

impl Watch for PhaseDashboard<'_> {
    fn finish(&self, outcome: Option<&RunOutcome>) {
        if let Some(o) = outcome {
            let mut state = lock(&self.shared.state);
            state.totals(o);
            if let Some(point) = state.curve_point() {
                lock(&self.owner.earlier).push((state.curve_kind.clone(), point));
            }
        }
        self.close();
    }
}

impl Drop for PhaseDashboard<'_> {
    /// A phase that failed before `finish` still gives the terminal back.
    fn drop(&mut self) {
        self.close();
    }
}

/// A series of (seconds since the start, value) points.
type Series = Vec<(f64, f64)>;

fn push(series: &mut Series, point: (f64, f64)) {
    if series.len() == KEEP {
        series.remove(0);
    }
    series.push(point);
}

/// One operation's figures over time (its totals are in `State::totals`).
struct OpView {
    kind: OpKind,
    /// Per interval, in ms: response p50, p99, p99.9 and service p99.
    response_p50: Series,
    response_p99: Series,
    response_p999: Series,
    service_p99: Series,
}

/// What is drawn.
struct State {
    title: String,
    curve_kind: String,
    /// When the rate profile or trace ends, if the run follows one.
    length: Option<Duration>,
    connections: usize,
    target_text: Option<String>,
    expected_ops: Option<u64>,
    max_execution_time: Option<Duration>,
    targets: Vec<Target>,
    elapsed: Duration,
    /// The longest interval so far: the run's nominal length.
    longest: Duration,
    ops_done: u64,
    achieved: Series,
    offered: Series,
    target: Series,
    ops: Vec<OpView>,
    /// So far, merged exactly (all of the phase; once it ends, the
    /// summary's, warm-up left out).
    totals: Stats,
    selected: usize,
    lag_p99_us: Option<f64>,
    /// Client CPU over the last interval: share of one core, and per op.
    cpu: Option<(f64, f64)>,
    earlier: Vec<(f64, f64)>,
    stopping: bool,
    /// Once the phase has ended: its throughput over the measured period.
    final_throughput: Option<(f64, Duration)>,
}

impl State {
    fn new(view: &PhaseView, earlier: Vec<(f64, f64)>) -> State {
        let mut title = format!(
            "{} · {} · {}",
            view.phase.name(),
            view.workload,
            view.database
        );
        // Which step, repetition or iteration first: the rest may be cut.
        let mut labels: Vec<_> = view.labels.iter().collect();
        labels.sort_by_key(|(k, _)| !FIRST_LABELS.contains(&k.as_str()));
        for (k, v) in labels {
            title.push_str(&format!(" · {k}={v}"));
        }
        let targets = view.targets.clone();
        let target_text = match targets.as_slice() {
            [] => None,
            [one] => Some(one.describe()),
            many => Some(format!(
                "{:.0} ops/s on average",
                many.iter().map(|t| t.mean()).sum::<f64>()
            )),
        };
        State {
            title,
            curve_kind: curve_kind(view),
            length: view.targets.iter().filter_map(|t| t.length()).max(),
            connections: view.connections,
            target_text,
            expected_ops: view.expected_ops,
            max_execution_time: None,
            targets,
            elapsed: Duration::ZERO,
            longest: Duration::ZERO,
            ops_done: 0,
            achieved: Vec::new(),
            offered: Vec::new(),
            target: Vec::new(),
            ops: Vec::new(),
            totals: Stats::default(),
            selected: 0,
            lag_p99_us: None,
            cpu: None,
            earlier,
            stopping: false,
            final_throughput: None,
        }
    }

    fn op(&mut self, kind: OpKind) -> &mut OpView {
        let i = match self.ops.iter().position(|o| o.kind == kind) {
            Some(i) => i,
            None => {
                self.ops.push(OpView {
                    kind,
                    response_p50: Vec::new(),
                    response_p99: Vec::new(),
                    response_p999: Vec::new(),
                    service_p99: Vec::new(),
                });
                self.ops.sort_by_key(|o| o.kind.index());
                self.ops.iter().position(|o| o.kind == kind).unwrap_or(0)
            }
        };
        &mut self.ops[i]
    }

    /// Whether an interval this long says something of its own rate: the
    /// run's last one may be a few milliseconds, its few operations no
    /// figure to draw (they are counted all the same).
    fn full(&mut self, length: Duration) -> bool {
        self.longest = self.longest.max(length);
        length * 2 >= self.longest && !length.is_zero()
    }

    fn interval(&mut self, p: &Progress<'_>) {
        self.elapsed = p.elapsed;
        self.ops_done = p.ops_done;
        self.expected_ops = p.expected_ops.or(self.expected_ops);
        self.max_execution_time = p.max_execution_time;
        let t = p.elapsed.as_secs_f64();
        let length = p.interval_length.as_secs_f64();
        let full = self.full(p.interval_length);
        if full {
            push(&mut self.achieved, (t, p.interval.ops_done as f64 / length));
        }
        let middle = p.elapsed.saturating_sub(p.interval_length / 2);
        if let Some(r) = total_rate_at(&self.targets, middle) {
            push(&mut self.target, (t, r));
        }
        self.totals.add(p.interval);
        for (kind, s) in p.interval.kinds() {
            let op = self.op(kind);
            if full && !s.ok.response.is_empty() {
                let ms = |h: &Histogram<u64>, q: f64| h.value_at_quantile(q) as f64 / 1e6;
                push(&mut op.response_p50, (t, ms(&s.ok.response, 0.5)));
                push(&mut op.response_p99, (t, ms(&s.ok.response, 0.99)));
                push(&mut op.response_p999, (t, ms(&s.ok.response, 0.999)));
                push(&mut op.service_p99, (t, ms(&s.ok.service, 0.99)));
            }
        }
    }

    fn interval_closed(&mut self, iv: &Interval) {
        let length = iv.length.as_secs_f64();
        if iv.length * 2 < self.longest || length <= 0.0 {
            return;
        }
        let t = (iv.start + iv.length).as_secs_f64();
        if let Some(n) = iv.offered {
            push(&mut self.offered, (t, n as f64 / length));
        }
        self.lag_p99_us = iv.lag.as_ref().map(|l| l.p99_us);
        let cpu = iv.cpu.user_s + iv.cpu.system_s;
        self.cpu = Some((
            cpu / length,
            if iv.ops_done > 0 {
                cpu * 1e6 / iv.ops_done as f64
            } else {
                0.0
            },
        ));
    }

    /// The phase has ended: its figures become the summary's (warm-up
    /// left out), so the last frame and the summary agree.
    fn totals(&mut self, o: &RunOutcome) {
        self.totals = o.total.clone();
        let secs = o.measured.as_secs_f64();
        let throughput = if secs > 0.0 {
            o.total.ops_done as f64 / secs
        } else {
            0.0
        };
        self.final_throughput = Some((throughput, o.measured));
        self.elapsed = o.elapsed;
        self.ops_done = o.all.ops_done;
    }

    /// This phase as a point of the throughput-latency curve: its
    /// throughput and the highest response p99 of its operations (ms).
    fn curve_point(&self) -> Option<(f64, f64)> {
        let (throughput, _) = self.final_throughput?;
        let p99 = self
            .totals
            .kinds()
            .filter(|(_, o)| !o.ok.response.is_empty())
            .map(|(_, o)| o.ok.response.value_at_quantile(0.99) as f64 / 1e6)
            .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))))?;
        Some((throughput, p99))
    }

    /// The database's words for the commonest failure so far, with its
    /// count, cut to fit the status line.
    fn top_reason(&self) -> Option<(u64, String)> {
        const WIDTH: usize = 70;
        let r = self
            .totals
            .kinds()
            .flat_map(|(_, op)| op.reasons.iter())
            .max_by_key(|r| r.count)?;
        let text = match r.first.char_indices().nth(WIDTH) {
            Some((end, _)) => format!("{}…", &r.first[..end]),
            None => r.first.clone(),
        };
        Some((r.count, text))
    }

    /// Failed operations so far, by status.
    fn errors(&self) -> BTreeMap<&'static str, u64> {
        let mut out = BTreeMap::new();
        for (_, op) in self.totals.kinds() {
            for st in Status::ALL.into_iter().filter(|s| !s.is_ok()) {
                let n = op.count_of(st);
                if n > 0 {
                    *out.entry(st.ycsb_name()).or_insert(0) += n;
                }
            }
        }
        out
    }
}

/// The terminal while a phase is drawn.
struct Ui {
    terminal: Terminal<CrosstermBackend<std::io::Stderr>>,
    stop: StopHandle,
}

/// Give the terminal back: cooked mode, the cursor shown.
fn restore() {
    let _ = terminal::disable_raw_mode();
    let _ = execute!(std::io::stderr(), cursor::Show);
}

impl Ui {
    fn open(stop: StopHandle) -> Option<Ui> {
        static PANIC_HOOK: Once = Once::new();
        PANIC_HOOK.call_once(|| {
            let previous = std::panic::take_hook();
            std::panic::set_hook(Box::new(move |info| {
                restore();
                previous(info);
            }));
        });
        // The frame takes the terminal's last rows, made free by scrolling
        // what is there up: ratatui's inline viewport would ask the
        // terminal where the cursor is, over stdout, which may be a file.
        let (width, rows) = terminal::size().ok()?;
        let height = HEIGHT.min(rows.saturating_sub(1));
        if height < 12 || width < 60 {
            return None;
        }
        eprint!("{}", "\n".repeat(height as usize));
        terminal::enable_raw_mode().ok()?;
        let options = TerminalOptions {
            viewport: Viewport::Fixed(Rect::new(0, rows - height, width, height)),
        };
        match Terminal::with_options(CrosstermBackend::new(std::io::stderr()), options) {
            Ok(terminal) => {
                sojourn_session::before_quit(Some(Box::new(|| {
                    restore();
                    eprintln!();
                })));
                Some(Ui { terminal, stop })
            }
            Err(_) => {
                restore();
                None
            }
        }
    }

    /// Draw until the phase is done, then its last frame, and give the
    /// terminal back.
    fn run(mut self, shared: &Shared, keep_final: bool) {
        let mut ctrl_c = 0;
        loop {
            let done = shared.done.load(Ordering::Acquire);
            let drawn = {
                let state = lock(&shared.state);
                let note = lock(&shared.notes).0.last().cloned();
                self.terminal
                    .draw(|f| draw::frame(f, &state, note.as_deref()))
            };
            if drawn.is_err() || done {
                break;
            }
            // Keys until the next tick.
            if event::poll(TICK).unwrap_or(false) {
                match event::read() {
                    Ok(Event::Key(k)) if k.kind != KeyEventKind::Release => {
                        let ctrl = k.modifiers.contains(KeyModifiers::CONTROL);
                        match k.code {
                            KeyCode::Char('c') if ctrl => {
                                ctrl_c += 1;
                                if ctrl_c > 1 {
                                    sojourn_session::quit_now();
                                }
                                self.stop(shared);
                            }
                            KeyCode::Char('q') | KeyCode::Esc => self.stop(shared),
                            KeyCode::Right | KeyCode::Tab | KeyCode::Down => {
                                let mut s = lock(&shared.state);
                                s.selected = (s.selected + 1) % s.ops.len().max(1);
                            }
                            KeyCode::Left | KeyCode::BackTab | KeyCode::Up => {
                                let mut s = lock(&shared.state);
                                let n = s.ops.len().max(1);
                                s.selected = (s.selected + n - 1) % n;
                            }
                            _ => {}
                        }
                    }
                    Ok(Event::Resize(width, rows)) => {
                        let height = HEIGHT.min(rows.saturating_sub(1)).max(1);
                        let area = Rect::new(0, rows.saturating_sub(height), width, height);
                        let _ = self.terminal.resize(area);
                    }
                    _ => {}
                }
            }
        }
        self.close(keep_final);
    }

    fn stop(&self, shared: &Shared) {
        lock(&shared.state).stopping = true;
        self.stop.stop();
    }

    /// Leave the last frame (or clear it), put the cursor under it, and
    /// give the terminal back.
    fn close(mut self, keep_final: bool) {
        let area = self.terminal.get_frame().area();
        if keep_final {
            let _ = self
                .terminal
                .set_cursor_position(Position::new(0, area.bottom().saturating_sub(1)));
        } else {
            let _ = self.terminal.clear();
            let _ = self
                .terminal
                .set_cursor_position(Position::new(0, area.top()));
        }
        sojourn_session::before_quit(None);
        restore();
        if keep_final {
            let _ = writeln!(std::io::stderr());
        }
    }
}
