//! One client's share of a suite stage: one phase, run and recorded by the
//! session as every phase is, into the store the suite merges from.
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
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use sojourn_backends::AnyBackend;
use sojourn_core::executor::{RunOutcome, StopHandle};
use sojourn_core::output::Warning;
use sojourn_core::plan::Plan;
use sojourn_core::workload::Phase;
use sojourn_session::{
    open_backend, watch_ctrl_c, PhaseSpec, RunStore, RunTags, Session, Show, Silent,
};
use sojourn_store::{RunId, RunRecord, Store};

use super::pkb::Recipe;

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
    /// Shared by a benchmark's stages, as PKB's run URI is; with the
    /// stage index, by the clients of one stage, so their runs merge.
    pub run_uri: String,
    /// The stage's place in its benchmark: 0 for the load, runs from 1.
    #[serde(default)]
    pub stage_index: u32,
    pub client_index: u32,
    pub client_count: u32,
    /// The suite's command line, redacted.
    pub command_line: String,
    /// Where a run the store cannot take at its end is spooled (the
    /// client still fails: the suite needs it in the store).
    #[serde(default)]
    pub spool_dirs: Vec<PathBuf>,
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
    /// As every format reads it.
    pub record: RunRecord,
    pub outcome: RunOutcome,
    pub warnings: Vec<Warning>,
}

/// Called once every connection is open: returns the instant the run
/// starts at (`None`: at once). Clients of one stage wait here for each
/// other.
pub type Gate<'a> = dyn FnMut() -> Result<Option<SystemTime>> + 'a;

/// Run one client's share, recorded in `records` (whose store it must
/// reach: the suite merges its clients' runs from there), against
/// `backend`, or the database the spec names when `None`.
pub fn run_share(
    spec: &ShareSpec,
    backend: Option<Arc<AnyBackend>>,
    records: &RunStore,
    gate: &mut Gate<'_>,
    stop: &StopHandle,
    show: &dyn Show,
) -> Result<Share> {
    let props = spec.recipe.properties()?;
    let plan = Plan::from_properties(&props, spec.phase()?, sojourn_backends::property_prefixes())?;
    let backend = match backend {
        Some(b) => b,
        None => Arc::new(open_backend(
            &spec.db_url,
            &props,
            &spec.default_sqlite,
            plan.run.workers(),
        )?),
    };
    let tags = RunTags {
        labels: spec.labels.clone(),
        run_uri: spec.run_uri.clone(),
        stage_index: spec.stage_index,
        client_index: spec.client_index,
        client_count: spec.client_count,
        command_line: spec.command_line.clone(),
        workloads: spec.recipe.files.iter().map(|f| f.name.clone()).collect(),
    };
    let session = Session::new(Some(records), tags, &props, stop.clone(), show).store_required();
    let db = session.database(backend)?;
    let describe = db.describe().to_string();
    db.connect(&plan, |conns| {
        // The steps are built before the gate: the key-value workload's
        // search for the keys already written is setup, not the stage's run.
        let spec = PhaseSpec {
            gate: Some(gate),
            ..PhaseSpec::default()
        };
        let measured = conns.run(&plan, spec)?;
        let record = measured.record();
        let done = measured.finish(&BTreeMap::new())?;
        Ok(Share {
            run_id: done.run_id.context("the client's run was not recorded")?,
            record,
            outcome: done.outcome,
            warnings: done.warnings,
        })
    })
    .with_context(|| format!("connecting to {describe}"))
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
    let store = Store::open(&spec.results).context("opening the results store")?;
    let records = RunStore::new(store, spec.spool_dirs.clone());
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
    let share = run_share(&spec, None, &records, &mut gate, &stop, &Silent)?;
    // Warnings are stored with the run; the suite prints them once, with
    // the merged summary.
    writeln!(std::io::stdout(), "done {}", share.run_id)?;
    Ok(if share.outcome.interrupted() {
        ExitCode::from(130)
    } else {
        ExitCode::SUCCESS
    })
}
