//! `sojourn history`: the stored runs a selection names, as a series of
//! points per figure with its change points (see
//! `sojourn_report::history`), as text, JSON, a markdown table or CSV; with
//! `--check`, an exit status a CI job can act on.

use std::collections::BTreeSet;
use std::process::ExitCode;

use anyhow::{bail, Result};
use sojourn_report::history::{self, Check};
use sojourn_store::{Filter, IntervalDetail};

use crate::cli::{HistoryArgs, HistoryFormat};
use crate::selection::{run_filter, series_plan};

pub fn main(a: HistoryArgs) -> Result<ExitCode> {
    if a.last == Some(0) || a.check_last == 0 {
        bail!("--last and --check-last take a number of points, 1 or more");
    }
    let plan = series_plan(&a.series, a.last)?;
    let store = crate::options::reading_store(&a.store)?;
    let selection = Filter {
        phase: Some(a.phase.clone()),
        ..run_filter(&a.labels, a.since.as_deref())?
    };
    // One run per stage, merged over its client processes (agents).
    let mut seen = BTreeSet::new();
    let mut runs = Vec::new();
    for s in store.list(&selection)? {
        let m = &s.meta;
        if seen.insert((m.run_uri.clone(), m.phase.clone(), m.stage_index)) {
            runs.push(store.load_merged_with(m.id.as_str(), IntervalDetail::Figures)?);
        }
    }
    if runs.is_empty() {
        bail!(
            "no stored {} phase matches the selection; `sojourn results list` shows the stored \
             runs",
            a.phase
        );
    }
    let h = plan.history(&runs)?;
    let out = match a.format {
        HistoryFormat::Text => history::text(&h),
        HistoryFormat::Json => serde_json::to_string_pretty(&h)? + "\n",
        HistoryFormat::Md => history::markdown(&h),
        HistoryFormat::Csv => history::csv(&h),
    };
    print!("{out}");
    if !a.check {
        return Ok(ExitCode::SUCCESS);
    }
    Ok(match history::check(&h, a.check_last) {
        Check::Pass(line) => {
            eprintln!("check passed: {line}");
            ExitCode::SUCCESS
        }
        Check::Worse(line) => {
            eprintln!("check failed: {line}");
            ExitCode::from(1)
        }
        Check::TooFew(line) => {
            eprintln!("check undecided: {line}");
            ExitCode::from(2)
        }
    })
}
