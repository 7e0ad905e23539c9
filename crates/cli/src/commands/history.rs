//! `sojourn history`: the stored runs a selection names, as a series of
//! points per figure with its change points (see
//! `sojourn_report::history`), as text, JSON, a markdown table or CSV; with
//! `--check`, an exit status a CI job can act on.

use std::collections::BTreeSet;
use std::process::ExitCode;

use anyhow::{bail, Result};
use sojourn_report::changepoint;
use sojourn_report::history::{self, Check, Figure, History, HistoryOptions};
use sojourn_store::{Filter, IntervalDetail, RunRecord};

use super::results::filter;
use crate::cli::{HistoryArgs, HistoryFormat, SeriesArgs};

pub fn main(a: HistoryArgs) -> Result<ExitCode> {
    if a.last == Some(0) || a.check_last == 0 {
        bail!("--last and --check-last take a number of points, 1 or more");
    }
    let plan = Plan::of(&a.series, a.last)?;
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

/// What a history is made of, checked: the figures (none: the runs'
/// defaults) and how points are grouped and change points judged.
pub struct Plan {
    figures: Vec<Figure>,
    opts: HistoryOptions,
}

impl Plan {
    pub fn of(s: &SeriesArgs, last: Option<usize>) -> Result<Plan> {
        if !(s.max_pvalue > 0.0 && s.max_pvalue < 1.0) {
            bail!(
                "--max-pvalue {}: expected a p-value above 0 and below 1, such as 0.001",
                s.max_pvalue
            );
        }
        if !(s.min_change >= 0.0 && s.min_change < 10.0) {
            bail!(
                "--min-change {}: expected a fraction of 0 or more, such as 0.02 for 2%",
                s.min_change
            );
        }
        let figures = s
            .figures
            .iter()
            .map(|f| Figure::parse(f).map_err(anyhow::Error::msg))
            .collect::<Result<Vec<_>>>()?;
        Ok(Plan {
            figures,
            opts: HistoryOptions {
                by: s.by.clone(),
                last,
                detect: changepoint::Options {
                    max_pvalue: s.max_pvalue,
                    min_magnitude: s.min_change,
                    ..changepoint::Options::default()
                },
            },
        })
    }

    /// The history of `runs`; an error when no run has any of the figures.
    pub fn history(&self, runs: &[RunRecord]) -> Result<History> {
        let defaults;
        let figures = if self.figures.is_empty() {
            defaults = Figure::defaults(runs);
            &defaults
        } else {
            &self.figures
        };
        let h = history::history(runs, figures, &self.opts);
        if h.series.iter().all(|s| s.points.is_empty()) {
            bail!(
                "none of the {} selected runs has {}{}",
                runs.len(),
                figures
                    .iter()
                    .map(|f| f.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
                self.opts
                    .by
                    .as_ref()
                    .map(|b| format!(" and the label {b}"))
                    .unwrap_or_default()
            );
        }
        Ok(h)
    }
}
