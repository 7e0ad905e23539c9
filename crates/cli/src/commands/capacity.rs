//! `sojourn capacity`: the highest offered rate the database sustains while
//! the response-time SLOs hold. Every step runs on one pool of connections
//! against the loaded data; each prints as it finishes, then the result and
//! the latency-throughput curve.
//!
//! Each step is also kept in the results store as an ordinary run (its
//! target, histograms and time series), tied to the others by the labels
//! `capacity_session`, `capacity_step`, `capacity_slos` and
//! `capacity_sustained`, so `sojourn report SESSION` can plot the curve
//! and `sojourn compare` can compare two steps. A step is written once it
//! has been judged, between steps, so the store never slows a measurement.

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};

use anyhow::{bail, Context, Result};
use serde::Serialize;
use sojourn_backends::Visitor;
use sojourn_core::backend::Backend;
use sojourn_core::capacity::{self, Search, Slo, Verdict};
use sojourn_core::executor::{self, BackendConnector, Pool, Quiet, RunOutcome, StopHandle};
use sojourn_core::output::Warning;
use sojourn_core::plan::{MeasurementInterval, Plan};
use sojourn_core::workload::{CoreShared, CoreWorker, Phase};
use sojourn_report::run::{SESSION_LABEL, SLOS_LABEL, STEP_LABEL, SUSTAINED_LABEL};
use sojourn_store::{RunMeta, RunStatus, Store};

use super::phase::{options, setup_runtime, watch_ctrl_c, Options, BACKEND_PREFIXES};
use crate::cli::CapacityArgs;
use crate::redact;

/// The search's settings, validated.
struct Settings {
    slos: Vec<Slo>,
    start: Option<f64>,
    step: Duration,
    settle: Duration,
    precision: f64,
    max_error_rate: f64,
    load: Option<Plan>,
}

fn seconds(flag: &str, v: f64, min: f64) -> Result<Duration> {
    if !(v.is_finite() && v >= min && v <= 86_400.0) {
        bail!("{flag} {v}: expected a number of seconds from {min} to 86400");
    }
    Ok(Duration::from_secs_f64(v))
}

pub fn main(a: CapacityArgs) -> Result<ExitCode> {
    let settings = Settings {
        slos: capacity::parse_slos(&a.slo).map_err(anyhow::Error::msg)?,
        start: match a.start {
            Some(s) if !(s.is_finite() && s > 0.0) => {
                bail!("--start {s}: expected a rate above 0 operations per second")
            }
            s => s,
        },
        step: seconds("--step", a.step, 0.1)?,
        settle: seconds("--settle", a.settle, 0.0)?,
        precision: match a.precision {
            p if p > 0.0 && p < 0.5 => p,
            p => bail!("--precision {p}: expected a fraction above 0 and below 0.5 (0.05 = +-5%)"),
        },
        max_error_rate: match a.max_error_rate {
            r if (0.0..=1.0).contains(&r) => r,
            r => bail!("--max-error-rate {r}: expected a fraction from 0 to 1"),
        },
        load: None,
    };
    let opts = options(a.phase)?;
    let plan = Plan::from_properties(&opts.props, Phase::Run, BACKEND_PREFIXES)?;
    if plan.vote.is_some() {
        // Noria's own method is the capacity search by hand: raise
        // --target until sojourn time climbs; run the steps with `run`.
        bail!(
            "`sojourn capacity` runs the YCSB core workload only; for workload=vote, \
             run `sojourn run --target N` at rising targets"
        );
    }
    if plan.liops.is_some() {
        // PGIO measures what a fixed set of sessions achieves back to back;
        // its setup (tables, index) is not the core workload's either.
        bail!(
            "`sojourn capacity` runs the YCSB core workload only; for workload=liops, \
             run `sojourn run` with more NUM_SCHEMAS or NUM_THREADS, or with --target N"
        );
    }
    if plan.keyvalue.is_some() {
        // The search offers one target to every connection; what would
        // scale the two pools' own rates is the experimenter's choice.
        bail!(
            "`sojourn capacity` runs the YCSB core workload only; workload=keyvalue has a \
             writer and a reader pool with rates of their own: run `sojourn run -p \
             read_rate=N -p write_rate=M` at rising rates (see docs/keyvalue.md)"
        );
    }
    let load = match a.load {
        true => Some(Plan::from_properties(
            &opts.props,
            Phase::Load,
            BACKEND_PREFIXES,
        )?),
        false => None,
    };
    for u in &plan.unknown {
        eprintln!("warning: {}", Warning::UnknownProperty(u.clone()));
    }
    let backend = sojourn_backends::open(&opts.db_url, &opts.props, &opts.default_sqlite)?;
    backend.visit(Capacity {
        opts: &opts,
        plan,
        settings: Settings { load, ..settings },
    })
}

