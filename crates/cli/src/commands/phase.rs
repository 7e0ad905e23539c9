//! `sojourn load`, `run` and `bench`: validate every plan before the
//! database is touched, hand the phases to the session, and show each one
//! as it ends: YCSB's summary (or the JSON report) on stdout, the server's
//! figures and the warnings on stderr, the JSON report file. What a phase
//! is from start to finish is the session's.

use std::collections::BTreeMap;
use std::io::Write;
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use sojourn_core::output::json::JsonReport;
use sojourn_core::output::ycsb::Summary;
use sojourn_core::output::{Export, Warning};
use sojourn_core::plan::Plan;
use sojourn_core::workload::Phase;
use sojourn_session::{watch_ctrl_c, Measured, Session};

use crate::cli::{Format, PhaseArgs};
use crate::options::Options;
use crate::progress::Terminal;

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Mode {
    Load,
    Run,
    Bench,
}

pub fn main(args: PhaseArgs, mode: Mode) -> Result<ExitCode> {
    let opts = Options::new(args)?;
    if mode == Mode::Load {
        // Silently loading at full speed would leave the flag unapplied.
        for key in ["rate", "trace"] {
            if opts.props.get(key).is_some_and(|v| !v.trim().is_empty()) {
                bail!(
                    "{}: a rate profile or trace shapes a run phase; a load writes its records \
                     as fast as the database takes them (or at -target N). Use it with \
                     `sojourn run` or `sojourn bench`, whose load ignores it",
                    opts.props.describe(key)
                );
            }
        }
    }
    // Every plan is validated before the database is touched.
    let load = match mode {
        Mode::Load | Mode::Bench => Some(opts.plan(Phase::Load)?),
        Mode::Run => None,
    };
    let run = match mode {
        Mode::Run | Mode::Bench => Some(opts.plan(Phase::Run)?),
        Mode::Load => None,
    };
    let first = load.as_ref().or(run.as_ref()).context("no phase to run")?;
    for u in &first.unknown {
        eprintln!("warning: {}", Warning::UnknownProperty(u.clone()));
    }
    let drop = opts.props.get_bool("dropdata", false)?;
    if let Some(agents) = opts.agents {
        return super::fleet::main(&opts, agents, load.as_ref(), run.as_ref(), drop);
    }
    let store = opts.store.open(&opts.places)?;
    let show = Terminal {
        status: opts.status,
        progress: !opts.no_progress,
    };
    let stop = Default::default();
    let session = Session::new(store.as_ref(), opts.tags.clone(), &opts.props, stop, &show);
    // Sockets shared by connections are sized for the larger phase.
    let workers = [&load, &run]
        .into_iter()
        .flatten()
        .map(|p| p.run.workers())
        .max()
        .unwrap_or(1);
    let db = session.open_database(&opts.db_url, &opts.places.default_sqlite(), workers)?;
    watch_ctrl_c(session.stop().clone());
    let describe = db.describe().to_string();
    let bench = load.is_some() && run.is_some();
    let mut code = ExitCode::SUCCESS;
    db.load_and_run(load.as_ref(), run.as_ref(), drop, &mut |plan, m| {
        let interrupted = m.outcome.interrupted();
        if interrupted {
            code = ExitCode::from(130);
        }
        if bench && plan.phase == Phase::Load {
            loaded(&describe, plan, m)?;
        } else {
            report(m, &opts)?;
        }
        Ok(!interrupted)
    })?;
    Ok(code)
}

/// `bench` says what it loaded (in the workload's units: records, or
/// LIOPS rows, which load in batches) and goes on to the run.
fn loaded(describe: &str, plan: &Plan, m: Measured<'_>) -> Result<()> {
    let o = &m.outcome;
    let loaded = plan.workload.loaded(o.all.ops_done);
    let secs = o.elapsed.as_secs_f64();
    eprintln!(
        "loaded {loaded} into {describe} in {secs:.2} s ({:.0} {}/s)",
        loaded.count as f64 / secs.max(1e-9),
        loaded.unit
    );
    if let Some(s) = &o.server {
        eprintln!("server: {}", s.digest());
    }
    for w in &m.warnings {
        eprintln!("warning: {w}");
    }
    recorded(m)
}

/// Print the summary and warnings, write the JSON report, then store the
/// totals: whatever fails, what was measured is printed first and stored.
fn report(m: Measured<'_>, opts: &Options) -> Result<()> {
    let printed = print_report(&m, opts);
    let stored = recorded(m);
    printed.and(stored)
}

/// Store the phase's totals and say where.
fn recorded(m: Measured<'_>) -> Result<()> {
    let done = m.finish(&BTreeMap::new())?;
    if let (Some(id), Some(store)) = (done.run_id, done.store) {
        eprintln!("recorded as run {id} in {store}");
    }
    Ok(())
}

fn print_report(m: &Measured<'_>, opts: &Options) -> Result<()> {
    let runs = [m.record()];
    let format: &dyn Export = match opts.format {
        Format::Text => &Summary,
        Format::Json => &JsonReport,
    };
    // The summary goes out first: a failure to write the JSON file must not
    // lose what was measured.
    let mut stdout = std::io::stdout().lock();
    format.write(&runs, &mut stdout)?;
    stdout.flush()?;
    // Not in the summary itself: stdout stays the lines YCSB prints, for
    // the parsers that read it (PerfKitBenchmarker's).
    if let Some(s) = &m.outcome.server {
        eprintln!("server: {}", s.digest());
    }
    for w in &m.warnings {
        eprintln!("warning: {w}");
    }
    if let Some(path) = &opts.json {
        let mut text = Vec::new();
        JsonReport.write(&runs, &mut text)?;
        std::fs::write(path, text)
            .with_context(|| format!("writing the JSON report to {}", path.display()))?;
    }
    Ok(())
}
