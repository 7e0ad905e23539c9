//! `sojourn load`, `run` and `bench`: resolve the properties, open the
//! backend, build and validate every plan before anything runs, drive the
//! executor, then print the summary and warnings and write the JSON report.
//!
//! Every phase is recorded in the results store: begun before the executor
//! starts, its time series written as it goes (by a writer thread, so a
//! slow store never holds up the run's own clock), and its totals written
//! after the summary is printed. A store that fails mid-run costs a warning,
//! never the measurement or the exit code.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{mpsc, Arc};

use anyhow::{bail, Context, Result};
use sojourn_backends::Visitor;
use sojourn_core::backend::{Backend, Connection, Schema, ServerCounters, ServerStats};
use sojourn_core::executor::{
    self, BackendConnector, Connector, Interval, Observer, Pool, Progress, RunOutcome, StopHandle,
};
use sojourn_core::output::liops::LiopsFigures;
use sojourn_core::output::{ycsb, Report, Warning};
use sojourn_core::plan::{MeasurementInterval, Plan};
use sojourn_core::properties::{Origin, Properties};
use sojourn_core::workload::{LiopsConfig, Phase, PhaseSteps, Worker};

use sojourn_store::{RunId, RunMeta, RunStatus, Store};

use crate::cli::{ArrivalArg, Format, PhaseArgs};
use crate::progress::{keyvalue_line, Display, StatusLine};
use crate::{redact, workloads};

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Mode {
    Load,
    Run,
    Bench,
}

/// Property prefixes that belong to backends (YCSB binding settings), so
/// they are not reported as unknown.
pub(super) const BACKEND_PREFIXES: &[&str] = &[
    "db.",
    "jdbc.",
    "redis.",
    "memcached.",
    "rocksdb.",
    "bigtable.",
    "postgres.",
    "mysql.",
    "sqlite.",
    "memory.",
    "google.",
    "hbase.",
    // YCSB's Bigtable binding names the column family with a bare key.
    "columnfamily",
];

/// The command line, validated.
pub(super) struct Options {
    pub(super) props: Properties,
    pub(super) workload_names: Vec<String>,
    pub(super) db_url: String,
    pub(super) default_sqlite: PathBuf,
    format: Format,
    pub(super) json: Option<PathBuf>,
    status: bool,
    no_progress: bool,
    record: Record,
}

/// Where and how the phases are recorded.
struct Record {
    /// `None`: not recorded (--no-store).
    location: Option<String>,
    /// The location was given (--results), so failing to open it is an
    /// error rather than a warning.
    explicit: bool,
    labels: BTreeMap<String, String>,
    run_uri: String,
    client_index: u32,
    client_count: u32,
    command_line: String,
}

/// Where sojourn keeps its embedded database and results store.
pub(crate) fn data_dir(arg: Option<PathBuf>) -> PathBuf {
    arg.or_else(|| std::env::var_os("SOJOURN_DATA_DIR").map(PathBuf::from))
        .or_else(|| dirs::data_dir().map(|d| d.join("sojourn")))
        .unwrap_or_else(|| PathBuf::from(".sojourn"))
}

