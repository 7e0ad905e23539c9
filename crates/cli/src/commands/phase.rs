//! `sojourn load`, `run` and `bench`: resolve the properties, open the
//! backend, build and validate every plan before anything runs, drive the
//! executor, then print the summary and warnings and write the JSON report.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{bail, Context, Result};
use sojourn_backends::Visitor;
use sojourn_core::backend::Backend;
use sojourn_core::executor::{self, BackendConnector, Pool, RunOutcome, StopHandle};
use sojourn_core::output::{ycsb, Report, Warning};
use sojourn_core::plan::Plan;
use sojourn_core::properties::{Origin, Properties};
use sojourn_core::workload::{CoreShared, CoreWorker, Phase};

use crate::cli::{ArrivalArg, Format, PhaseArgs};
use crate::progress::Display;
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
}

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
    for p in &a.props {
        props.set_arg(p)?;
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
    let default_sqlite = data_dir(a.data_dir).join("sojourn.sqlite");
    Ok(Options {
        props,
        workload_names,
        db_url,
        default_sqlite,
        format: a.format,
        json: a.json,
        status: a.status,
        no_progress: a.no_progress,
    })
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

    backend.visit(Drive {
        opts: &opts,
        load_plan,
        run_plan,
        drop,
    })
}

/// Everything `main` resolved, run against the concrete backend type.
struct Drive<'a> {
    opts: &'a Options,
    load_plan: Option<Plan>,
    run_plan: Option<Plan>,
    drop: bool,
}

impl Visitor for Drive<'_> {
    type Output = Result<ExitCode>;

    fn visit<B: Backend>(self, backend: &B) -> Result<ExitCode> {
        // Setup calls (prepare, is_empty) run here; the executor starts its
        // own runtime threads for the run itself.
        let setup = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .context("starting the async runtime")?;
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
        )
    }
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

fn drive<B: Backend>(
    backend: &B,
    setup: &tokio::runtime::Runtime,
    opts: &Options,
    load_plan: Option<Plan>,
    run_plan: Option<Plan>,
    drop: bool,
    stop: &StopHandle,
) -> Result<ExitCode> {
    let describe = backend.describe();
    let any = load_plan.as_ref().or(run_plan.as_ref()).expect("a plan");
    let schema = Arc::new(sojourn_core::backend::Schema::ycsb(
        &any.workload.table,
        &any.workload.field_prefix,
        any.workload.field_count,
    ));
    let (threads, runtime_threads) = (any.run.threads, any.run.runtime_threads);
    let bench = load_plan.is_some() && run_plan.is_some();
    let mut loading = load_plan.is_some();
    if loading {
        let empty = setup.block_on(backend.is_empty(&schema))?;
        if bench && empty == Some(false) && !drop {
            eprintln!(
                "{describe}: table {} already holds data; skipping load",
                schema.table
            );
            loading = false;
        } else {
            setup.block_on(backend.prepare(&schema, drop))?;
        }
    }
    if run_plan.is_some() && !loading && setup.block_on(backend.is_empty(&schema))? == Some(true) {
        bail!(
            "table {} in {describe} is empty: run `sojourn load` with the same workload first, \
             or `sojourn bench` to load and run",
            schema.table
        );
    }
    let connector = BackendConnector { backend, schema };
    // One pool of connections serves both phases of `bench`.
    executor::with_pool(
        &connector,
        threads,
        runtime_threads,
        |pool| -> Result<ExitCode> {
            let mut code = ExitCode::SUCCESS;
            if let Some(plan) = load_plan.as_ref().filter(|_| loading) {
                let outcome = execute(pool, plan, stop, opts)?;
                if bench {
                    eprintln!(
                        "loaded {} records into {describe} in {:.2} s ({:.0} inserts/s)",
                        outcome.all.ops_done,
                        outcome.elapsed.as_secs_f64(),
                        outcome.throughput()
                    );
                    for w in Warning::check(&outcome, 0.0, &[]) {
                        eprintln!("warning: {w}");
                    }
                    if outcome.interrupted() {
                        return Ok(ExitCode::from(130));
                    }
                } else {
                    code = report(plan, &outcome, &describe, opts)?;
                }
            }
            if let Some(plan) = &run_plan {
                let outcome = execute(pool, plan, stop, opts)?;
                code = report(plan, &outcome, &describe, opts)?;
            }
            Ok(code)
        },
    )?
}

fn execute(
    pool: &mut Pool<CoreWorker>,
    plan: &Plan,
    stop: &StopHandle,
    opts: &Options,
) -> Result<RunOutcome> {
    let shared = CoreShared::new(plan.workload.clone()).map_err(anyhow::Error::msg)?;
    let steps = (0..pool.workers())
        .map(|i| shared.worker(plan.phase, plan.run.seed, i))
        .collect();
    if plan.seed_generated {
        eprintln!(
            "{}: seed {} (repeat with --seed {})",
            plan.phase.name(),
            plan.run.seed,
            plan.run.seed
        );
    }
    let display = Display::new(
        opts.status,
        opts.no_progress,
        plan.status_interval,
        plan.measurement_interval,
        plan.run.operation_count,
        plan.phase.name(),
    );
    let outcome = pool.run(steps, &plan.run, stop, &display)?;
    display.finish();
    Ok(outcome)
}

fn report(plan: &Plan, outcome: &RunOutcome, describe: &str, opts: &Options) -> Result<ExitCode> {
    let warnings = Warning::check(outcome, plan.run.warmup.as_secs_f64(), &plan.percentiles);
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
            &warnings,
        )
    };
    // The summary goes out first: a failure to write the JSON file must not
    // lose what was measured.
    let mut stdout = std::io::stdout().lock();
    match opts.format {
        Format::Text => write!(
            stdout,
            "{}",
            ycsb::summary(outcome, plan.measurement_interval, &plan.percentiles)
        )?,
        Format::Json => writeln!(stdout, "{}", serde_json::to_string_pretty(&json())?)?,
    }
    stdout.flush()?;
    for w in &warnings {
        eprintln!("warning: {w}");
    }
    if let Some(path) = &opts.json {
        let text = serde_json::to_string_pretty(&json())?;
        std::fs::write(path, text + "\n")
            .with_context(|| format!("writing the JSON report to {}", path.display()))?;
    }
    Ok(if outcome.interrupted() {
        ExitCode::from(130)
    } else {
        ExitCode::SUCCESS
    })
}
