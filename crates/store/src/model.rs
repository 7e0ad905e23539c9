//! What the store's queries take and give: which runs to list
//! ([`Filter`]), how much of a time series to decode ([`IntervalDetail`]),
//! and rows of read-only SQL ([`QueryResult`]). What a run is and measured
//! ([`RunRecord`](sojourn_core::run_record::RunRecord) and its parts) is
//! core's, so that every format reads live and stored runs alike.

use std::fmt;
use std::time::SystemTime;

use serde::Serialize;
use sojourn_core::run_record::RunStatus;

/// How much of a run's time series [`crate::Store::load_with`] decodes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum IntervalDetail {
    /// Every interval's histograms, decoded into [`StoredInterval::stats`]
    /// (exact re-aggregation, interval logs). Each decoded histogram is
    /// large, and a long run has one per interval and operation kind, so
    /// this is for when the histograms themselves are needed.
    Histograms,
    /// Only the figures stored beside each interval's histograms
    /// ([`StoredInterval::ops`]): enough for time-series plots and batch
    /// means at a few hundred bytes per interval. The run's totals keep all
    /// their histograms either way.
    Figures,
}

/// Which runs `list` returns. Every field set must match.
#[derive(Clone, Debug, Default)]
pub struct Filter {
    /// Each `(key, value)` must be among the run's labels.
    pub labels: Vec<(String, String)>,
    /// One of the run's workload names equals this.
    pub workload: Option<String>,
    /// The backend description contains this.
    pub backend: Option<String>,
    pub phase: Option<String>,
    pub status: Option<RunStatus>,
    pub run_uri: Option<String>,
    /// Started at or after.
    pub since: Option<SystemTime>,
    /// Started before.
    pub until: Option<SystemTime>,
    /// At most this many, the newest.
    pub limit: Option<usize>,
}

/// A value from `results query`.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Value {
    Null,
    Integer(i64),
    Real(f64),
    Text(String),
    Blob(Vec<u8>),
}

impl Value {
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Value::Text(t) => Some(t),
            _ => None,
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Null => f.write_str("NULL"),
            Value::Integer(i) => write!(f, "{i}"),
            Value::Real(r) => write!(f, "{r}"),
            Value::Text(t) => f.write_str(t),
            Value::Blob(b) => write!(f, "<{} bytes>", b.len()),
        }
    }
}

/// The rows of a read-only query.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct QueryResult {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<Value>>,
}