pub(super) fn options(a: PhaseArgs) -> Result<Options> {
    let mut props = Properties::new();
    let mut workload_names = Vec::new();
    for f in &a.files {
        let name = f
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| f.display().to_string());
        match workloads::shipped(f) {
            Some(text) => props.load_str(text, &Path::new("workloads").join(&name))?,
            None => props.load_file(f)?,
        }
        workload_names.push(name);
    }
    if let Some(w) = &a.workload {
        props.set("workload", w, Origin::Flag("--workload"));
    }
    for p in &a.props {
        props.set_arg(p)?;
    }
    if workload_names.is_empty() {
        // Stored runs and reports group by workload name: a workload
        // chosen by name alone (`--workload vote`, `-p workload=vote`) is
        // named so.
        workload_names.extend(sojourn_core::workload::kind_name(&props).map(String::from));
    }
    let flags = [
        ("threadcount", a.threads.as_deref(), "--threads"),
        ("target", a.target.as_deref(), "--target"),
        ("seed", a.seed.as_deref(), "--seed"),
        ("warmup", a.warmup.as_deref(), "--warmup"),
    ];
    for (key, value, flag) in flags {
        if let Some(v) = value {
            props.set(key, v, Origin::Flag(flag));
        }
    }
    if let Some(arr) = a.arrival {
        let v = match arr {
            ArrivalArg::Poisson => "poisson",
            ArrivalArg::Uniform => "uniform",
        };
        props.set("arrival", v, Origin::Flag("--arrival"));
    }
    if a.drop {
        props.set("dropdata", "true", Origin::Flag("--drop"));
    }
    let db_url = a.db.or(a.db_name).unwrap_or_else(|| "sqlite".to_string());
    let dir = data_dir(a.data_dir);
    let default_sqlite = dir.join("sojourn.sqlite");
    let mut labels = BTreeMap::new();
    for l in &a.labels {
        let (k, v) = parse_label(l)?;
        labels.insert(k, v);
    }
    if a.client_count == 0 || a.client_index >= a.client_count {
        bail!(
            "--client-index {} --client-count {}: the index must be below the count (0..{})",
            a.client_index,
            a.client_count,
            a.client_count
        );
    }
    let record = Record {
        location: (!a.no_store).then(|| a.results.clone().unwrap_or_else(|| default_store(&dir))),
        explicit: a.results.is_some(),
        labels,
        run_uri: a.run_uri.unwrap_or_else(sojourn_store::new_run_uri),
        client_index: a.client_index,
        client_count: a.client_count,
        command_line: redact::command_line(std::env::args()),
    };
    Ok(Options {
        props,
        workload_names,
        db_url,
        default_sqlite,
        format: a.format,
        json: a.json,
        status: a.status,
        no_progress: a.no_progress,
        record,
    })
}

/// The default results store in a data directory.
pub(crate) fn default_store(data_dir: &Path) -> String {
    data_dir
        .join("results.sqlite")
        .to_string_lossy()
        .into_owned()
}

/// `--label KEY=VALUE`.
pub(crate) fn parse_label(l: &str) -> Result<(String, String)> {
    match l.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_string(), v.to_string())),
        _ => bail!(
            "--label {l:?}: expected KEY=VALUE with a non-empty KEY, e.g. experiment=latency_test"
        ),
    }
}

pub fn main(args: PhaseArgs, mode: Mode) -> Result<ExitCode> {
    let opts = options(args)?;
    // Every plan is validated before the database is touched.
    let load_plan = match mode {
        Mode::Load | Mode::Bench => Some(Plan::from_properties(
            &opts.props,
            Phase::Load,
            BACKEND_PREFIXES,
        )?),
        Mode::Run => None,
    };
    let run_plan = match mode {
        Mode::Run | Mode::Bench => Some(Plan::from_properties(
            &opts.props,
            Phase::Run,
            BACKEND_PREFIXES,
        )?),
        Mode::Load => None,
    };
    let unknown = load_plan
        .as_ref()
        .or(run_plan.as_ref())
        .map(|p| p.unknown.clone())
        .unwrap_or_default();
    for u in unknown {
        eprintln!("warning: {}", Warning::UnknownProperty(u));
    }
    let drop = opts.props.get_bool("dropdata", false)?;
    let backend = sojourn_backends::open(&opts.db_url, &opts.props, &opts.default_sqlite)?;
    let store = open_store(&opts.record)?;

    backend.visit(Drive {
        opts: &opts,
        load_plan,
        run_plan,
        drop,
        store: store.as_ref(),
    })
}

/// The results store, or `None` with --no-store. A store that was named
/// with --results must open; the default one may fail with a warning, so a
/// read-only home directory does not stop a benchmark.
fn open_store(r: &Record) -> Result<Option<Store>> {
    let Some(location) = &r.location else {
        return Ok(None);
    };
    match Store::open(location) {
        Ok(s) => Ok(Some(s)),
        Err(e) if r.explicit => Err(anyhow::Error::new(e).context("opening --results")),
        Err(e) => {
            eprintln!(
                "warning: {e}; this run is not recorded (--results PATH to choose another store)"
            );
            Ok(None)
        }
    }
}

