//! `sojourn history`: the stored runs a selection names, as a series of
//! points per figure with its change points (see
//! `sojourn_report::history`), as text, JSON, a markdown table or CSV; with
//! `--check`, an exit status a CI job can act on.

use std::collections::BTreeSet;
use std::process::ExitCode;

use anyhow::{bail, Result};
use sojourn_report::changepoint;
use sojourn_report::history::{self, Check, Figure, HistoryOptions};
use sojourn_store::{Filter, IntervalDetail};

use super::results::filter;
use crate::cli::{HistoryArgs, HistoryFormat};

pub fn main(a: HistoryArgs) -> Result<ExitCode> {
    if !(a.max_pvalue > 0.0 && a.max_pvalue < 1.0) {
        bail!(
            "--max-pvalue {}: expected a p-value above 0 and below 1, such as 0.001",
            a.max_pvalue
        );
    }
    if !(a.min_change >= 0.0 && a.min_change < 10.0) {
        bail!(
            "--min-change {}: expected a fraction of 0 or more, such as 0.02 for 2%",
            a.min_change
        );
    }
    if a.last == Some(0) || a.check_last == 0 {
        bail!("--last and --check-last take a number of points, 1 or more");
    }
    let figures = a
        .figures
        .iter()
        .map(|f| Figure::parse(f).map_err(anyhow::Error::msg))
        .collect::<Result<Vec<_>>>()?;
    let store = crate::options::reading_store(&a.store)?;
    let selection = Filter {
        phase: Some(a.phase.clone()),
        ..filter(&a.labels, a.since.as_deref())?
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
    let figures = if figures.is_empty() {
        Figure::defaults(&runs)
    } else {
        figures
    };
    let opts = HistoryOptions {
        by: a.by.clone(),
        last: a.last,
        detect: changepoint::Options {
            max_pvalue: a.max_pvalue,
            min_magnitude: a.min_change,
            ..changepoint::Options::default()
        },
    };
    let h = history::history(&runs, &figures, &opts);
    if h.series.iter().all(|s| s.points.is_empty()) {
        bail!(
            "none of the {} selected runs has {}{}",
            runs.len(),
            figures
                .iter()
                .map(|f| f.name.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            a.by.as_ref()
                .map(|b| format!(" and the label {b}"))
                .unwrap_or_default()
        );
    }
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
