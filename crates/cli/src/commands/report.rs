//! `sojourn report`: the selected stored runs as one self-contained HTML
//! file with plots (with `--history`, opening with the runs' history and
//! its change points), or as the walkthrough's performance and cost tables
//! (or the whitepaper's summary table) in Markdown or CSV. The work is
//! `sojourn-report`'s; this module reads the command line, opens the store
//! and writes the result.

use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::time::SystemTime;

use anyhow::{bail, Context, Result};
use sojourn_report::html::{self, HtmlOptions};
use sojourn_report::tables::{self, CostOptions, Which};
use sojourn_report::{select, Latency};
use sojourn_store::RunRecord;

use crate::cli::{LatencyArg, ReportArgs, ReportFormat, TableArg};
use crate::selection::series_plan;

fn price(flag: &str, v: f64) -> Result<f64> {
    if !(v.is_finite() && v >= 0.0) {
        bail!("{flag} {v}: expected a price of 0 dollars or more");
    }
    Ok(v)
}

pub fn main(a: ReportArgs) -> Result<ExitCode> {
    let cost = CostOptions {
        node_hour_price: match a.node_hour_price {
            Some(p) => price("--node-hour-price", p)?,
            None => tables::BIGTABLE_NODE_HOUR,
        },
        price_given: a.node_hour_price.is_some(),
        nodes: match a.nodes {
            Some(n) if !(n.is_finite() && n > 0.0) => {
                bail!("--nodes {n}: expected a number of nodes above 0")
            }
            n => n,
        },
        storage_gb_month_price: a
            .storage_gb_month_price
            .map(|p| price("--storage-gb-month-price", p))
            .transpose()?,
    };
    let latency = match a.latency {
        LatencyArg::Service => Latency::Service,
        LatencyArg::Response => Latency::Response,
    };
    let which = match a.table {
        TableArg::Performance => Which::Performance,
        TableArg::Cost => Which::Cost,
        TableArg::Both => Which::Both,
        TableArg::Summary => Which::Summary,
    };
    let labels = a
        .labels
        .iter()
        .map(|l| sojourn_session::parse_label(l))
        .collect::<Result<Vec<_>>>()?;
    if a.format == ReportFormat::Html && a.output.is_none() && std::io::stdout().is_terminal() {
        bail!("an HTML report is a file: give -o report.html (or pipe stdout), or --format md for tables");
    }
    let plan = if a.history {
        if a.format != ReportFormat::Html {
            bail!(
                "--history draws charts in the HTML report; for a table of the change points \
                 use `sojourn history --format {}`",
                if a.format == ReportFormat::Csv {
                    "csv"
                } else {
                    "md"
                }
            );
        }
        Some(series_plan(&a.series, None)?)
    } else {
        if a.series.by.is_some() || !a.series.figures.is_empty() {
            bail!("--by and --figure shape the report's history: add --history");
        }
        None
    };
    let store = crate::options::reading_store(&a.store)?;
    let runs = select::select(&store, &a.runs, &labels)?;
    // The history is of the run phases (as `sojourn history`'s default).
    let history = plan
        .map(|plan| {
            let measured: Vec<&RunRecord> =
                runs.iter().filter(|r| r.meta().phase == "run").collect();
            if measured.is_empty() {
                bail!(
                    "--history: none of the {} selected runs is a run phase",
                    runs.len()
                );
            }
            Ok(plan.history(&measured)?)
        })
        .transpose()?;
    // Markdown and HTML say it under the table; CSV has no room for it.
    let unpriced = tables::unpriced(&runs, &cost);
    if a.format == ReportFormat::Csv
        && matches!(which, Which::Cost | Which::Both)
        && !unpriced.is_empty()
    {
        eprintln!("note: {}", tables::unpriced_note(&unpriced));
    }
    let text = match a.format {
        ReportFormat::Md => tables::markdown(&runs, which, latency, &cost),
        ReportFormat::Csv => tables::csv(&runs, which, latency, &cost),
        ReportFormat::Html => html::render(
            &runs,
            &HtmlOptions {
                title: a
                    .title
                    .clone()
                    .unwrap_or_else(|| "sojourn report".to_string()),
                source: store.location().to_string(),
                generated_at: sojourn_core::output::time::rfc3339(SystemTime::now()),
                latency,
                cost,
                history,
            },
        ),
    };
    match &a.output {
        Some(path) => {
            std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))?;
            eprintln!(
                "wrote {} ({} run{})",
                path.display(),
                runs.len(),
                if runs.len() == 1 { "" } else { "s" }
            );
        }
        None => {
            let mut out = std::io::stdout().lock();
            out.write_all(text.as_bytes())?;
            out.flush()?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