/// Everything `main` resolved, run against the concrete backend type.
struct Drive<'a> {
    opts: &'a Options,
    load_plan: Option<Plan>,
    run_plan: Option<Plan>,
    drop: bool,
    store: Option<&'a Store>,
}

impl Visitor for Drive<'_> {
    type Output = Result<ExitCode>;

    fn visit<B: Backend>(self, backend: &B) -> Result<ExitCode> {
        let setup = setup_runtime()?;
        let stop = StopHandle::new();
        watch_ctrl_c(stop.clone());
        drive(
            backend,
            &setup,
            self.opts,
            self.load_plan,
            self.run_plan,
            self.drop,
            &stop,
            self.store,
        )
    }
}

/// A runtime for the setup calls (prepare, is_empty, finding the keys
/// already written); the executor starts its own runtime threads for the
/// run itself.
pub(crate) fn setup_runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")
}

/// The steps and executor groups of `plan`'s phase, whatever its workload
/// (see [`Worker::for_phase`]); errors name the phase and the database.
pub(super) fn phase_steps<K>(
    setup: &tokio::runtime::Runtime,
    plan: &Plan,
    connector: &K,
    describe: &str,
) -> Result<PhaseSteps>
where
    K: Connector,
    K::Conn: Connection,
{
    setup
        .block_on(Worker::for_phase(plan, connector))
        .with_context(|| format!("{} phase on {describe}", plan.phase.name()))
}

/// First Ctrl+C: stop scheduling, drain, print what was measured. Second:
/// quit at once.
pub(super) fn watch_ctrl_c(stop: StopHandle) {
    let spawned = std::thread::Builder::new()
        .name("sojourn-signals".into())
        .spawn(move || {
            let Ok(rt) = tokio::runtime::Builder::new_current_thread().enable_all().build() else {
                return;
            };
            rt.block_on(async {
                if tokio::signal::ctrl_c().await.is_ok() {
                    eprintln!(
                        "\ninterrupted: stopping and draining in-flight operations (Ctrl+C again to quit now)"
                    );
                    stop.stop();
                    if tokio::signal::ctrl_c().await.is_ok() {
                        std::process::exit(130);
                    }
                }
            });
        });
    if let Err(e) = spawned {
        eprintln!("warning: Ctrl+C will end the run without a summary ({e})");
    }
}

#[allow(clippy::too_many_arguments)]
fn drive<B: Backend>(
    backend: &B,
    setup: &tokio::runtime::Runtime,
    opts: &Options,
    load_plan: Option<Plan>,
    run_plan: Option<Plan>,
    drop: bool,
    stop: &StopHandle,
    store: Option<&Store>,
) -> Result<ExitCode> {
    let describe = backend.describe();
    let any = load_plan.as_ref().or(run_plan.as_ref()).expect("a plan");
    let schema = Arc::new(any.schema());
    // Owned here: the plans move into the phases below.
    let liops = any.liops.clone();
    let setup_step = Setup {
        backend,
        schema: &schema,
        tables: Tables::new(any.vote.as_ref().map(|v| v.variant), liops.as_ref()),
    };
    let loading = check_table(&setup_step, setup, &load_plan, &run_plan, drop)?;
    let (threads, runtime_threads) = (any.run.threads, any.run.runtime_threads);
    let keyvalue = any.keyvalue.is_some();
    let env = PhaseEnv {
        setup_step: &setup_step,
        setup,
        opts,
        stop,
        store,
        describe: &describe,
        bench: load_plan.is_some() && run_plan.is_some(),
    };
    let connector = BackendConnector {
        backend,
        schema: Arc::clone(&schema),
    };
    let phases = [load_plan.filter(|_| loading), run_plan]
        .into_iter()
        .flatten();
    if keyvalue {
        // Each phase on a pool of its own: the load has writers only, the
        // run writers and readers.
        for plan in phases {
            let phase = phase_steps(setup, &plan, &connector, &describe)?;
            let n = phase.steps.len();
            let end = executor::with_pool(&connector, n, plan.run.runtime_threads, |pool| {
                run_phase(&env, pool, phase, &plan)
            })??;
            if let Some(code) = end {
                return Ok(code);
            }
        }
        return Ok(ExitCode::SUCCESS);
    }
    // One pool of connections serves both phases of `bench`.
    executor::with_pool(
        &connector,
        threads,
        runtime_threads,
        |pool| -> Result<ExitCode> {
            for plan in phases {
                let phase = phase_steps(setup, &plan, &connector, &describe)?;
                if let Some(code) = run_phase(&env, pool, phase, &plan)? {
                    return Ok(code);
                }
            }
            Ok(ExitCode::SUCCESS)
        },
    )?
}

