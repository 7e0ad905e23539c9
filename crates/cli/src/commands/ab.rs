//! `sojourn ab`: two configurations of one run, alternated A B A B ... so
//! that whatever drifts on the machine (its other load, its caches, the
//! database's state) falls on both sides equally, each recorded as a group
//! of repetitions, then compared across repetitions (see
//! `sojourn_report::groups`).

use std::process::ExitCode;

use anyhow::{bail, Result};
use sojourn_core::workload::Phase;
use sojourn_report::groups::{self, GroupOptions, MIN_REPETITIONS};
use sojourn_session::{watch_ctrl_c, Session};

use crate::cli::{AbArgs, Format};
use crate::options::Options;
use crate::pipeline::RepeatGroup;
use crate::progress::Terminal;

/// The shared arguments plus one side's properties, labelled with the side.
fn side(a: &AbArgs, name: &str, props: &[String]) -> Result<Options> {
    let mut args = a.phase.clone();
    args.repeat = None;
    args.props.extend(props.iter().cloned());
    args.labels.push(format!("ab_side={name}"));
    Options::new(args)
}

pub fn main(a: AbArgs) -> Result<ExitCode> {
    let n = a.phase.repeat.unwrap_or(5);
    if n == 0 || n > 1000 {
        bail!("--repeat {n}: expected 1 to 1000 repetitions of each side");
    }
    if n < MIN_REPETITIONS as u32 {
        eprintln!(
            "warning: --repeat {n}: at least {MIN_REPETITIONS} repetitions of each side are \
             needed to mark a difference"
        );
    }
    if a.phase.agents.is_some() || a.phase.run_uri.is_some() {
        bail!("ab: each repetition is a run of its own here; leave out --agents and --run-uri");
    }
    let opts = [side(&a, "A", &a.a)?, side(&a, "B", &a.b)?];
    let plans = [opts[0].plan(Phase::Run)?, opts[1].plan(Phase::Run)?];
    let store = opts[0].store.open(&opts[0].places)?;
    let stop = sojourn_core::executor::StopHandle::new();
    watch_ctrl_c(stop.clone());
    let show = Terminal::new(&opts[0].live, opts[0].format == Format::Json, &stop, true)?;
    let sessions: Vec<Session<'_>> = opts
        .iter()
        .map(|o| {
            Session::new(
                store.as_ref(),
                o.tags.clone(),
                &o.props,
                stop.clone(),
                &show,
            )
        })
        .collect();
    let dbs = sessions
        .iter()
        .zip(&opts)
        .zip(&plans)
        .map(|((s, o), p)| s.open_database(&o.db_url, &o.places.default_sqlite(), p.run.workers()))
        .collect::<Result<Vec<_>>>()?;
    for (db, plan) in dbs.iter().zip(&plans) {
        db.check_tables(None, Some(plan), false)?;
    }
    let mut group = [RepeatGroup::new(n), RepeatGroup::new(n)];
    let mut code = ExitCode::SUCCESS;
    'reps: for i in 0..n {
        for s in 0..2 {
            if (i > 0 || s > 0) && !opts[s].repeat_pause.is_zero() {
                std::thread::sleep(opts[s].repeat_pause);
            }
            if !group[s].repetition(&opts[s], &dbs[s], &plans[s], Some(["A", "B"][s]))? {
                code = ExitCode::from(130);
                break 'reps;
            }
        }
    }
    for (s, g) in group.iter().enumerate() {
        eprintln!("{}: group {}", ["A", "B"][s], g.id);
    }
    let c = groups::compare_groups(
        &group[0].records,
        &group[1].records,
        GroupOptions {
            alpha: a.alpha,
            threshold: a.threshold,
        },
    );
    match opts[0].format {
        Format::Json => println!("{}", serde_json::to_string_pretty(&c)?),
        _ => print!("{}", groups::text(&c)),
    }
    // The comparison stands as printed; a side whose operations failed
    // still fails the command, as its own `run` would.
    for (s, g) in group.iter_mut().enumerate() {
        if let (Some((i, f)), true) = (g.failed.take(), code == ExitCode::SUCCESS) {
            return Err(
                anyhow::Error::new(f).context(format!("{} repetition {i} of {n}", ["A", "B"][s]))
            );
        }
    }
    Ok(code)
}
