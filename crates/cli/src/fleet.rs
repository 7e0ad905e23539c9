//! `load`, `run` and `bench` with `--agents N`: the command coordinates.
//! It cuts each phase into N shares as PerfKitBenchmarker cuts a benchmark
//! over its client VMs (disjoint key ranges for a load, the operation
//! count and `-target` as totals split over the agents, a seed each, and
//! what the workload cuts itself, such as TPC-C's warehouses; `-threads`
//! stays per agent, as it is per client VM), posts them in the shared
//! store, prints the merged summary as `run` prints its own, and then does
//! what the workload does once every share is done (TPC-C's check). The
//! rest is the session's (`sojourn_session::fleet`).

use std::collections::BTreeMap;
use std::io::Write;
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use sojourn_core::executor::StopHandle;
use sojourn_core::output::json::JsonReport;
use sojourn_core::output::Export;
use sojourn_core::plan::Plan;
use sojourn_core::properties::Origin;
use sojourn_core::redact;
use sojourn_core::workload::{Phase, Workload};
use sojourn_session::fleet::{AgentShare, Coordinator, Gathered, Posting, Setup, Skew};
use sojourn_session::share::{split, split_rate, Recipe, ShareSpec};
use sojourn_session::{open_store, watch_ctrl_c, RunTags, Session, StoreChoice};
use sojourn_store::RunRecord;

use crate::options::{Agents, Options};
use crate::progress::Terminal;

/// Run the phases on the agents.
pub fn main(
    opts: &Options,
    agents: Agents,
    load: Option<&Plan>,
    run: Option<&Plan>,
    drop: bool,
) -> Result<ExitCode> {
    let location = shared_store(opts)?;
    let records = open_store(&opts.places, &location)?;
    let store = records.store().context("the results store did not open")?;
    store.require_shared()?;
    let show = Terminal::quiet();
    let stop = StopHandle::new();
    watch_ctrl_c(stop.clone());
    let coordinator = Coordinator {
        store,
        wait: agents.wait,
        stop: &stop,
        show: &show,
    };
    let run_uri = opts.tags.run_uri.clone();
    let bench = load.is_some() && run.is_some();
    let mut code = ExitCode::SUCCESS;
    let mut loaded = false;
    if let Some(plan) = load {
        let setup = Setup::Load {
            drop,
            skip_if_data: bench,
        };
        let posting = posting(
            opts,
            plan,
            agents.count,
            &run_uri,
            0,
            setup,
            &location,
            &Extra::default(),
        )?;
        let g = coordinator.run(&posting)?;
        match &g.skipped {
            Some(why) => eprintln!("{why}; skipping load"),
            None => {
                loaded = true;
                code = present(opts, &location, plan, &g, !bench)?;
                if code == ExitCode::SUCCESS {
                    after_shares(opts, plan, agents.count, &stop)?;
                }
            }
        }
        if stop.is_stopped() || code != ExitCode::SUCCESS {
            return Ok(code);
        }
    }
    if let Some(plan) = run {
        let stage = u32::from(loaded || (bench && load.is_some()));
        let posting = posting(
            opts,
            plan,
            agents.count,
            &run_uri,
            stage,
            Setup::Run,
            &location,
            &Extra::default(),
        )?;
        let g = coordinator.run(&posting)?;
        code = present(opts, &location, plan, &g, true)?;
        if code == ExitCode::SUCCESS {
            after_shares(opts, plan, agents.count, &stop)?;
        }
    }
    Ok(code)
}

/// What the workload does to its tables once every share of a phase is
/// done and stored: a load's finishing (TPC-C's statistics) where agents
/// cut it, and the check of a phase (TPC-C's consistency conditions).
/// Done here, on a connection of this machine's: no agent knows when the
/// others are done.
fn after_shares(opts: &Options, plan: &Plan, n: u32, stop: &StopHandle) -> Result<()> {
    let finish = plan.phase == Phase::Load && n > 1 && plan.workload.after_load().is_some();
    let check = plan.workload.after_phase(plan.phase).is_some();
    if !finish && !check {
        return Ok(());
    }
    let show = Terminal::quiet();
    let session = Session::new(
        None,
        RunTags::new(Vec::new()),
        &opts.props,
        stop.clone(),
        &show,
    );
    let db = session.open_database(&opts.db_url, &opts.places.default_sqlite(), 1)?;
    if finish {
        db.finish_load(plan)?;
    }
    db.verify(plan)
}