/// What every phase of one command shares.
struct PhaseEnv<'a, B> {
    /// The backend, the workload's schema and tables.
    setup_step: &'a Setup<'a, B>,
    setup: &'a tokio::runtime::Runtime,
    opts: &'a Options,
    stop: &'a StopHandle,
    store: Option<&'a Store>,
    describe: &'a str,
    /// `bench`: a load goes on to the run.
    bench: bool,
}

/// Run one phase on `pool`, recorded, with the server's counters around it,
/// and report it. `Some(code)` ends the command: every run, a load on its
/// own, and an interrupted load of `bench`; `None` goes on to the run.
fn run_phase<B: Backend>(
    env: &PhaseEnv<'_, B>,
    pool: &mut Pool<Worker>,
    phase: PhaseSteps,
    plan: &Plan,
) -> Result<Option<ExitCode>> {
    let keyvalue = phase.keyvalue.clone();
    let name = plan.phase.name();
    if let Some(kv) = &keyvalue {
        let written = kv.written();
        if plan.phase == Phase::Run || written > 0 {
            eprintln!("{name}: {written} keys written before this phase");
        }
    }
    let line = keyvalue.clone().map(keyvalue_line);
    let line = line.as_ref().map(|l| l as &StatusLine<'_>);
    let (backend, schema) = (env.setup_step.backend, env.setup_step.schema);
    let sample = || sample_server(backend, schema, env.setup);
    let (opts, describe) = (env.opts, env.describe);
    let rec = Recording::begin(env.store, plan, opts, describe);
    let start = sample();
    let mut outcome = rec.failed_if(run_steps(pool, phase, plan, env.stop, opts, &rec, line))?;
    let server_warning = attach_server(&mut outcome, start, sample());
    if let Some(kv) = &keyvalue {
        eprintln!("{name}: maxWrittenKey {}", kv.written() as i64 - 1);
    }
    if plan.phase == Phase::Load && !outcome.interrupted() && outcome.all.failures() == 0 {
        env.setup_step.finish_load(env.setup)?;
    }
    match plan.phase {
        Phase::Load => loaded(
            plan,
            &outcome,
            env.bench,
            describe,
            opts,
            &rec,
            server_warning,
        ),
        Phase::Run => report(plan, &outcome, describe, opts, &rec, server_warning).map(Some),
    }
}

/// The server's counters now, over a connection of the sampler's own (not
/// a worker's, which belong to the measurement). `Ok(None)`: the database
/// does not tell; an error becomes a warning, never a failed phase.
pub(super) fn sample_server<B: Backend>(
    backend: &B,
    schema: &Schema,
    setup: &tokio::runtime::Runtime,
) -> Result<Option<ServerCounters>, String> {
    setup
        .block_on(backend.server_counters(schema))
        .map_err(|e| redact::text(&e.to_string()))
}

/// Put the change of the server's counters over the phase into its
/// outcome. The samples bracket the whole phase, warm-up included, so the
/// per-operation figures count every operation of it (`all`). A failed
/// sample costs the server figures and a warning, nothing else.
pub(super) fn attach_server(
    outcome: &mut RunOutcome,
    start: Result<Option<ServerCounters>, String>,
    end: Result<Option<ServerCounters>, String>,
) -> Option<Warning> {
    match (start, end) {
        (Ok(Some(a)), Ok(Some(b))) => {
            outcome.server = Some(ServerStats::between(&a, &b, outcome.all.ops_done));
            None
        }
        (Err(message), _) | (_, Err(message)) => Some(Warning::ServerCounters { message }),
        _ => None,
    }
}

/// The setup a phase's workload needs: YCSB's table, the vote workload's
/// `Article` and `Vote`, or LIOPS's tables.
pub(super) struct Setup<'a, B> {
    pub(super) backend: &'a B,
    pub(super) schema: &'a sojourn_core::backend::Schema,
    pub(super) tables: Tables<'a>,
}

