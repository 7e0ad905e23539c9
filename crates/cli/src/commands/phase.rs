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
use sojourn_core::executor::{self, RunOutcome, StopHandle};
use sojourn_core::output::{ycsb, Report, Warning};
use sojourn_core::plan::Plan;
use sojourn_core::properties::{Origin, Properties};
use sojourn_core::workload::{CoreShared, Phase};

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
const BACKEND_PREFIXES: &[&str] = &[
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
struct Options {
    props: Properties,
    workload_names: Vec<String>,
    db_url: String,
    default_sqlite: PathBuf,
    format: Format,
    json: Option<PathBuf>,
    status: bool,
    no_progress: bool,
}

fn data_dir(arg: Option<PathBuf>) -> PathBuf {
    arg.or_else(|| std::env::var_os("SOJOURN_DATA_DIR").map(PathBuf::from))
        .or_else(|| dirs::data_dir().map(|d| d.join("sojourn")))
        .unwrap_or_else(|| PathBuf::from(".sojourn"))
}

fn options(a: PhaseArgs) -> Result<Options> {
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
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .thread_name("sojourn-worker")
            .build()
            .context("starting the async runtime")?;
        let stop = StopHandle::new();
        runtime.block_on(async {
            let s = stop.clone();
            tokio::spawn(async move {
                if tokio::signal::ctrl_c().await.is_ok() {
                    eprintln!(
                        "\ninterrupted: stopping and draining in-flight operations (Ctrl+C again to quit now)"
                    );
                    s.stop();
                    if tokio::signal::ctrl_c().await.is_ok() {
                        std::process::exit(130);
                    }
                }
            });
            drive(backend, self.opts, self.load_plan, self.run_plan, self.drop, &stop).await
        })
    }
}

async fn drive<B: Backend>(
    backend: &B,
    opts: &Options,
    load_plan: Option<Plan>,
    run_plan: Option<Plan>,
    drop: bool,
    stop: &StopHandle,
) -> Result<ExitCode> {
    let describe = backend.describe();
    let any = load_plan.as_ref().or(run_plan.as_ref()).expect("a plan");
    let schema = sojourn_core::backend::Schema::ycsb(
        &any.workload.table,
        &any.workload.field_prefix,
        any.workload.field_count,
    );
    let mut code = ExitCode::SUCCESS;
    if let Some(plan) = load_plan {
        let empty = backend.is_empty(&schema).await?;
        let bench = run_plan.is_some();
        if bench && empty == Some(false) && !drop {
            eprintln!(
                "{describe}: table {} already holds data; skipping load",
                schema.table
            );
        } else {
            backend.prepare(&schema, drop).await?;
            let outcome = execute(backend, &plan, stop, opts).await?;
            if bench {
                eprintln!(
                    "loaded {} records into {describe} in {:.2} s ({:.0} inserts/s)",
                    outcome.all.ops_done,
                    outcome.elapsed.as_secs_f64(),
                    outcome.throughput()
                );
                for w in Warning::check(&outcome, 0.0) {
                    eprintln!("warning: {w}");
                }
                if outcome.interrupted() {
                    return Ok(ExitCode::from(130));
                }
            } else {
                code = report(&plan, &outcome, &describe, opts)?;
            }
        }
    }
    if let Some(plan) = run_plan {
        if backend.is_empty(&schema).await? == Some(true) {
            bail!(
                "table {} in {describe} is empty: run `sojourn load` with the same workload first, \
                 or `sojourn bench` to load and run",
                schema.table
            );
        }
        let outcome = execute(backend, &plan, stop, opts).await?;
        code = report(&plan, &outcome, &describe, opts)?;
    }
    Ok(code)
}

async fn execute<B: Backend>(
    backend: &B,
    plan: &Plan,
    stop: &StopHandle,
    opts: &Options,
) -> Result<RunOutcome> {
    let shared = CoreShared::new(plan.workload.clone()).map_err(anyhow::Error::msg)?;
    let threads = plan.run.threads;
    let mut conns = Vec::with_capacity(threads);
    for _ in 0..threads {
        conns.push(backend.connect(Arc::clone(&shared.schema)).await?);
    }
    let steps = (0..threads)
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
    let outcome = executor::run(conns, steps, &plan.run, stop, &display).await;
    display.finish();
    Ok(outcome)
}

fn report(plan: &Plan, outcome: &RunOutcome, describe: &str, opts: &Options) -> Result<ExitCode> {
    let warnings = Warning::check(outcome, plan.run.warmup.as_secs_f64());
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
