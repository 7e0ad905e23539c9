//! One client's share of a suite stage, recorded into the results store as
//! it runs: begun before the first operation, each time-series interval
//! written as it closes (from a writer thread, so the store never holds up
//! the run's clock), the totals at the end, or the run marked failed.
//!
//! The same code runs in the suite's own process (a stage with one client)
//! and in the hidden `sojourn suite-client` process the suite starts once
//! per client when `num_vms` > 1. That process reads its [`ShareSpec`] as
//! one JSON line on stdin (not the command line, where a database password
//! would show in `ps`), opens every connection, prints `ready`, waits for
//! `go MICROS` (the common start instant, in microseconds since the epoch),
//! runs, and prints `done RUN_ID`. Its stdin closing (the suite died) stops
//! the run, which is then kept as interrupted.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{mpsc, Arc};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use sojourn_backends::{AnyBackend, Visitor};
use sojourn_core::backend::Backend;
use sojourn_core::executor::{
    self, BackendConnector, Interval, Observer, Pool, Progress, RunOutcome, StopHandle,
};
use sojourn_core::output::Warning;
use sojourn_core::plan::{MeasurementInterval, Plan};
use sojourn_core::properties::Properties;
use sojourn_core::workload::{Phase, PhaseSteps, Worker};
use sojourn_store::{RunId, RunMeta, RunStatus, Store};

use super::pkb::Recipe;
use crate::commands::phase::{
    attach_server, phase_steps, sample_server, setup_runtime, watch_ctrl_c, BACKEND_PREFIXES,
};
use crate::progress::{keyvalue_line, Display, StatusLine};
use crate::redact;

/// Everything one client needs to run its share of a stage.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ShareSpec {
    /// `load` or `run`.
    pub phase: String,
    pub recipe: Recipe,
    /// The database URL (may hold a password; never printed unredacted).
    pub db_url: String,
    /// Where `sqlite` without a path points.
    pub default_sqlite: PathBuf,
    /// The results store.
    pub results: String,
    pub labels: BTreeMap<String, String>,
    /// Shared by the clients of one stage, so their runs merge.
    pub run_uri: String,
    pub client_index: u32,
    pub client_count: u32,
    /// The suite's command line, redacted.
    pub command_line: String,
}

impl ShareSpec {
    pub fn phase(&self) -> Result<Phase> {
        match self.phase.as_str() {
            "load" => Ok(Phase::Load),
            "run" => Ok(Phase::Run),
            other => bail!("unknown phase {other:?} in a suite client's spec; accepted: load, run"),
        }
    }
}

/// What one client measured.
pub struct Share {
    pub run_id: RunId,
    pub outcome: RunOutcome,
    pub warnings: Vec<Warning>,
}

/// How the run is shown while it goes.
#[derive(Copy, Clone, Debug)]
pub struct Show {
    /// YCSB status lines on stderr.
    pub status: bool,
    /// A progress bar on a terminal.
    pub progress: bool,
}

/// Called once every connection is open: returns the instant the run
/// starts at (`None`: at once). Clients of one stage wait here for each
/// other.
pub type Gate<'a> = dyn FnMut() -> Result<Option<SystemTime>> + 'a;

/// Open the backend a spec names, with its properties (backends read their
/// settings, `redis.mode` and the like, from them).
pub fn open_backend(
    url: &str,
    props: &Properties,
    default_sqlite: &std::path::Path,
) -> Result<AnyBackend> {
    sojourn_backends::open(url, props, default_sqlite)
        .with_context(|| format!("opening the database {}", sojourn_backends::redact_url(url)))
}

/// Run one client's share against `backend`, recording it in `store`.
pub fn run_share(
    spec: &ShareSpec,
    backend: &AnyBackend,
    store: &Store,
    gate: &mut Gate<'_>,
    stop: &StopHandle,
    show: Show,
) -> Result<Share> {
    let props = spec.recipe.properties()?;
    let plan = Plan::from_properties(&props, spec.phase()?, BACKEND_PREFIXES)?;
    backend.visit(RunShare {
        spec,
        props: &props,
        plan,
        store,
        gate,
        stop,
        show,
    })
}