struct Capacity<'a> {
    opts: &'a Options,
    plan: Plan,
    settings: Settings,
}

/// What `--json FILE` writes.
#[derive(Serialize)]
struct CapacityReport<'a> {
    backend: String,
    workload: &'a [String],
    threads: usize,
    slos: Vec<String>,
    precision: f64,
    probe_ops_per_sec: Option<f64>,
    steps: &'a [Verdict],
    /// Achieved rate of the highest sustained step.
    capacity_ops_per_sec: Option<f64>,
    /// That step's target.
    capacity_target_ops_per_sec: Option<f64>,
    /// Highest sustained and lowest missed target.
    bracket_ops_per_sec: Option<[f64; 2]>,
}

impl Visitor for Capacity<'_> {
    type Output = Result<ExitCode>;

    fn visit<B: Backend>(self, backend: &B) -> Result<ExitCode> {
        let Capacity {
            opts,
            plan,
            settings,
        } = self;
        let describe = backend.describe();
        let schema = Arc::new(plan.schema());
        let setup = setup_runtime()?;
        let empty = setup.block_on(backend.is_empty(&schema))? == Some(true);
        let load = settings.load.as_ref().filter(|_| empty);
        if empty && load.is_none() {
            bail!(
                "table {} in {describe} is empty: run `sojourn load` with the same workload first, \
                 or pass --load",
                schema.table
            );
        }
        if load.is_some() {
            setup.block_on(backend.prepare(&schema, false))?;
        }
        let stop = StopHandle::new();
        watch_ctrl_c(stop.clone());
        let connector = BackendConnector { backend, schema };
        let slo_text: Vec<String> = settings.slos.iter().map(|s| s.to_string()).collect();
        let mut steps_store = StepStore::open(opts, &plan, &describe, &slo_text, settings.settle);
        eprintln!(
            "capacity of {describe} under {} with {} connections; steps of {:.1} s after {:.1} s to settle",
            slo_text.join(", "),
            plan.run.threads,
            settings.step.as_secs_f64(),
            settings.settle.as_secs_f64()
        );
        let (probe, steps) = executor::with_pool(
            &connector,
            plan.run.threads,
            plan.run.runtime_threads,
            |pool| -> Result<_> {
                if let Some(load) = load {
                    let shared =
                        CoreShared::new(load.workload.clone()).map_err(anyhow::Error::msg)?;
                    let steps = (0..pool.workers())
                        .map(|i| shared.worker(Phase::Load, load.run.seed, i))
                        .collect();
                    let o = pool.run(steps, &load.run, &stop, &Quiet)?;
                    eprintln!(
                        "loaded {} records in {:.2} s",
                        o.all.ops_done,
                        o.elapsed.as_secs_f64()
                    );
                }
                search(pool, &plan, &settings, &stop, &mut steps_store)
            },
        )??;

        let mut by_target = steps.clone();
        by_target.sort_by(|a, b| a.target.total_cmp(&b.target));
        let mut s = Search::new(1.0, 2.0, settings.precision);
        for v in &steps {
            s.record(v.target, v.sustained);
        }
        println!();
        println!("latency-throughput curve (response time, 95% CI):");
        print!("{:>10} {:>10}", "target", "achieved");
        for slo in &slo_text {
            print!(" {:>28}", slo);
        }
        println!("  verdict");
        for v in &by_target {
            print!("{:>10.0} {:>10.0}", v.target, v.achieved);
            for c in &v.checks {
                print!(
                    " {:>28}",
                    format!(
                        "{:.2} ms [{:.2}, {:.2}]",
                        c.value_us / 1e3,
                        c.ci95_us[0] / 1e3,
                        c.ci95_us[1] / 1e3
                    )
                );
            }
            println!("  {}", if v.sustained { "ok" } else { "missed" });
        }
        let result = s.result();
        // The capacity is what the database served at the best sustained
        // step: a target a few percent above it can pass a short step.
        let best = result.and_then(|(t, _, _)| steps.iter().find(|v| v.sustained && v.target == t));
        match (result, best) {
            (Some((_, lo, hi)), Some(best)) => println!(
                "capacity: {:.0} ops/s sustained under {} (at target {lo:.0}; target {} missed; +-{:.1}%)",
                best.achieved,
                slo_text.join(", "),
                if hi > lo { format!("{hi:.0}") } else { "none".to_string() },
                100.0 * (hi - lo) / (hi + lo)
            ),
            _ => println!(
                "capacity: no step was sustained, down to {:.0} ops/s; the SLOs may be out of reach",
                by_target.first().map_or(0.0, |v| v.target)
            ),
        }
        steps_store.finish();
        if let Some(path) = &opts.json {
            let report = CapacityReport {
                backend: describe.clone(),
                workload: &opts.workload_names,
                threads: plan.run.threads,
                slos: slo_text,
                precision: settings.precision,
                probe_ops_per_sec: probe,
                steps: &steps,
                capacity_ops_per_sec: best.map(|v| v.achieved),
                capacity_target_ops_per_sec: result.map(|r| r.0),
                bracket_ops_per_sec: result.map(|r| [r.1, r.2]),
            };
            std::fs::write(path, serde_json::to_string_pretty(&report)? + "\n")
                .with_context(|| format!("writing {}", path.display()))?;
        }
        Ok(if stop.is_stopped() {
            ExitCode::from(130)
        } else {
            ExitCode::SUCCESS
        })
    }
}