/// What a caller adds to the command line's workload for one phase:
/// settings (a capacity step's target and length) and labels.
#[derive(Default)]
pub struct Extra {
    pub settings: Vec<(String, String)>,
    pub labels: BTreeMap<String, String>,
}

/// Refuse a database that lives on this machine only: no agent
/// elsewhere reaches it.
pub fn reachable(db_url: &str) -> Result<()> {
    if sojourn_backends::is_local(db_url) {
        bail!(
            "--agents: {} lives on one machine, which agents elsewhere cannot reach; give a \
             database server every agent reaches (--db postgres://..., mysql://..., \
             redis://..., memcached://..., cassandra://...)",
            redact::redact_url(db_url)
        );
    }
    Ok(())
}

/// What an agent is sent of a recipe: no secret setting (agents take
/// passwords from their environment), no password in any URL.
pub fn for_agents(recipe: &Recipe) -> Recipe {
    Recipe {
        files: recipe.files.clone(),
        settings: recipe
            .settings
            .iter()
            .filter(|s| !redact::is_secret_key(&s.key))
            .map(|s| sojourn_session::share::Setting {
                key: s.key.clone(),
                value: redact::without_password(&s.value),
                origin: s.origin.clone(),
            })
            .collect(),
    }
}

/// The shared store `--agents` needs (`--results postgres://...`), after
/// refusing a database that lives on this machine only.
pub fn shared_store(opts: &Options) -> Result<String> {
    reachable(&opts.db_url)?;
    match &opts.store {
        StoreChoice::Named(url) if url.contains("://") => Ok(url.clone()),
        _ => bail!(
            "--agents: agents meet through a PostgreSQL results store every machine reaches: \
             give --results postgres://USER@HOST/DB (its password in \
             $SOJOURN_RESULTS_PASSWORD), the store the agents were started with"
        ),
    }
}

/// The phase's shares, one per agent.
#[allow(clippy::too_many_arguments)]
pub fn posting(
    opts: &Options,
    plan: &Plan,
    n: u32,
    run_uri: &str,
    stage_index: u32,
    setup: Setup,
    results: &str,
    extra: &Extra,
) -> Result<Posting> {
    if n > 1 {
        if let Some(why) = plan.workload.one_client_only(plan.phase) {
            bail!("--agents {n}: {why}; use --agents 1");
        }
    }
    let mut base = recipe(opts);
    for (k, v) in &extra.settings {
        base.set(k, v.clone(), "the command");
    }
    let seed = plan.run.seed;
    let origin = |i: usize| format!("--agents {n}: share {i} of {n}");
    // A load's key range, cut as PKB cuts it.
    let mut ranges = None;
    if let (Phase::Load, Workload::Core(cfg)) = (plan.phase, &plan.workload) {
        let mut start = cfg.insert_start;
        ranges = Some(
            split(cfg.insert_count, u64::from(n))
                .into_iter()
                .map(|count| {
                    let r = (start, count);
                    start += count;
                    r
                })
                .collect::<Vec<_>>(),
        );
    }
    // The key-value workload's pools count on their own (num_reads,
    // num_writes) and refuse an operationcount; it runs on one agent.
    let counts = plan
        .run
        .operation_count()
        .filter(|_| plan.phase == Phase::Run && !matches!(plan.workload, Workload::KeyValue(_)))
        .map(|c| split(c, u64::from(n)));
    // A profile or trace is shared by scaling, not by a constant target.
    let shaped = plan.run.shaped();
    let targets = plan
        .run
        .target()
        .filter(|_| !shaped)
        .map(|t| split_rate(t, u64::from(n)));
    let mut shares = Vec::new();
    for i in 0..n as usize {
        let mut r = base.clone();
        let why = origin(i);
        if let Some(ranges) = &ranges {
            r.set("insertstart", ranges[i].0.to_string(), &why);
            r.set("insertcount", ranges[i].1.to_string(), &why);
        }
        if let Some(counts) = &counts {
            r.set("operationcount", counts[i].to_string(), &why);
        }
        if let Some(t) = &targets {
            r.set("target", t[i].to_string(), &why);
        }
        if shaped && n > 1 {
            r.set("rate.share", format!("{i}/{n}"), &why);
        }
        r.set("seed", seed.wrapping_add(i as u64).to_string(), &why);
        let connections = plan.run.workers() as u64;
        for (k, v) in plan.workload.share_properties(i as u32, n, connections) {
            r.set(&k, v, &why);
        }
        let mut labels = opts.tags.labels.clone();
        labels.extend(extra.labels.clone());
        labels.insert("agents".into(), n.to_string());
        let share = ShareSpec {
            phase: plan.phase.name().to_string(),
            recipe: r,
            db_url: redact::without_password(&opts.db_url),
            default_sqlite: opts.places.default_sqlite(),
            results: redact::redact_url(results),
            labels,
            run_uri: run_uri.to_string(),
            stage_index,
            client_index: i as u32,
            client_count: n,
            command_line: opts.tags.command_line.clone(),
            workloads: opts.tags.workloads.clone(),
            spool_dirs: Vec::new(),
        };
        shares.push(AgentShare {
            share,
            setup: (i == 0).then_some(setup),
            finish_load: n == 1 && plan.phase == Phase::Load,
        });
    }
    // Every share must plan as this command planned it.
    for s in &shares {
        s.share
            .plan()
            .with_context(|| format!("share {} of {n}", s.share.client_index))?;
    }
    Ok(Posting {
        run_uri: run_uri.to_string(),
        stage_index,
        phase: plan.phase,
        shares,
    })
}