struct RunShare<'a, 'g> {
    spec: &'a ShareSpec,
    props: &'a Properties,
    plan: Plan,
    store: &'a Store,
    gate: &'a mut Gate<'g>,
    stop: &'a StopHandle,
    show: Show,
}

impl Visitor for RunShare<'_, '_> {
    type Output = Result<Share>;

    fn visit<B: Backend>(self, backend: &B) -> Result<Share> {
        let RunShare {
            spec,
            props,
            plan,
            store,
            gate,
            stop,
            show,
        } = self;
        let connector = BackendConnector {
            backend,
            schema: Arc::new(plan.schema()),
        };
        let describe = backend.describe();
        let setup = setup_runtime()?;
        // Before the gate: the key-value workload's search for the keys
        // already written is setup, not part of the stage's run.
        let phase = phase_steps(&setup, &plan, &connector, &describe)?;
        let sample = || sample_server(backend, &connector.schema, &setup);
        let expected = phase.expected_operations();
        let PhaseSteps {
            steps,
            groups,
            keyvalue,
        } = phase;
        let line = keyvalue.map(keyvalue_line);
        let line = line.as_ref().map(|l| l as &StatusLine<'_>);
        let result = executor::with_pool(
            &connector,
            steps.len(),
            plan.run.runtime_threads,
            |pool: &mut Pool<Worker>| -> Result<Share> {
                let start_at = gate()?;
                let mut meta = run_meta(&plan, spec, props, &describe);
                if let Some(t) = start_at {
                    meta.started_at = whole_micros(t);
                }
                let id = store.begin_run(&meta)?;
                // Before waiting for the common start: no client's work
                // is missed, and the sample's own time does not delay it.
                let server_start = sample();
                if let Some(t) = start_at {
                    // The common start instant of the stage's clients.
                    if let Ok(wait) = t.duration_since(SystemTime::now()) {
                        std::thread::sleep(wait);
                    }
                }
                let display = Display::new(
                    show.status,
                    !show.progress,
                    plan.status_interval,
                    plan.measurement_interval,
                    expected,
                    plan.phase.name(),
                )
                .with_line(line);
                let outcome = record_while_running(store, &id, |observer| {
                    pool.run_groups(
                        steps,
                        &groups,
                        &plan.run,
                        stop,
                        &Observe {
                            display: &display,
                            intervals: observer,
                        },
                    )
                });
                display.finish();
                let server_end = sample();
                let mut outcome = match outcome {
                    Ok(o) => o,
                    Err(e) => {
                        let msg = sojourn_backends::redact_url(&e.to_string());
                        let _ = store.fail_run(&id, &msg);
                        return Err(e.into());
                    }
                };
                let mut warnings =
                    Warning::check(&outcome, plan.run.warmup.as_secs_f64(), &plan.percentiles);
                warnings.extend(attach_server(&mut outcome, server_start, server_end));
                let status = if outcome.interrupted() {
                    RunStatus::Interrupted
                } else {
                    RunStatus::Completed
                };
                let texts: Vec<String> = warnings.iter().map(|w| w.to_string()).collect();
                store.finish_run(&id, &outcome, status, &texts)?;
                Ok(Share {
                    run_id: id,
                    outcome,
                    warnings,
                })
            },
        );
        result.with_context(|| format!("connecting to {describe}"))?
    }
}

/// Run `f` with a sender whose intervals a writer thread stores as they
/// arrive; returns once every interval is written.
fn record_while_running<T>(
    store: &Store,
    id: &RunId,
    f: impl FnOnce(Option<mpsc::Sender<Interval>>) -> T,
) -> T {
    std::thread::scope(|scope| {
        let (tx, rx) = mpsc::channel::<Interval>();
        scope.spawn(move || {
            let mut warned = false;
            for iv in rx {
                if let Err(e) = store.write_interval(id, &iv) {
                    if !std::mem::replace(&mut warned, true) {
                        eprintln!(
                            "warning: {e}; the run goes on, but its stored time series will have gaps"
                        );
                    }
                }
            }
        });
        f(Some(tx))
    })
}

/// The display, plus each closed interval handed to the store's writer.
struct Observe<'a> {
    display: &'a Display<'a>,
    intervals: Option<mpsc::Sender<Interval>>,
}

