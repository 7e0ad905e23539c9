//! `sojourn capacity`: the highest offered rate the database sustains while
//! the response-time SLOs hold. Every step runs on one pool of connections
//! against the loaded data; each prints as it finishes, then the result and
//! the latency-throughput curve.
//!
//! Each step is also kept in the results store as an ordinary run (its
//! target, histograms and time series), tied to the others by the labels
//! `capacity_session`, `capacity_step`, `capacity_slos` and
//! `capacity_sustained`, so `sojourn report SESSION` can plot the curve
//! and `sojourn compare` can compare two steps. Steps are recorded as every
//! phase is (the session's pipeline, `--results` and `--no-store` as for
//! `run`); the verdict labels are added once a step has been judged.

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use serde::Serialize;
use sojourn_core::capacity::{self, format_rate, Search, Slo, Verdict};
use sojourn_core::executor::{Group, RunConfig, StopHandle};
use sojourn_core::output::Warning;
use sojourn_core::plan::Plan;
use sojourn_core::workload::{Phase, Workload};
use sojourn_report::run::{SESSION_LABEL, SLOS_LABEL, STEP_LABEL, SUSTAINED_LABEL};
use sojourn_session::{watch_ctrl_c, Connections, PhaseSpec, Session, Silent};

use crate::cli::CapacityArgs;
use crate::options::Options;