/// Probe (unless a start is given), then ramp and bisect. Returns the
/// probe's rate and every step's verdict in the order run.
fn search(
    pool: &mut Pool<CoreWorker>,
    plan: &Plan,
    settings: &Settings,
    stop: &StopHandle,
    steps_store: &mut StepStore,
) -> Result<(Option<f64>, Vec<Verdict>)> {
    let mut probe = None;
    let start = match settings.start {
        Some(s) => s,
        None => {
            let o = step(pool, plan, settings, None, stop)?;
            let rate = o.throughput();
            eprintln!("probe: {rate:.0} ops/s in closed loop; ramping from an eighth of it");
            probe = Some(rate);
            (rate / 8.0).max(1.0)
        }
    };
    let mut s = Search::new(start, 2.0, settings.precision);
    let mut verdicts = Vec::new();
    while let Some(target) = s.next_target() {
        if stop.is_stopped() {
            break;
        }
        let o = step(pool, plan, settings, Some(target), stop)?;
        let v = capacity::judge(&o, target, &settings.slos, settings.max_error_rate);
        let checks: Vec<String> = v
            .checks
            .iter()
            .map(|c| {
                format!(
                    "{} {:.2} ms [{:.2}, {:.2}]",
                    c.slo,
                    c.value_us / 1e3,
                    c.ci95_us[0] / 1e3,
                    c.ci95_us[1] / 1e3
                )
            })
            .collect();
        eprintln!(
            "step {:>2}: target {:>9.0}  achieved {:>9.0}  {}  {}",
            verdicts.len() + 1,
            target,
            v.achieved,
            checks.join("  "),
            match &v.reason {
                None => "sustained".to_string(),
                Some(r) => format!("missed: {r}"),
            }
        );
        s.record(target, v.sustained);
        steps_store.step(verdicts.len() + 1, &o, &v);
        verdicts.push(v);
    }
    Ok((probe, verdicts))
}

/// Where the session's steps are kept: the results store in the data
/// directory. A store that cannot be opened or written costs a warning,
/// never the search.
struct StepStore {
    store: Option<Store>,
    session: String,
    /// What every step shares; each gets its own id, run URI and labels.
    base: RunMeta,
    warmup_s: f64,
    percentiles: Vec<f64>,
    stored: usize,
}