/// Which tables a workload keeps its data in.
#[derive(Copy, Clone)]
pub(super) enum Tables<'a> {
    /// The schema's table (YCSB's core and key-value workloads).
    Schema,
    Vote(sojourn_core::workload::VoteVariant),
    Liops(&'a LiopsConfig),
}

impl<'a> Tables<'a> {
    /// The vote workload's tables, LIOPS's, or else the schema's.
    pub(super) fn new(
        vote: Option<sojourn_core::workload::VoteVariant>,
        liops: Option<&'a LiopsConfig>,
    ) -> Tables<'a> {
        match (vote, liops) {
            (Some(v), _) => Tables::Vote(v),
            (_, Some(l)) => Tables::Liops(l),
            _ => Tables::Schema,
        }
    }
}

impl<B: Backend> Setup<'_, B> {
    /// What holds the workload's data, for messages.
    pub(super) fn what(&self) -> String {
        match self.tables {
            Tables::Vote(_) => "the vote workload's Article table".to_string(),
            Tables::Liops(l) => format!("LIOPS table {}", l.table(1)),
            Tables::Schema => format!("table {}", self.schema.table),
        }
    }

    pub(super) async fn is_empty(&self) -> Result<Option<bool>> {
        // Backends without a workload refuse it here, before any
        // operation would fail.
        Ok(match self.tables {
            Tables::Vote(variant) => self.backend.vote_is_empty(variant).await?,
            Tables::Liops(l) => self.backend.liops_is_empty(l).await?,
            Tables::Schema => self.backend.is_empty(self.schema).await?,
        })
    }

    pub(super) async fn prepare(&self, drop: bool) -> Result<()> {
        match self.tables {
            Tables::Vote(variant) => self.backend.prepare_vote(variant, drop).await?,
            Tables::Liops(l) => self.backend.prepare_liops(l, drop).await?,
            Tables::Schema => self.backend.prepare(self.schema, drop).await?,
        }
        Ok(())
    }

    /// After a complete load: LIOPS builds its index (as PGIO does, after
    /// the data, which is faster and leaves a compact btree).
    pub(super) fn finish_load(&self, rt: &tokio::runtime::Runtime) -> Result<()> {
        if let Tables::Liops(l) = self.tables {
            let started = std::time::Instant::now();
            eprintln!(
                "building the index on mykey of {} table(s) and analyzing them...",
                l.schemas
            );
            rt.block_on(self.backend.finish_liops_load(l))?;
            eprintln!("indexed in {:.1} s", started.elapsed().as_secs_f64());
        }
        Ok(())
    }
}

/// Whether the load phase should run, after the checks every workload
/// shares: `bench` skips loading data that is there (unless dropping),
/// `load` prepares the tables, and `run` refuses an empty database.
fn check_table<B: Backend>(
    step: &Setup<'_, B>,
    setup: &tokio::runtime::Runtime,
    load_plan: &Option<Plan>,
    run_plan: &Option<Plan>,
    drop: bool,
) -> Result<bool> {
    let describe = step.backend.describe();
    let bench = load_plan.is_some() && run_plan.is_some();
    let mut loading = load_plan.is_some();
    if loading {
        // With --drop, what is there is about to go: not even tables of
        // another layout (which `is_empty` refuses) matter.
        let empty = if drop {
            None
        } else {
            setup.block_on(step.is_empty())?
        };
        if bench && empty == Some(false) {
            eprintln!(
                "{describe}: {} already holds data; skipping load",
                step.what()
            );
            loading = false;
        } else {
            setup.block_on(step.prepare(drop))?;
        }
    }
    if run_plan.is_some() && !loading && setup.block_on(step.is_empty())? == Some(true) {
        bail!(
            "{} in {describe} is empty: run `sojourn load` with the same workload first, \
             or `sojourn bench` to load and run",
            step.what()
        );
    }
    Ok(loading)
}

