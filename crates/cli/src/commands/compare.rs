//! `sojourn compare A B`: run B against baseline A, figure by figure, with
//! significance (see `sojourn_report::compare`), as a text table (coloured
//! on a terminal unless NO_COLOR is set) or JSON.

use sojourn_store::IntervalDetail;
use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use anyhow::{bail, Result};
use sojourn_report::compare::{self, CompareOptions, TextStyle};
use sojourn_report::groups::{self, GroupOptions};
use sojourn_store::{Filter, RunRecord, Store};

use crate::cli::{ColorArg, CompareArgs, CompareFormat};

/// Colour only where it will be seen as colour, and never against the
/// reader's wish (https://no-color.org).
fn use_color(arg: ColorArg) -> bool {
    match arg {
        ColorArg::Always => true,
        ColorArg::Never => false,
        ColorArg::Auto => {
            std::io::stdout().is_terminal()
                && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
        }
    }
}

/// One side of a comparison: runs listed with commas, the repetitions of a
/// group (`--repeat`'s id, its `repeat_group` label), or one run (its
/// client processes merged).
fn side(store: &Store, selector: &str) -> Result<Vec<RunRecord>> {
    if selector.contains(',') {
        return selector
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|s| Ok(store.load_merged_with(s, IntervalDetail::Histograms)?))
            .collect();
    }
    let mut members = store.list(&Filter {
        labels: vec![("repeat_group".into(), selector.trim().into())],
        ..Filter::default()
    })?;
    if members.is_empty() {
        return Ok(vec![
            store.load_merged_with(selector, IntervalDetail::Histograms)?
        ]);
    }
    members.sort_by_key(|r| r.meta.started_at);
    members
        .iter()
        .map(|r| Ok(store.load_with(r.meta.id.as_str(), IntervalDetail::Histograms)?))
        .collect()
}

pub fn main(a: CompareArgs) -> Result<ExitCode> {
    let store = crate::options::reading_store(&a.store)?;
    if !(a.threshold >= 0.0 && a.threshold < 10.0) {
        bail!(
            "--threshold {}: expected a fraction of 0 or more, such as 0.02 for 2%",
            a.threshold
        );
    }
    let (ga, gb) = (side(&store, &a.a)?, side(&store, &a.b)?);
    if ga.len() > 1 || gb.len() > 1 {
        let opts = GroupOptions {
            alpha: a.alpha.unwrap_or(0.05),
            threshold: a.threshold,
        };
        if !(opts.alpha > 0.0 && opts.alpha < 1.0) {
            bail!(
                "--alpha {}: expected a significance level above 0 and below 1",
                opts.alpha
            );
        }
        let c = groups::compare_groups(&ga, &gb, opts);
        let text = match a.format {
            CompareFormat::Json => serde_json::to_string_pretty(&c)? + "\n",
            CompareFormat::Text => groups::text(&c),
        };
        let mut out = std::io::stdout().lock();
        out.write_all(text.as_bytes())?;
        out.flush()?;
        return Ok(ExitCode::SUCCESS);
    }
    let (ra, rb) = (&ga[0], &gb[0]);
    let c = compare::compare(
        ra,
        rb,
        &CompareOptions {
            alpha: a.alpha.unwrap_or(0.01),
        },
    )?;
    let text = match a.format {
        CompareFormat::Json => serde_json::to_string_pretty(&c)? + "\n",
        CompareFormat::Text => compare::text(
            &c,
            TextStyle {
                color: use_color(a.color),
            },
        ),
    };
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
