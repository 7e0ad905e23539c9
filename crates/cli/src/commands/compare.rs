//! `sojourn compare A B`: run B against baseline A, figure by figure, with
//! significance (see `sojourn_report::compare`), as a text table (coloured
//! on a terminal unless NO_COLOR is set) or JSON.

use sojourn_store::IntervalDetail;
use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use anyhow::Result;
use sojourn_report::compare::{self, CompareOptions, TextStyle};

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

pub fn main(a: CompareArgs) -> Result<ExitCode> {
    let store = crate::options::reading_store(&a.store)?;
    let ra = store.load_merged_with(&a.a, IntervalDetail::Histograms)?;
    let rb = store.load_merged_with(&a.b, IntervalDetail::Histograms)?;
    let c = compare::compare(&ra, &rb, &CompareOptions { alpha: a.alpha })?;
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