/// After a load phase: `bench` says what it loaded and goes on to the run
/// (`None`, or the exit code if the load was interrupted); `load` prints
/// the full summary.
#[allow(clippy::too_many_arguments)]
fn loaded(
    plan: &Plan,
    outcome: &RunOutcome,
    bench: bool,
    describe: &str,
    opts: &Options,
    rec: &Recording<'_>,
    server_warning: Option<Warning>,
) -> Result<Option<ExitCode>> {
    if !bench {
        return report(plan, outcome, describe, opts, rec, server_warning).map(Some);
    }
    eprintln!(
        "loaded {} records into {describe} in {:.2} s ({:.0} inserts/s)",
        outcome.all.ops_done,
        outcome.elapsed.as_secs_f64(),
        outcome.throughput()
    );
    if let Some(s) = &outcome.server {
        eprintln!("server: {}", s.digest());
    }
    let mut warnings = Warning::check(outcome, 0.0, &[]);
    warnings.extend(server_warning);
    for w in &warnings {
        eprintln!("warning: {w}");
    }
    rec.finish(outcome, &warnings);
    Ok(outcome.interrupted().then(|| ExitCode::from(130)))
}

/// One phase's record in the store: begun when the phase starts; every
/// failure to write is a warning, and the phase goes on.
struct Recording<'a> {
    target: Option<(&'a Store, RunId)>,
}

impl<'a> Recording<'a> {
    fn begin(store: Option<&'a Store>, plan: &Plan, opts: &Options, describe: &str) -> Self {
        let Some(store) = store else {
            return Recording { target: None };
        };
        match store.begin_run(&run_meta(plan, opts, describe)) {
            Ok(id) => Recording {
                target: Some((store, id)),
            },
            Err(e) => {
                eprintln!("warning: {e}; this run is not recorded");
                Recording { target: None }
            }
        }
    }

    /// Mark the run failed if the phase failed after it began.
    fn failed_if<T>(&self, r: Result<T>) -> Result<T> {
        if let (Err(e), Some((store, id))) = (&r, &self.target) {
            if let Err(se) = store.fail_run(id, &redact::text(&format!("{e:#}"))) {
                eprintln!("warning: {se}");
            }
        }
        r
    }

    /// Store the totals and the final status.
    fn finish(&self, outcome: &RunOutcome, warnings: &[Warning]) {
        let Some((store, id)) = &self.target else {
            return;
        };
        let status = if outcome.interrupted() {
            RunStatus::Interrupted
        } else {
            RunStatus::Completed
        };
        let warnings: Vec<String> = warnings
            .iter()
            .map(|w| redact::text(&w.to_string()))
            .collect();
        match store.finish_run(id, outcome, status, &warnings) {
            Ok(()) => eprintln!("recorded as run {id} in {}", store.location()),
            Err(e) => eprintln!(
                "warning: {e}; the summary above is all that is kept of this run's totals"
            ),
        }
    }
}

/// What the store keeps about a phase before it runs. Secrets are removed
/// here: property values by their names, passwords from URLs.
fn run_meta(plan: &Plan, opts: &Options, describe: &str) -> RunMeta {
    let r = &opts.record;
    let mut m = RunMeta::new(plan.phase.name());
    m.run_uri = r.run_uri.clone();
    m.workloads = opts.workload_names.clone();
    m.properties = opts
        .props
        .iter()
        .map(|(k, e)| (k.to_string(), redact::property_value(k, &e.value)))
        .collect();
    m.backend = sojourn_backends::redact_url(describe);
    m.threads = plan.run.threads as u64;
    m.target = plan.run.target;
    m.labels = r.labels.clone();
    m.client_index = r.client_index;
    m.client_count = r.client_count;
    m.command_line = r.command_line.clone();
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
            // The writer only goes away if the scope below has ended.
            let _ = tx.send(interval.clone());
        }
    }
}

