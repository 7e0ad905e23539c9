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
use sojourn_core::capacity::{self, format_rate, Search, SearchResult, Slo, StepFigures, Verdict};
use sojourn_core::executor::{Group, RunConfig, StopHandle};
use sojourn_core::output::Warning;
use sojourn_core::plan::Plan;
use sojourn_core::workload::Phase;
use sojourn_report::run::{SESSION_LABEL, SLOS_LABEL, STEP_LABEL, SUSTAINED_LABEL};
use sojourn_session::fleet::{Coordinator, Setup};
use sojourn_session::{watch_ctrl_c, Connections, PhaseSpec, Session};
use sojourn_store::RunRecord;

use crate::cli::CapacityArgs;
use crate::fleet;
use crate::options::{Agents, Options};

/// The search's settings, validated.
struct Settings {
    slos: Vec<Slo>,
    start: Option<f64>,
    step: Duration,
    settle: Duration,
    precision: f64,
    max_error_rate: f64,
    confirm: u32,
    /// `-p max_error_rate`: a step past it fails the whole search (its
    /// operations fail, whatever the rate).
    phase_max_error_rate: Option<f64>,
    /// The workload's misses are answers (see `Kind::misses_are_answers`).
    misses_are_answers: bool,
}

fn seconds(flag: &str, v: f64, min: f64) -> Result<Duration> {
    if !(v.is_finite() && v >= min && v <= 86_400.0) {
        bail!("{flag} {v}: expected a number of seconds from {min} to 86400");
    }
    Ok(Duration::from_secs_f64(v))
}

pub fn main(a: CapacityArgs) -> Result<ExitCode> {
    let settings = Settings::from_args(&a)?;
    if a.phase.repeat.is_some_and(|n| n > 1) {
        bail!(
            "`sojourn capacity` tries each step again itself (--confirm); --repeat repeats a \
             run (`sojourn run --repeat N`)"
        );
    }
    let opts = Options::new(a.phase)?;
    let plan = opts.plan(Phase::Run)?;
    let settings = Settings {
        // After the plan: a workload's own kinds (a template's `GET`) are
        // named by then.
        slos: capacity::parse_slos(&a.slo).map_err(anyhow::Error::msg)?,
        phase_max_error_rate: plan.max_error_rate,
        misses_are_answers: plan.workload.misses_are_answers(),
        ..settings
    };
    if plan.run.shaped() {
        bail!(
            "`sojourn capacity` sets each step's rate itself: leave --rate and --trace out, or \
             run the profile with `sojourn run` (-p rate.slo=... stops a staircase at the first \
             step that misses)"
        );
    }
    if let Some(why) = plan.workload.capacity_refusal() {
        bail!("`sojourn capacity` runs the YCSB core workload only; {why}");
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
    let searched = match opts.agents {
        Some(agents) => on_agents(
            &opts,
            agents,
            &plan,
            load.as_ref(),
            &settings,
            &tags,
            &slo_text,
        )?,
        None => here(&opts, &plan, load, &settings, tags, &slo_text)?,
    };
    let steps = &searched.steps;
    let mut by_target = steps.clone();
    by_target.sort_by(|a, b| a.target.total_cmp(&b.target));
    print_curve(&by_target, &slo_text);
    let mut s = Search::new(1.0, 2.0, settings.precision, settings.confirm);
    for v in steps {
        record(&mut s, v);
    }
    let result = s.result();
    let found = result.as_ref().map(|r| Found::of(r, steps));
    print_capacity(found.as_ref(), &by_target, &slo_text);
    if let (Some(location), true) = (&searched.location, searched.stored > 0) {
        eprintln!(
            "recorded {} steps as capacity session {capacity_session} in {location}; \
             `sojourn report {capacity_session} -o report.html` plots them",
            searched.stored
        );
    }
    if let Some(path) = &opts.json {
        let report = CapacityReport {
            backend: searched.describe.clone(),
            workload: &opts.tags.workloads,
            threads: plan.run.workers(),
            slos: slo_text,
            precision: settings.precision,
            confirm: settings.confirm,
            probe_ops_per_sec: searched.probe,
            steps,
            capacity_ops_per_sec: found.as_ref().map(|f| f.mean),
            capacity_target_ops_per_sec: found.as_ref().map(|f| f.result.target),
            capacity_achieved_range: found.as_ref().map(|f| f.range),
            capacity_tries: found
                .as_ref()
                .map(|f| [f.result.tries.held, f.result.tries.missed]),
            bracket_ops_per_sec: found
                .as_ref()
                .map(|f| [f.result.target, f.result.failed.unwrap_or(f.result.target)]),
            plus_minus: found.as_ref().and_then(|f| f.result.plus_minus()),
        };
        std::fs::write(path, serde_json::to_string_pretty(&report)? + "\n")
            .with_context(|| format!("writing {}", path.display()))?;
    }
    if searched.stop.is_stopped() {
        return Ok(ExitCode::from(130));
    }
    match steps
        .iter()
        .enumerate()
        .find(|(_, v)| v.phase_failed.is_some())
    {
        Some((i, v)) => bail!(
            "step {} (target {}): {}",
            i + 1,
            format_rate(v.target),
            v.phase_failed.as_deref().unwrap_or_default()
        ),
        None => Ok(ExitCode::SUCCESS),
    }
}

impl Settings {
    /// The flags' settings; the SLOs and what the plan says come later.
    fn from_args(a: &CapacityArgs) -> Result<Settings> {
        Ok(Settings {
            slos: Vec::new(),
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
                p => bail!(
                    "--precision {p}: expected a fraction above 0 and below 0.5 (0.05 = +-5%)"
                ),
            },
            max_error_rate: match a.max_error_rate {
                r if (0.0..=1.0).contains(&r) => r,
                r => bail!("--max-error-rate {r}: expected a fraction from 0 to 1"),
            },
            confirm: match a.confirm {
                n @ 0..=20 => n,
                n => bail!("--confirm {n}: expected 0 to 20 further tries of the capacity found"),
            },
            phase_max_error_rate: None,
            misses_are_answers: false,
        })
    }
}

