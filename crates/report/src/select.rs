//! Which stored runs a command line names. A name is what the store
//! resolves (a run id or a unique prefix of one, a run URI whose client
//! processes are merged exactly, `last`), or a capacity session id, which
//! stands for every step of that session in order. Runs can also be picked
//! by label (`--label experiment=latency_test`), one merged run per run URI.

use sojourn_store::IntervalDetail;
use std::collections::BTreeSet;

use sojourn_store::{Filter, RunRecord, Store, StoreError};

use crate::run::{SESSION_LABEL, STEP_LABEL};
use crate::ReportError;

/// The runs `names` and `labels` select, in the order named (label matches
/// after, oldest first), each once.
pub fn select(
    store: &Store,
    names: &[String],
    labels: &[(String, String)],
) -> Result<Vec<RunRecord>, ReportError> {
    let mut out: Vec<RunRecord> = Vec::new();
    let mut seen = BTreeSet::new();
    let mut push = |r: RunRecord, out: &mut Vec<RunRecord>| {
        if seen.insert(r.id().clone()) {
            out.push(r);
        }
    };
    for name in names {
        for r in by_name(store, name)? {
            push(r, &mut out);
        }
    }
    if !labels.is_empty() {
        let filter = Filter {
            labels: labels.to_vec(),
            ..Filter::default()
        };
        let mut uris = Vec::new();
        for s in store.list(&filter)? {
            if !uris.contains(&s.meta.run_uri) {
                uris.push(s.meta.run_uri.clone());
            }
        }
        for uri in uris {
            push(
                store.load_merged_with(&uri, IntervalDetail::Histograms)?,
                &mut out,
            );
        }
        if out.is_empty() {
            let shown: Vec<String> = labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
            return Err(ReportError::NoRuns(format!(
                "no stored run has the labels {}; `sojourn results list` shows the stored runs",
                shown.join(", ")
            )));
        }
    }
    if out.is_empty() {
        return Err(ReportError::NoRuns(
            "name runs (ids, unique prefixes, run URIs, `last`, or a capacity session) or pick \
             them with --label KEY=VALUE"
                .into(),
        ));
    }
    Ok(out)
}

/// The runs one name stands for.
fn by_name(store: &Store, name: &str) -> Result<Vec<RunRecord>, ReportError> {
    match store.load_merged_with(name, IntervalDetail::Histograms) {
        Ok(r) => Ok(vec![r]),
        Err(StoreError::NoSuchRun(_)) => {
            let steps = session(store, name)?;
            if steps.is_empty() {
                Err(StoreError::NoSuchRun(name.to_string()).into())
            } else {
                Ok(steps)
            }
        }
        Err(e) => Err(e.into()),
    }
}

/// Every step of capacity session `id`, in step order.
pub fn session(store: &Store, id: &str) -> Result<Vec<RunRecord>, ReportError> {
    let filter = Filter {
        labels: vec![(SESSION_LABEL.to_string(), id.to_string())],
        ..Filter::default()
    };
    let mut steps = store
        .list(&filter)?
        .into_iter()
        .map(|s| store.load_with(s.meta.id.as_str(), IntervalDetail::Histograms))
        .collect::<Result<Vec<_>, _>>()?;
    steps.sort_by_key(|r| {
        r.meta()
            .labels
            .get(STEP_LABEL)
            .and_then(|s| s.parse::<u64>().ok())
            .unwrap_or(u64::MAX)
    });
    Ok(steps)
}
