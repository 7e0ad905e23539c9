//! One phase on open connections, start to finish: the workload's steps,
//! the run begun in the store, the server's counters sampled around the
//! executor's run, the display and the interval writer watching it, the
//! warnings drawn, and (once the caller has shown it) the totals stored.
//! This is the only place that sequence is written.

use std::collections::BTreeMap;
use std::sync::mpsc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result};
use sojourn_core::backend::{Backend, ServerCounters, ServerStats};
use sojourn_core::executor::{
    BackendConnector, Interval, Observer, Pool, Progress, RunConfig, RunOutcome,
};
use sojourn_core::output::Warning;
use sojourn_core::plan::Plan;
use sojourn_core::redact;
use sojourn_core::workload::Phase;
use sojourn_store::{RunId, RunMeta, RunRecord};

use crate::show::{PhaseView, Watch};
use crate::store_writer::{Kept, Recording};
use crate::Session;

/// What a caller asks of one phase beyond its plan.
pub struct PhaseSpec<'g> {
    /// Keep the phase in the results store (a capacity search's probe is
    /// not kept).
    pub record: bool,
    /// How the phase is driven, when not as the plan says (a capacity
    /// step's target, length and settling time).
    pub run: Option<RunConfig>,
    /// Labels of this phase's run on top of the session's.
    pub labels: BTreeMap<String, String>,
    /// A run URI of its own (each capacity step), not the session's.
    pub run_uri: Option<String>,
    /// The phase's stage in its run URI, not the session's (`bench`'s run
    /// follows its load, stage 0, as stage 1).
    pub stage_index: Option<u32>,
    /// Called once the steps are built and every connection is open:
    /// returns the instant the run starts (`None`: at once). A suite's
    /// client processes wait for each other here.
    pub gate: Option<&'g mut dyn FnMut() -> Result<Option<SystemTime>>>,
    /// A phase on the way to another (`bench`'s load): its warnings leave
    /// out the warm-up and the percentiles, which the summary it gets does
    /// not show.
    pub brief: bool,
}

impl Default for PhaseSpec<'_> {
    fn default() -> Self {
        PhaseSpec {
            record: true,
            run: None,
            labels: BTreeMap::new(),
            run_uri: None,
            stage_index: None,
            gate: None,
            brief: false,
        }
    }
}

/// What a phase measured, its warnings, and its run in the store waiting
/// for its totals.
#[must_use = "a measured phase is stored by `finish`"]
pub struct Measured<'s> {
    pub outcome: RunOutcome,
    pub warnings: Vec<Warning>,
    /// What the store keeps about the run (kept or not).
    pub meta: RunMeta,
    recording: Recording<'s>,
}

impl Measured<'_> {
    /// The phase as every export format reads it: what the store will
    /// give back once it is stored.
    pub fn record(&self) -> RunRecord {
        let warnings = self
            .warnings
            .iter()
            .map(|w| redact::text(&w.to_string()))
            .collect();
        RunRecord::of_outcome(self.meta.clone(), &self.outcome, warnings)
    }

    /// The stored run's id, if the phase is recorded.
    pub fn run_id(&self) -> Option<&RunId> {
        self.recording.id()
    }

    /// Store the totals, the final status and the warnings, with `labels`
    /// added to the run (what is known only now, such as a capacity step's
    /// verdict). Show the result first: whatever goes wrong here, it has
    /// been seen. Returns where the run was kept; an error if it was to be
    /// recorded and could be kept nowhere.
    pub fn finish(self, labels: &BTreeMap<String, String>) -> Result<Finished> {
        let kept = self
            .recording
            .finish(&self.outcome, &self.warnings, labels)?;
        let (run_id, store, spooled) = match kept {
            Kept::Nothing => (None, None, None),
            Kept::Store(id) => (
                Some(id),
                self.recording.location().map(str::to_string),
                None,
            ),
            Kept::Spool(id, path) => (Some(id), None, Some(path)),
        };
        Ok(Finished {
            outcome: self.outcome,
            warnings: self.warnings,
            run_id,
            store,
            spooled,
        })
    }
}