/// The latency-throughput curve: a line per step, by target.
fn print_curve(by_target: &[Verdict], slo_text: &[String]) {
    println!();
    println!("latency-throughput curve (response time, 95% CI):");
    print!("{:>10} {:>10}", "target", "achieved");
    for slo in slo_text {
        print!(" {:>28}", slo);
    }
    println!("  verdict");
    for v in by_target {
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
}

/// The capacity the search found: what the database served in the steps
/// at the target that held (a target a few percent above it can pass a
/// step).
struct Found<'r> {
    result: &'r SearchResult,
    mean: f64,
    /// The lowest and highest of those steps' throughputs.
    range: [f64; 2],
}

impl<'r> Found<'r> {
    fn of(result: &'r SearchResult, steps: &[Verdict]) -> Found<'r> {
        let achieved: Vec<f64> = steps
            .iter()
            .filter(|v| v.sustained && v.target == result.target)
            .map(|v| v.achieved)
            .collect();
        let mean = achieved.iter().sum::<f64>() / achieved.len().max(1) as f64;
        let lo = achieved.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = achieved.iter().copied().fold(0.0, f64::max);
        Found {
            result,
            mean,
            range: [lo, hi],
        }
    }
}

/// The result line: the capacity and how sure it is, or why there is none.
fn print_capacity(found: Option<&Found<'_>>, by_target: &[Verdict], slo_text: &[String]) {
    // Steps too short for their SLO's percentile: where the search ended
    // in them, its result says so.
    let too_few: Vec<f64> = by_target
        .iter()
        .filter(|v| v.too_few_operations)
        .map(|v| v.target)
        .collect();
    let lengthen = || {
        let needed = by_target
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
    let lowest = format_rate(by_target.first().map_or(0.0, |v| v.target));
    let Some(f) = found else {
        match too_few.is_empty() {
            false => println!(
                "capacity: no step could be judged, down to {lowest} ops/s: the {}",
                lengthen()
            ),
            true => println!(
                "capacity: no step was sustained, down to {lowest} ops/s; the SLOs may be out \
                 of reach"
            ),
        }
        return;
    };
    let r = f.result;
    println!(
        "capacity: {} ops/s sustained under {} (target {} held in {} of {} \
         tries, achieving {} to {} ops/s; {})",
        format_rate(f.mean),
        slo_text.join(", "),
        format_rate(r.target),
        r.tries.held,
        r.tries.held + r.tries.missed,
        format_rate(f.range[0]),
        format_rate(f.range[1]),
        match (r.failed, r.plus_minus()) {
            (Some(b), _) if too_few.contains(&b) => format!(
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
            _ => "no target missed: the search stopped before finding an upper bound".to_string(),
        }
    );
}

/// What a search found, wherever it ran.
struct Searched {
    /// The database, for messages.
    describe: String,
    probe: Option<f64>,
    /// Every step's verdict, in the order run.
    steps: Vec<Verdict>,
    /// Steps kept in the store.
    stored: usize,
    /// Where they were kept, password-free.
    location: Option<String>,
    stop: StopHandle,
}

/// The search on this machine's connections.
fn here(
    opts: &Options,
    plan: &Plan,
    load: Option<Plan>,
    settings: &Settings,
    tags: sojourn_session::RunTags,
    slo_text: &[String],
) -> Result<Searched> {
    let store = opts.store.open(&opts.places)?;
    let stop = StopHandle::new();
    // Each step's frame is cleared when it ends: the step's line says
    // what it found, and the curve grows in the next step's frame.
    let terminal = crate::progress::Terminal::new(&opts.live, false, &stop, false)?;
    let show = crate::progress::WatchOnly(&terminal);
    let session = Session::new(store.as_ref(), tags, &opts.props, stop, &show);
    let db = session.open_database(
        &opts.db_url,
        &opts.places.default_sqlite(),
        plan.run.workers(),
    )?;
    let describe = db.describe().to_string();
    let empty = db.is_empty(plan)? == Some(true);
    let load = load.filter(|_| empty);
    if empty && load.is_none() {
        bail!(
            "{describe} holds no data for {}: run `sojourn load` with the same workload first, \
             or pass --load",
            plan.workload.what(&plan.schema)
        );
    }
    if load.is_some() {
        db.prepare(plan, false)?;
    }
    let stop = session.stop().clone();
    watch_ctrl_c(stop.clone());
    announce(&describe, slo_text, plan.run.workers(), settings);
    let (probe, steps, stored) = db.connect(plan, |conns| {
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
        let mut stepper = Here {
            conns,
            plan,
            settings,
        };
        search(&mut stepper, settings, &stop)
    })?;
    Ok(Searched {
        describe,
        probe,
        steps,
        stored,
        location: store.map(|s| s.location().to_string()),
        stop,
    })
}

fn announce(describe: &str, slo_text: &[String], connections: usize, settings: &Settings) {
    eprintln!(
        "capacity of {describe} under {} with {connections} connections; steps of {:.1} s after {:.1} s to settle",
        slo_text.join(", "),
        settings.step.as_secs_f64(),
        settings.settle.as_secs_f64()
    );
}

/// The search on agents: each step a phase of theirs, judged merged.
fn on_agents(
    opts: &Options,
    agents: Agents,
    plan: &Plan,
    load: Option<&Plan>,
    settings: &Settings,
    tags: &sojourn_session::RunTags,
    slo_text: &[String],
) -> Result<Searched> {
    let location = fleet::shared_store(opts)?;
    let records = sojourn_session::open_store(&opts.places, &location)?;
    let store = records.store().context("the results store did not open")?;
    store.require_shared()?;
    let stop = StopHandle::new();
    watch_ctrl_c(stop.clone());
    let show = crate::progress::Terminal::quiet();
    let coordinator = Coordinator {
        store,
        wait: agents.wait,
        stop: &stop,
        show: &show,
    };
    let describe = sojourn_core::redact::redact_url(&opts.db_url);
    if let Some(load) = load {
        let setup = Setup::Load {
            drop: false,
            skip_if_data: true,
        };
        let posting = fleet::posting(
            opts,
            load,
            agents.count,
            &sojourn_store::new_run_uri(),
            0,
            setup,
            &location,
            &fleet::Extra::default(),
        )?;
        let g = coordinator.run(&posting)?;
        match (&g.skipped, &g.merged) {
            (Some(why), _) => eprintln!("{why}; not loading"),
            (None, Some(m)) => eprintln!(
                "loaded {} by {} agents",
                load.workload
                    .loaded(m.summary.totals.as_ref().map_or(0, |t| t.operations)),
                g.runs.len()
            ),
            (None, None) => bail!("the load recorded nothing: {}", g.missing.join("; ")),
        }
    }
    announce(
        &describe,
        slo_text,
        plan.run.workers() * agents.count as usize,
        settings,
    );
    let mut stepper = OnAgents {
        coordinator: &coordinator,
        opts,
        agents,
        location: &location,
        settings,
        labels: tags.labels.clone(),
    };
    let (probe, steps, stored) = search(&mut stepper, settings, &stop)?;
    Ok(Searched {
        describe,
        probe,
        steps,
        stored,
        location: Some(store.location().to_string()),
        stop,
    })
}

/// The steps on agents.
struct OnAgents<'a> {
    coordinator: &'a Coordinator<'a>,
    opts: &'a Options,
    agents: Agents,
    location: &'a str,
    settings: &'a Settings,
    /// The session's labels (session id, SLOs), for every step.
    labels: BTreeMap<String, String>,
}

impl OnAgents<'_> {
    /// One step on the agents, merged: `target` in total (none: the
    /// closed-loop probe), settle + step seconds, the settle period left
    /// out of the measurement.
    fn run(&self, target: Option<f64>, labels: BTreeMap<String, String>) -> Result<RunRecord> {
        let s = self.settings;
        let mut settings = vec![
            ("operationcount".to_string(), "0".to_string()),
            (
                "maxexecutiontime".to_string(),
                (s.settle + s.step).as_secs_f64().to_string(),
            ),
            ("warmup".to_string(), s.settle.as_secs_f64().to_string()),
            (
                "timeseries.interval".to_string(),
                STEP_INTERVAL.as_secs_f64().to_string(),
            ),
        ];
        if let Some(t) = target {
            settings.push(("target".to_string(), t.to_string()));
        }
        let mut props = self.opts.props.clone();
        for (k, v) in &settings {
            props.set(
                k,
                v,
                sojourn_core::properties::Origin::Flag("capacity step"),
            );
        }
        let plan =
            Plan::from_properties(&props, Phase::Run, sojourn_backends::property_prefixes())?;
        let extra = fleet::Extra { settings, labels };
        let posting = fleet::posting(
            self.opts,
            &plan,
            self.agents.count,
            &sojourn_store::new_run_uri(),
            0,
            Setup::Run,
            self.location,
            &extra,
        )?;
        let g = self.coordinator.run(&posting)?;
        if !g.missing.is_empty() {
            bail!("a step ran without every agent: {}", g.missing.join("; "));
        }
        g.merged.context("the step recorded nothing")
    }
}

impl Stepper for OnAgents<'_> {
    fn probe(&mut self) -> Result<f64> {
        // Not a step of the session: no session label, so its report
        // leaves it out.
        let m = self.run(None, BTreeMap::new())?;
        Ok(StepFigures::from(&m).achieved)
    }