/// The search's settings, validated.
struct Settings {
    slos: Vec<Slo>,
    start: Option<f64>,
    step: Duration,
    settle: Duration,
    precision: f64,
    max_error_rate: f64,
    confirm: u32,
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
        confirm: match a.confirm {
            n @ 0..=20 => n,
            n => bail!("--confirm {n}: expected 0 to 20 further tries of the capacity found"),
        },
    };
    let opts = Options::new(a.phase)?;
    if opts.agents.is_some() {
        bail!(
            "capacity does not run on agents yet: run its steps by hand with \
             `sojourn run --agents N --target R`, or search from one machine"
        );
    }
    let plan = opts.plan(Phase::Run)?;
    match &plan.workload {
        Workload::Core(_) => {}
        // Noria's own method is the capacity search by hand: raise
        // --target until sojourn time climbs; run the steps with `run`.
        Workload::Vote(_) => bail!(
            "`sojourn capacity` runs the YCSB core workload only; for workload=vote, \
             run `sojourn run --target N` at rising targets"
        ),
        // PGIO measures what a fixed set of sessions achieves back to back;
        // its setup (tables, index) is not the core workload's either.
        Workload::Liops(_) => bail!(
            "`sojourn capacity` runs the YCSB core workload only; for workload=liops, \
             run `sojourn run` with more NUM_SCHEMAS or NUM_THREADS, or with --target N"
        ),
        // The search offers one target to every connection; what would
        // scale the two pools' own rates is the experimenter's choice.
        Workload::KeyValue(_) => bail!(
            "`sojourn capacity` runs the YCSB core workload only; workload=keyvalue has a \
             writer and a reader pool with rates of their own: run `sojourn run -p \
             read_rate=N -p write_rate=M` at rising rates (see docs/keyvalue.md)"
        ),
    }
    let load = match a.load {
        true => Some(opts.plan(Phase::Load)?),
        false => None,
    };
    for u in &plan.unknown {
        eprintln!("warning: {}", Warning::UnknownProperty(u.clone()));
    }
    let slo_text: Vec<String> = settings.slos.iter().map(|s| s.to_string()).collect();
    let capacity_session = format!("cap-{}", sojourn_store::new_run_uri());
    let mut tags = opts.tags.clone();
    tags.labels
        .insert(SESSION_LABEL.to_string(), capacity_session.clone());
    tags.labels
        .insert(SLOS_LABEL.to_string(), slo_text.join(","));
    let store = opts.store.open(&opts.places)?;
    let session = Session::new(
        store.as_ref(),
        tags,
        &opts.props,
        Default::default(),
        &Silent,
    );
    let db = session.open_database(
        &opts.db_url,
        &opts.places.default_sqlite(),
        plan.run.workers(),
    )?;
    let describe = db.describe().to_string();
    let empty = db.is_empty(&plan)? == Some(true);
    let load = load.filter(|_| empty);
    if empty && load.is_none() {
        bail!(
            "{describe} holds no data for {}: run `sojourn load` with the same workload first, \
             or pass --load",
            plan.workload.what(&plan.schema)
        );
    }
    if load.is_some() {
        db.prepare(&plan, false)?;
    }
    let stop = session.stop().clone();
    watch_ctrl_c(stop.clone());
    eprintln!(
        "capacity of {describe} under {} with {} connections; steps of {:.1} s after {:.1} s to settle",
        slo_text.join(", "),
        plan.run.workers(),
        settings.step.as_secs_f64(),
        settings.settle.as_secs_f64()
    );
    let (probe, steps, stored) = db.connect(&plan, |conns| {
        if let Some(load) = &load {
            let quiet = PhaseSpec {
                record: false,
                ..PhaseSpec::default()
            };
            let o = conns.run(load, quiet)?.finish(&BTreeMap::new())?.outcome;
            eprintln!(
                "loaded {} in {:.2} s",
                load.workload.loaded(o.all.ops_done),
                o.elapsed.as_secs_f64()
            );
        }
        search(conns, &plan, &settings, &stop)
    })?;

    let mut by_target = steps.clone();
    by_target.sort_by(|a, b| a.target.total_cmp(&b.target));
    let mut s = Search::new(1.0, 2.0, settings.precision, settings.confirm);
    for v in &steps {
        record(&mut s, v);
    }
    println!();
    println!("latency-throughput curve (response time, 95% CI):");
    print!("{:>10} {:>10}", "target", "achieved");
    for slo in &slo_text {
        print!(" {:>28}", slo);
    }
    println!("  verdict");
    for v in &by_target {
        print!(
            "{:>10} {:>10}",
            format_rate(v.target),
            format_rate(v.achieved)
        );
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
        println!(
            "  {}",
            match (v.sustained, v.too_few_operations) {
                (true, _) => "ok",
                (false, true) => "too few operations to judge",
                (false, false) => "missed",
            }
        );
    }
    // Steps too short for their SLO's percentile: where the search ended
    // in them, its result says so.
    let too_few: Vec<f64> = by_target
        .iter()
        .filter(|v| v.too_few_operations)
        .map(|v| v.target)
        .collect();
    let judged_too_few = |t: f64| too_few.contains(&t);
    let lengthen = || {
        let needed = steps
            .iter()
            .flat_map(|v| &v.checks)
            .filter(|c| c.too_few_operations)
            .map(|c| c.slo.as_str())
            .collect::<std::collections::BTreeSet<_>>();
        format!(
            "steps at {} held too few operations to judge {} (fewer than 10 beyond the \
             percentile): lengthen --step or raise the rate",
            too_few
                .iter()
                .map(|&t| format_rate(t))
                .collect::<Vec<_>>()
                .join(", "),
            needed.into_iter().collect::<Vec<_>>().join(", ")
        )
    };
    let result = s.result();
    // The capacity is what the database served in the steps at the
    // target that held: a target a few percent above it can pass a step.
    let held = |t: f64| -> Vec<f64> {
        steps
            .iter()
            .filter(|v| v.sustained && v.target == t)
            .map(|v| v.achieved)
            .collect()
    };
    let found = result.as_ref().map(|r| {
        let achieved = held(r.target);
        let mean = achieved.iter().sum::<f64>() / achieved.len().max(1) as f64;
        let lo = achieved.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = achieved.iter().copied().fold(0.0, f64::max);
        (r, mean, [lo, hi])
    });
    match &found {
        Some((r, mean, [lo, hi])) => {
            println!(
                "capacity: {} ops/s sustained under {} (target {} held in {} of {} \
                 tries, achieving {} to {} ops/s; {})",
                format_rate(*mean),
                slo_text.join(", "),
                format_rate(r.target),
                r.tries.held,
                r.tries.held + r.tries.missed,
                format_rate(*lo),
                format_rate(*hi),
                match (r.failed, r.plus_minus()) {
                    (Some(b), _) if judged_too_few(b) => format!(
                        "the search ended at target {}, whose {}",
                        format_rate(b),
                        lengthen()
                    ),
                    (Some(b), Some(pm)) => format!(
                        "target {} missed twice; +-{:.1}%: the capacity lies between the \
                         two targets, and repeating the search lands there unless the \
                         database's own capacity varies by more than the tries above",
                        format_rate(b),
                        100.0 * pm
                    ),
                    _ => "no target missed: the search stopped before finding an upper bound"
                        .to_string(),
                }
            );
        }
        None if !too_few.is_empty() => println!(
            "capacity: no step could be judged, down to {} ops/s: the {}",
            format_rate(by_target.first().map_or(0.0, |v| v.target)),
            lengthen()
        ),
        None => println!(
            "capacity: no step was sustained, down to {} ops/s; the SLOs may be out of reach",
            format_rate(by_target.first().map_or(0.0, |v| v.target))
        ),
    }
    if let (Some(store), true) = (&store, stored > 0) {
        eprintln!(
            "recorded {stored} steps as capacity session {capacity_session} in {}; \
             `sojourn report {capacity_session} -o report.html` plots them",
            store.location(),
        );
    }
    if let Some(path) = &opts.json {
        let report = CapacityReport {
            backend: describe.clone(),
            workload: &opts.tags.workloads,
            threads: plan.run.workers(),
            slos: slo_text,
            precision: settings.precision,
            confirm: settings.confirm,
            probe_ops_per_sec: probe,
            steps: &steps,
            capacity_ops_per_sec: found.as_ref().map(|f| f.1),
            capacity_target_ops_per_sec: found.as_ref().map(|f| f.0.target),
            capacity_achieved_range: found.as_ref().map(|f| f.2),
            capacity_tries: found.as_ref().map(|f| [f.0.tries.held, f.0.tries.missed]),
            bracket_ops_per_sec: found
                .as_ref()
                .map(|f| [f.0.target, f.0.failed.unwrap_or(f.0.target)]),
            plus_minus: found.as_ref().and_then(|f| f.0.plus_minus()),
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

/// What `--json FILE` writes.
#[derive(Serialize)]
struct CapacityReport<'a> {
    backend: String,
    workload: &'a [String],
    threads: usize,
    slos: Vec<String>,
    precision: f64,
    confirm: u32,
    probe_ops_per_sec: Option<f64>,
    steps: &'a [Verdict],
    /// Mean achieved rate of the steps at the capacity's target that held.
    capacity_ops_per_sec: Option<f64>,
    /// The highest target that held (in `1 + confirm` tries, missing at
    /// most one).
    capacity_target_ops_per_sec: Option<f64>,
    /// Lowest and highest achieved rate of those steps.
    capacity_achieved_range: Option<[f64; 2]>,
    /// Steps at that target that held and that missed.
    capacity_tries: Option<[u32; 2]>,
    /// The capacity's target and the lowest target that missed twice.
    bracket_ops_per_sec: Option<[f64; 2]>,
    /// Half that bracket over its middle: the search's resolution.
    plus_minus: Option<f64>,
}

/// Probe (unless a start is given), then ramp and bisect. Returns the
/// probe's rate, every step's verdict in the order run, and how many steps
/// were stored.
fn search(
    conns: &mut Connections<'_, '_>,
    plan: &Plan,
    settings: &Settings,
    stop: &StopHandle,
) -> Result<(Option<f64>, Vec<Verdict>, usize)> {
    let mut probe = None;
    let start = match settings.start {
        Some(s) => s,
        None => {
            let o = step(conns, plan, settings, None, 0)?.outcome;
            let rate = o.throughput();
            eprintln!("probe: {rate:.0} ops/s in closed loop; ramping from an eighth of it");
            probe = Some(rate);
            (rate / 8.0).max(1.0)
        }
    };
    let mut s = Search::new(start, 2.0, settings.precision, settings.confirm);
    let mut verdicts = Vec::new();
    let mut stored = 0;
    while let Some(target) = s.next_target() {
        if stop.is_stopped() {
            break;
        }
        let n = verdicts.len() + 1;
        let m = step(conns, plan, settings, Some(target), n)?;
        let v = capacity::judge(&m.outcome, target, &settings.slos, settings.max_error_rate);
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
        record(&mut s, &v);
        let next = s.next_target();
        let again = next == Some(target);
        eprintln!(
            "step {n:>2}: target {:>9}  achieved {:>9}  {}  {}{}",
            format_rate(target),
            format_rate(v.achieved),
            checks.join("  "),
            match &v.reason {
                None => "sustained".to_string(),
                Some(r) => format!("{}: {r}", v.word()),
            },
            match (v.too_few_operations, next, again, v.sustained) {
                (true, Some(_), _, _) => "; trying a higher target, whose steps hold more",
                (true, None, _, _) => "; stopping: a higher target would reach one that failed",
                (false, _, true, false) => "; trying it again (one miss may be a transient)",
                (false, _, true, true) => "; trying it again to confirm",
                _ => "",
            }
        );
        let mut verdict = BTreeMap::from([(SUSTAINED_LABEL.to_string(), v.sustained.to_string())]);
        if let Some(r) = &v.reason {
            verdict.insert("capacity_reason".to_string(), r.clone());
        }
        if m.finish(&verdict)?.store.is_some() {
            stored += 1;
        }
        verdicts.push(v);
    }
    Ok((probe, verdicts, stored))
}

/// Tell the search how a step went.
fn record(s: &mut Search, v: &Verdict) {
    if v.too_few_operations {
        s.record_too_few(v.target);
    } else {
        s.record(v.target, v.sustained);
    }
}

/// One step: open loop at `target` (closed loop when `None`, the probe,
/// which is not kept) for settle + step seconds, the settle period left
/// out of the measurement; step `n` of the search.
fn step<'s>(
    conns: &mut Connections<'_, 's>,
    plan: &Plan,
    settings: &Settings,
    target: Option<f64>,
    n: usize,
) -> Result<sojourn_session::Measured<'s>> {
    let run = RunConfig {
        groups: vec![Group::all(plan.run.workers(), target, None)],
        max_execution_time: Some(settings.settle + settings.step),
        warmup: settings.settle,
        // Intervals short enough that the settle period ends on a boundary.
        interval: Duration::from_millis(100),
        ..plan.run.clone()
    };
    conns.run(
        plan,
        PhaseSpec {
            record: target.is_some(),
            run: Some(run),
            labels: BTreeMap::from([(STEP_LABEL.to_string(), n.to_string())]),
            run_uri: Some(sojourn_store::new_run_uri()),
            ..PhaseSpec::default()
        },
    )
}