impl Observer for Observe<'_> {
    fn interval(&self, p: &Progress<'_>) {
        self.display.interval(p);
    }

    fn interval_closed(&self, interval: &Interval) {
        if let Some(tx) = &self.intervals {
            // The writer ends only after the run has returned.
            let _ = tx.send(interval.clone());
        }
    }
}

fn whole_micros(t: SystemTime) -> SystemTime {
    let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    UNIX_EPOCH + Duration::from_micros(d.as_micros() as u64)
}

/// What the store keeps about a client's run before it starts. Secrets
/// are removed here: property values by their names, passwords from URLs.
fn run_meta(plan: &Plan, spec: &ShareSpec, props: &Properties, describe: &str) -> RunMeta {
    let mut m = RunMeta::new(plan.phase.name());
    m.run_uri = spec.run_uri.clone();
    m.workloads = spec.recipe.files.iter().map(|f| f.name.clone()).collect();
    m.properties = props
        .iter()
        .map(|(k, e)| (k.to_string(), redact::property_value(k, &e.value)))
        .collect();
    m.backend = sojourn_backends::redact_url(describe);
    m.threads = plan.run.threads as u64;
    m.target = plan.run.target;
    m.labels = spec.labels.clone();
    m.client_index = spec.client_index;
    m.client_count = spec.client_count;
    m.command_line = spec.command_line.clone();
    m.measurement_interval = match plan.measurement_interval {
        MeasurementInterval::Op => "op",
        MeasurementInterval::Intended => "intended",
        MeasurementInterval::Both => "both",
    }
    .to_string();
    m.percentiles = plan.percentiles.clone();
    m.warmup = plan.run.warmup;
    m.seed = plan.run.seed;
    m
}

/// `sojourn suite-client`: one client process of a multi-client stage.
pub fn main() -> Result<ExitCode> {
    // Stdin's reads share one buffer, so each line is read whole wherever
    // it is read from; after `go`, a thread only watches for its end.
    let mut first = String::new();
    if std::io::stdin().read_line(&mut first)? == 0 {
        bail!("suite-client reads its spec as one JSON line on stdin; it is started by `sojourn suite`");
    }
    let spec: ShareSpec =
        serde_json::from_str(&first).context("reading the suite client's spec from stdin")?;
    let props = spec.recipe.properties()?;
    let backend = open_backend(&spec.db_url, &props, &spec.default_sqlite)?;
    let store = Store::open(&spec.results).context("opening the results store")?;
    let stop = StopHandle::new();
    watch_ctrl_c(stop.clone());
    let mut gate = || -> Result<Option<SystemTime>> {
        let mut out = std::io::stdout();
        writeln!(out, "ready")?;
        out.flush()?;
        let mut line = String::new();
        if std::io::stdin().read_line(&mut line)? == 0 {
            bail!("the suite went away before the stage started");
        }
        let micros: u64 = line
            .strip_prefix("go ")
            .and_then(|m| m.trim().parse().ok())
            .with_context(|| format!("expected `go MICROS` from the suite, got {line:?}"))?;
        let watch = stop.clone();
        std::thread::spawn(move || {
            // Nothing more is sent; the end of stdin means the suite died.
            let mut l = String::new();
            while matches!(std::io::stdin().read_line(&mut l), Ok(n) if n > 0) {
                l.clear();
            }
            watch.stop();
        });
        Ok(Some(UNIX_EPOCH + Duration::from_micros(micros)))
    };
    let share = run_share(
        &spec,
        &backend,
        &store,
        &mut gate,
        &stop,
        Show {
            status: false,
            progress: false,
        },
    )?;
    // Warnings are stored with the run; the suite prints them once, with
    // the merged summary.
    writeln!(std::io::stdout(), "done {}", share.run_id)?;
    Ok(if share.outcome.interrupted() {
        ExitCode::from(130)
    } else {
        ExitCode::SUCCESS
    })
}