    fn step(&mut self, target: f64, n: usize, judge: Judge<'_>) -> Result<(Verdict, bool)> {
        let mut labels = self.labels.clone();
        labels.insert(STEP_LABEL.to_string(), n.to_string());
        let merged = self.run(Some(target), labels)?;
        let v = judge((&merged).into());
        let store = self.coordinator.store;
        let verdict = verdict_labels(&v);
        let m = merged.meta();
        for id in store.resolve_all(&format!("{}/{}", m.run_uri, m.stage_index))? {
            store.add_labels(&id, &verdict)?;
        }
        Ok((v, true))
    }
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

/// How a step's figures are judged against the SLOs.
type Judge<'a> = &'a dyn Fn(StepFigures<'_>) -> Verdict;

/// Runs the search's steps and keeps each: here on one pool of
/// connections, or on agents.
trait Stepper {
    /// The closed-loop rate of one step's length (not kept as a step).
    fn probe(&mut self) -> Result<f64>;

    /// Step `n` at `target`, judged by `judge` and kept with its verdict
    /// labels; the verdict, and whether the step was stored.
    fn step(&mut self, target: f64, n: usize, judge: Judge<'_>) -> Result<(Verdict, bool)>;
}

/// The labels a judged step is kept with.
fn verdict_labels(v: &Verdict) -> BTreeMap<String, String> {
    let mut labels = BTreeMap::from([(SUSTAINED_LABEL.to_string(), v.sustained.to_string())]);
    if let Some(r) = &v.reason {
        labels.insert("capacity_reason".to_string(), r.clone());
    }
    labels
}

/// Probe (unless a start is given), then ramp and bisect. Returns the
/// probe's rate, every step's verdict in the order run, and how many steps
/// were stored.
fn search(
    stepper: &mut dyn Stepper,
    settings: &Settings,
    stop: &StopHandle,
) -> Result<(Option<f64>, Vec<Verdict>, usize)> {
    let mut probe = None;
    let start = match settings.start {
        Some(s) => s,
        None => {
            let rate = stepper.probe()?;
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
        let judge = |f: StepFigures<'_>| {
            // A cache's misses are answers: timed and counted as such.
            let answered = settings.misses_are_answers.then(|| {
                let mut t = f.total.clone();
                t.count_misses_as_answers();
                t
            });
            let f = StepFigures {
                total: answered.as_ref().unwrap_or(f.total),
                ..f
            };
            let mut v = capacity::judge(f, target, &settings.slos, settings.max_error_rate);
            v.phase_failed = f
                .total
                .too_many_failed(settings.phase_max_error_rate)
                .map(|t| t.to_string());
            v
        };
        let (v, kept) = stepper.step(target, n, &judge)?;
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
        if kept {
            stored += 1;
        }
        // Operations that fail at one rate fail at the others: the search
        // ends here, and the command with status 1 once all is shown.
        let failed = v.phase_failed.is_some();
        verdicts.push(v);
        if failed {
            break;
        }
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

/// The steps on this machine's connections.
struct Here<'c, 'x, 's> {
    conns: &'c mut Connections<'x, 's>,
    plan: &'c Plan,
    settings: &'c Settings,
}

impl<'s> Here<'_, '_, 's> {
    /// One step: open loop at `target` (closed loop when `None`, the
    /// probe, which is not kept) for settle + step seconds, the settle
    /// period left out of the measurement; step `n` of the search.
    fn run(&mut self, target: Option<f64>, n: usize) -> Result<sojourn_session::Measured<'s>> {
        let (plan, settings) = (self.plan, self.settings);
        let run = RunConfig {
            groups: vec![Group::all(plan.run.workers(), target, None)],
            max_execution_time: Some(settings.settle + settings.step),
            warmup: settings.settle,
            // Intervals short enough that the settle period ends on a boundary.
            interval: STEP_INTERVAL,
            ..plan.run.clone()
        };
        self.conns.run(
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
}

impl Stepper for Here<'_, '_, '_> {
    fn probe(&mut self) -> Result<f64> {
        Ok(self.run(None, 0)?.outcome.throughput())
    }

    fn step(&mut self, target: f64, n: usize, judge: Judge<'_>) -> Result<(Verdict, bool)> {
        let m = self.run(Some(target), n)?;
        let v = judge((&m.outcome).into());
        let kept = m.finish(&verdict_labels(&v))?.store.is_some();
        Ok((v, kept))
    }
}

/// A step's time series: intervals short enough that the settle period
/// ends on a boundary.
const STEP_INTERVAL: Duration = Duration::from_millis(100);