/// A phase measured and stored.
pub struct Finished {
    pub outcome: RunOutcome,
    pub warnings: Vec<Warning>,
    /// `None` when it is not recorded.
    pub run_id: Option<RunId>,
    /// Where it is stored (password-free), when it is in the store.
    pub store: Option<String>,
    /// The spool file it is kept in, when the store could not take it.
    pub spooled: Option<std::path::PathBuf>,
}

/// A backend with its connections open, for one phase after another.
pub(crate) struct Bound<'p, B: Backend> {
    pub backend: &'p B,
    pub connector: &'p BackendConnector<'p, B>,
    pub pool: &'p mut Pool<B::Conn>,
    pub rt: &'p tokio::runtime::Runtime,
    pub describe: &'p str,
}

/// The phase pipeline.
pub(crate) fn run<'s, B: Backend>(
    b: &mut Bound<'_, B>,
    session: &Session<'s>,
    plan: &Plan,
    mut spec: PhaseSpec<'_>,
) -> Result<Measured<'s>> {
    let show = session.show;
    let cfg = spec.run.take().unwrap_or_else(|| plan.run.clone());
    let ready =
        b.rt.block_on(
            plan.workload
                .ready(plan.phase, &cfg, b.backend, b.connector),
        )
        .with_context(|| format!("{} phase on {}", plan.phase.name(), b.describe))?;
    let narrator = ready.narrator();
    if let Some(line) = narrator.as_ref().and_then(|n| n.before(plan.phase)) {
        show.note(&line);
    }
    let gated = spec.gate.is_some();
    let start_at = match spec.gate.as_mut() {
        Some(gate) => gate()?,
        None => None,
    };
    let mut tags = session.tags.clone();
    tags.labels.extend(std::mem::take(&mut spec.labels));
    if let Some(n) = &narrator {
        tags.labels.extend(n.labels());
    }
    if let Some(uri) = spec.run_uri.take() {
        tags.run_uri = uri;
    }
    if let Some(i) = spec.stage_index {
        tags.stage_index = i;
    }
    let mut meta = tags.meta(plan, &cfg, session.props, b.describe);
    if let Some(t) = start_at {
        meta.started_at = whole_micros(t);
    }
    let recording = match session.records.filter(|_| spec.record) {
        None => Recording::none(show),
        Some(records) => Recording::begin(records, session.store_required, &meta, show)?,
    };
    // Before waiting for a common start: no client's work is missed, and
    // the sample's own time does not delay it.
    let server_start = sample(b);
    if let Some(wait) = start_at.and_then(|t| t.duration_since(SystemTime::now()).ok()) {
        std::thread::sleep(wait);
    }
    // A suite's stages are not YCSB command lines (their summaries are
    // the suite's), so only a phase of its own prints one.
    if !gated {
        show.note(&ycsb_command_line(&meta.command_line, plan.phase));
    }
    for w in &plan.warnings {
        show.note(&format!("warning: {w}"));
    }
    if plan.seed_generated {
        let seed = cfg.seed;
        show.note(&format!(
            "{}: seed {seed} (repeat with --seed {seed})",
            plan.phase.name()
        ));
    }
    let watch = show.watch(&PhaseView {
        phase: plan.phase,
        expected_ops: ready.config().operation_count(),
        status_interval: plan.status_interval,
        measurement_interval: plan.measurement_interval,
        narrator: narrator.clone(),
        workload: meta.workloads.join(","),
        database: b.describe.to_string(),
        connections: cfg.workers(),
        targets: cfg
            .groups
            .iter()
            .map(|g| g.target.clone())
            .collect::<Option<Vec<_>>>()
            .unwrap_or_default(),
        labels: meta.labels.clone(),
    });
    let outcome = recording.writing(|intervals| {
        let observer = Tee {
            watch: &*watch,
            intervals,
        };
        ready.run(b.pool, &session.stop, &observer)
    });
    watch.finish(outcome.as_ref().ok());
    let server_end = sample(b);
    let mut outcome = match outcome {
        Ok(o) => o,
        Err(e) => {
            let e = anyhow::Error::new(e);
            recording.fail(&e);
            return Err(e);
        }
    };
    if let Some(line) = narrator.as_ref().and_then(|n| n.after(plan.phase)) {
        show.note(&line);
    }
    let server_warning = attach_server(&mut outcome, server_start, server_end);
    let shape = plan.workload.data_shape();
    let mut warnings = if spec.brief {
        Warning::check(&outcome, 0.0, &[], shape)
    } else {
        Warning::check(&outcome, cfg.warmup.as_secs_f64(), &plan.percentiles, shape)
    };
    if plan.workload.misses_are_answers() {
        warnings = warnings
            .into_iter()
            .filter_map(Warning::without_misses)
            .collect();
    }
    warnings.extend(server_warning);
    Ok(Measured {
        outcome,
        warnings,
        meta,
        recording,
    })
}

