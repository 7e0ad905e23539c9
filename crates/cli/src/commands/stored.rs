//! What the commands that read and write stored runs share: where the
//! results store is (`--results`, else `results.sqlite` in the data
//! directory) and `--label KEY=VALUE` arguments.

use std::path::Path;

use anyhow::{bail, Context, Result};
use sojourn_store::Store;

use super::phase::data_dir;
use crate::cli::StoreArgs;

/// The default results store in a data directory.
pub(crate) fn default_location(data_dir: &Path) -> String {
    data_dir
        .join("results.sqlite")
        .to_string_lossy()
        .into_owned()
}

/// Open the store named by `--results` (or the default one) to read.
pub(crate) fn open_for_reading(a: &StoreArgs) -> Result<Store> {
    let location = match &a.results {
        Some(l) => l.clone(),
        None => default_location(&data_dir(a.data_dir.clone())),
    };
    Store::open_read_only(&location).with_context(|| {
        if a.results.is_none() {
            "opening the default results store (--results PATH to name another)".to_string()
        } else {
            "opening --results".to_string()
        }
    })
}

/// `--label KEY=VALUE`.
pub(crate) fn parse_label(l: &str) -> Result<(String, String)> {
    match l.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_string(), v.to_string())),
        _ => bail!(
            "--label {l:?}: expected KEY=VALUE with a non-empty KEY, e.g. experiment=latency_test"
        ),
    }
}
