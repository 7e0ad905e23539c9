//! PerfKitBenchmarker samples: newline-delimited JSON with PKB's keys in
//! PKB's order, YCSB metric names as PKB's YCSB parser emits them, and the
//! metadata collapsed into PKB's `labels` string.

use std::collections::BTreeMap;
use std::io;

use serde::Serialize;

use crate::model::StoredRun;

/// What PKB's publisher adds to every sample.
#[derive(Clone, Debug)]
pub struct PkbOptions {
    /// PKB's benchmark name (`test`), e.g. `cloud_bigtable_ycsb`.
    pub test: String,
    pub owner: String,
    pub product_name: String,
    pub official: bool,
}

impl Default for PkbOptions {
    fn default() -> Self {
        PkbOptions {
            test: "ycsb".to_string(),
            owner: std::env::var("USER").unwrap_or_else(|_| "sojourn".to_string()),
            product_name: "PerfKitBenchmarker".to_string(),
            official: false,
        }
    }
}

/// One sample; fields serialise in PKB's order.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Sample {
    pub metric: String,
    pub value: f64,
    pub unit: String,
    pub timestamp: f64,
    pub test: String,
    pub product_name: String,
    pub official: bool,
    pub owner: String,
    pub run_uri: String,
    pub sample_uri: String,
    pub labels: String,
}

/// The metadata of a run's samples, before collapsing.
pub fn metadata(run: &StoredRun) -> BTreeMap<String, String> {
    let _ = run;
    BTreeMap::new()
}

/// Every sample of a run.
pub fn samples(run: &StoredRun, opts: &PkbOptions) -> Vec<Sample> {
    let _ = (run, opts);
    Vec::new()
}

/// Escape a label key or value so the collapsed string stays parseable.
pub fn escape(value: &str) -> String {
    value.to_string()
}

/// Undo [`escape`].
pub fn unescape(value: &str) -> String {
    value.to_string()
}

/// PKB's collapsed labels: keys sorted, each `|key:value|`, joined by `,`.
pub fn collapse_labels(labels: &BTreeMap<String, String>) -> String {
    labels
        .iter()
        .map(|(k, v)| format!("|{}:{}|", escape(k), escape(v)))
        .collect::<Vec<_>>()
        .join(",")
}

/// Write samples as newline-delimited JSON.
pub fn write_ndjson(samples: &[Sample], out: &mut dyn io::Write) -> io::Result<()> {
    for s in samples {
        serde_json::to_writer(&mut *out, s)?;
        out.write_all(b"\n")?;
    }
    Ok(())
}