impl StepStore {
    fn open(
        opts: &Options,
        plan: &Plan,
        describe: &str,
        slos: &[String],
        settle: Duration,
    ) -> StepStore {
        // The results store sits beside the default embedded database, in
        // the data directory.
        let location = super::stored::default_location(
            opts.default_sqlite
                .parent()
                .unwrap_or(std::path::Path::new(".")),
        );
        let store = match Store::open(&location) {
            Ok(s) => Some(s),
            Err(e) => {
                eprintln!("warning: {e}; the steps of this search are not recorded");
                None
            }
        };
        let session = format!("cap-{}", sojourn_store::new_run_uri());
        let mut base = RunMeta::new("run");
        base.workloads = opts.workload_names.clone();
        base.properties = opts
            .props
            .iter()
            .map(|(k, e)| (k.to_string(), redact::property_value(k, &e.value)))
            .collect();
        base.backend = sojourn_backends::redact_url(describe);
        base.threads = plan.run.threads as u64;
        base.labels = BTreeMap::from([
            (SESSION_LABEL.to_string(), session.clone()),
            (SLOS_LABEL.to_string(), slos.join(",")),
        ]);
        base.command_line = std::env::args()
            .map(|a| match a.split_once('=') {
                Some((k, v)) => format!("{k}={}", redact::property_value(k, v)),
                None => sojourn_backends::redact_url(&a),
            })
            .collect::<Vec<_>>()
            .join(" ");
        base.measurement_interval = match plan.measurement_interval {
            MeasurementInterval::Op => "op",
            MeasurementInterval::Intended => "intended",
            MeasurementInterval::Both => "both",
        }
        .to_string();
        base.percentiles = plan.percentiles.clone();
        base.warmup = settle;
        base.seed = plan.run.seed;
        StepStore {
            store,
            session,
            base,
            warmup_s: settle.as_secs_f64(),
            percentiles: plan.percentiles.clone(),
            stored: 0,
        }
    }

    /// Keep one judged step.
    fn step(&mut self, n: usize, o: &RunOutcome, v: &Verdict) {
        let Some(store) = &self.store else {
            return;
        };
        let mut meta = self.base.clone();
        meta.id = sojourn_store::RunId(sojourn_store::new_run_id());
        meta.run_uri = sojourn_store::new_run_uri();
        // The store keeps times to the microsecond.
        let since = o.started_at.duration_since(UNIX_EPOCH).unwrap_or_default();
        meta.started_at = UNIX_EPOCH + Duration::from_micros(since.as_micros() as u64);
        meta.target = Some(v.target);
        meta.seed = o.seed;
        meta.labels.insert(STEP_LABEL.to_string(), n.to_string());
        meta.labels
            .insert(SUSTAINED_LABEL.to_string(), v.sustained.to_string());
        if let Some(r) = &v.reason {
            meta.labels.insert("capacity_reason".to_string(), r.clone());
        }
        let warnings: Vec<String> = Warning::check(o, self.warmup_s, &self.percentiles)
            .iter()
            .map(|w| w.to_string())
            .collect();
        let status = if o.interrupted() {
            RunStatus::Interrupted
        } else {
            RunStatus::Completed
        };
        let written = store.begin_run(&meta).and_then(|id| {
            for iv in &o.intervals {
                store.write_interval(&id, iv)?;
            }
            store.finish_run(&id, o, status, &warnings)
        });
        match written {
            Ok(()) => self.stored += 1,
            Err(e) => {
                eprintln!("warning: {e}; the remaining steps are not recorded");
                self.store = None;
            }
        }
    }

    /// Say where the session went.
    fn finish(&self) {
        if let (Some(store), true) = (&self.store, self.stored > 0) {
            eprintln!(
                "recorded {} steps as capacity session {} in {}; `sojourn report {} -o report.html` plots them",
                self.stored,
                self.session,
                store.location(),
                self.session
            );
        }
    }
}

/// One step: open loop at `target` (closed loop when `None`) for settle +
/// step seconds, the settle period left out of the measurement.
fn step(
    pool: &mut Pool<CoreWorker>,
    plan: &Plan,
    settings: &Settings,
    target: Option<f64>,
    stop: &StopHandle,
) -> Result<RunOutcome> {
    let shared = CoreShared::new(plan.workload.clone()).map_err(anyhow::Error::msg)?;
    let steps = (0..pool.workers())
        .map(|i| shared.worker(Phase::Run, plan.run.seed, i))
        .collect();
    let mut cfg = plan.run.clone();
    cfg.target = target;
    cfg.operation_count = None;
    cfg.max_execution_time = Some(settings.settle + settings.step);
    cfg.warmup = settings.settle;
    // Intervals short enough that the settle period ends on a boundary.
    cfg.interval = Duration::from_millis(100);
    Ok(pool.run(steps, &cfg, stop, &Quiet)?)
}