/// Run a phase's steps on the pool with the progress display, handing each
/// interval to the store as it closes. `line` replaces YCSB's status line
/// (`-s`) for workloads that print their own.
fn run_steps(
    pool: &mut Pool<Worker>,
    phase: PhaseSteps,
    plan: &Plan,
    stop: &StopHandle,
    opts: &Options,
    rec: &Recording<'_>,
    line: Option<&StatusLine<'_>>,
) -> Result<RunOutcome> {
    if plan.seed_generated {
        eprintln!(
            "{}: seed {} (repeat with --seed {})",
            plan.phase.name(),
            plan.run.seed,
            plan.run.seed
        );
    }
    let expected = phase.expected_operations();
    let display = Display::new(
        opts.status,
        opts.no_progress,
        plan.status_interval,
        plan.measurement_interval,
        expected,
        plan.phase.name(),
    )
    .with_line(line);
    // Intervals go to the store from a thread of their own: each is
    // committed as it arrives, and the executor's coordinator never waits
    // on the store. The scope ends once every interval is written, before
    // the totals are.
    let outcome = std::thread::scope(|scope| {
        let intervals = rec.target.as_ref().map(|(store, id)| {
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
            tx
        });
        let observer = Observe {
            display: &display,
            intervals,
        };
        pool.run_groups(phase.steps, &phase.groups, &plan.run, stop, &observer)
    })?;
    display.finish();
    Ok(outcome)
}

/// Print the summary and warnings, write the JSON report, then record
/// the totals: whatever fails, what was measured is printed first and
/// stored.
fn report(
    plan: &Plan,
    outcome: &RunOutcome,
    describe: &str,
    opts: &Options,
    rec: &Recording<'_>,
    server_warning: Option<Warning>,
) -> Result<ExitCode> {
    let mut warnings = Warning::check(outcome, plan.run.warmup.as_secs_f64(), &plan.percentiles);
    warnings.extend(server_warning);
    let printed = print_report(plan, outcome, describe, opts, &warnings);
    rec.finish(outcome, &warnings);
    printed?;
    Ok(if outcome.interrupted() {
        ExitCode::from(130)
    } else {
        ExitCode::SUCCESS
    })
}

fn print_report(
    plan: &Plan,
    outcome: &RunOutcome,
    describe: &str,
    opts: &Options,
    warnings: &[Warning],
) -> Result<()> {
    let properties: BTreeMap<String, String> = opts
        .props
        .iter()
        .map(|(k, e)| (k.to_string(), redact::property_value(k, &e.value)))
        .collect();
    let json = || {
        Report::new(
            plan,
            outcome,
            describe.to_string(),
            opts.workload_names.clone(),
            properties.clone(),
            warnings,
        )
    };
    // The summary goes out first: a failure to write the JSON file must not
    // lose what was measured.
    let mut stdout = std::io::stdout().lock();
    match opts.format {
        Format::Text => {
            write!(
                stdout,
                "{}",
                ycsb::summary(outcome, plan.measurement_interval, &plan.percentiles)
            )?;
            // After the summary, where YCSB parsers do not look: every line
            // starts with `#` or an operation name, never `[`.
            if plan.vote.is_some() && plan.phase == Phase::Run {
                write!(stdout, "{}", sojourn_core::output::noria::noria(outcome))?;
            }
            if let (Some(cfg), Phase::Run) = (&plan.liops, plan.phase) {
                write!(stdout, "{}", LiopsFigures::of(cfg, outcome).text())?;
            }
        }
        Format::Json => writeln!(stdout, "{}", serde_json::to_string_pretty(&json())?)?,
    }
    stdout.flush()?;
    // Not in the summary itself: stdout stays the lines YCSB prints, for
    // the parsers that read it (PerfKitBenchmarker's).
    if let Some(s) = &outcome.server {
        eprintln!("server: {}", s.digest());
    }
    for w in warnings {
        eprintln!("warning: {w}");
    }
    if let Some(path) = &opts.json {
        let text = serde_json::to_string_pretty(&json())?;
        std::fs::write(path, text + "\n")
            .with_context(|| format!("writing the JSON report to {}", path.display()))?;
    }
    Ok(())
}