/// The command line's workload: its files' contents, then what `-p` and
/// the flags set, secrets left out (agents take passwords from their
/// environment) and URLs without their passwords.
fn recipe(opts: &Options) -> Recipe {
    let mut r = Recipe {
        files: opts.files.clone(),
        settings: Vec::new(),
    };
    for (key, entry) in opts.props.iter() {
        if !matches!(entry.origin, Origin::CommandLine | Origin::Flag(_))
            || redact::is_secret_key(key)
        {
            continue;
        }
        r.set(
            key,
            redact::without_password(&entry.value),
            &entry.origin.to_string(),
        );
    }
    r
}

/// Print a gathered phase as `run` prints one (the YCSB summary, or the
/// JSON report, on stdout; the server's figures, warnings and where the
/// runs went on stderr). A phase with shares missing fails the command
/// after its summary, naming them.
fn present(
    opts: &Options,
    location: &str,
    plan: &Plan,
    g: &Gathered,
    summary: bool,
) -> Result<ExitCode> {
    let Some(merged) = &g.merged else {
        bail!(
            "{} phase: no agent recorded a run: {}",
            plan.phase.name(),
            g.missing.join("; ")
        );
    };
    let mut warnings = merged.warnings.clone();
    let interval = plan.run.interval;
    let length = merged
        .summary
        .totals
        .as_ref()
        .map_or(interval, |t| t.elapsed);
    warnings.extend(Skew::of(&g.shares).warning(interval, length));
    if summary {
        print_merged(opts, merged)?;
    } else {
        let ops = merged.summary.totals.as_ref().map_or(0, |t| t.operations);
        eprintln!(
            "loaded {} into {} by {} agents",
            plan.workload.loaded(ops),
            merged.meta().backend,
            g.shares.len()
        );
    }
    if let Some(s) = &merged.server {
        eprintln!("server: {}", s.digest());
    }
    for w in &warnings {
        eprintln!("warning: {w}");
    }
    let m = merged.meta();
    eprintln!(
        "recorded as {}/{} ({} agent run{}) in {}",
        m.run_uri,
        m.stage_index,
        g.runs.len(),
        if g.runs.len() == 1 { "" } else { "s" },
        redact::redact_url(location)
    );
    if !g.missing.is_empty() {
        bail!(
            "{} phase is partial: {}",
            plan.phase.name(),
            g.missing.join("; ")
        );
    }
    // Interrupted says more than failed, as for a run on one machine:
    // the user stopped it, and its failures are in the warnings above.
    if merged.summary.status == sojourn_store::RunStatus::Interrupted {
        return Ok(ExitCode::from(130));
    }
    if let Some(f) = plan.too_many_failed(&merged.total) {
        return Err(anyhow::Error::new(f).context(format!("{} phase", plan.phase.name())));
    }
    Ok(ExitCode::SUCCESS)
}

fn print_merged(opts: &Options, merged: &RunRecord) -> Result<()> {
    let runs = std::slice::from_ref(merged);
    let mut out = std::io::stdout().lock();
    opts.format.export().write(runs, &mut out)?;
    out.flush()?;
    if let Some(path) = &opts.json {
        let mut text = Vec::new();
        JsonReport.write(runs, &mut text)?;
        std::fs::write(path, text)
            .with_context(|| format!("writing the JSON report to {}", path.display()))?;
    }
    Ok(())
}