/// The display, plus each closed interval handed to the store's writer.
struct Tee<'a> {
    watch: &'a dyn Watch,
    intervals: Option<mpsc::Sender<Interval>>,
}

impl Observer for Tee<'_> {
    fn interval(&self, p: &Progress<'_>) {
        self.watch.interval(p);
    }

    fn interval_closed(&self, interval: &Interval) {
        self.watch.interval_closed(interval);
        if let Some(tx) = &self.intervals {
            // The writer ends only after the run has returned.
            let _ = tx.send(interval.clone());
        }
    }
}

/// The line YCSB prints first on stderr, from which PerfKitBenchmarker's
/// parser takes the stage (`-load` for a load, `-t` for a run): the
/// arguments sojourn was given (already redacted), after the command name.
fn ycsb_command_line(command_line: &str, phase: Phase) -> String {
    let flag = match phase {
        Phase::Load => "-load",
        Phase::Run => "-t",
    };
    let args: Vec<&str> = command_line
        .split(' ')
        .skip(2)
        .filter(|a| !a.is_empty())
        .collect();
    format!("Command line: {} {flag}", args.join(" ")).replace("  ", " ")
}

/// The store keeps times to the microsecond.
fn whole_micros(t: SystemTime) -> SystemTime {
    let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    UNIX_EPOCH + Duration::from_micros(d.as_micros() as u64)
}

/// The server's counters now, over a connection of the sampler's own (not
/// a worker's, which belong to the measurement). `Ok(None)`: the database
/// does not tell; an error becomes a warning, never a failed phase.
fn sample<B: Backend>(b: &Bound<'_, B>) -> Result<Option<ServerCounters>, String> {
    b.rt.block_on(b.backend.server_counters(&b.connector.schema))
        .map_err(|e| redact::text(&e.to_string()))
}

/// Put the change of the server's counters over the phase into its
/// outcome. The samples bracket the whole phase, warm-up included, so the
/// per-operation figures count every operation of it (`all`). A failed
/// sample costs the server figures and a warning, nothing else.
fn attach_server(
    outcome: &mut RunOutcome,
    start: Result<Option<ServerCounters>, String>,
    end: Result<Option<ServerCounters>, String>,
) -> Option<Warning> {
    match (start, end) {
        (Ok(Some(a)), Ok(Some(b))) => match ServerStats::between(&a, &b, outcome.all.ops_done) {
            Ok(stats) => {
                outcome.server = Some(stats);
                None
            }
            Err(message) => Some(Warning::ServerCounters { message }),
        },
        (Err(message), _) | (_, Err(message)) => Some(Warning::ServerCounters { message }),
        _ => None,
    }
}
