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
/// after, oldest first), each stage once: two client runs of one stage,
/// its run URI and its `URI/STAGE` all name the same merged run.
pub fn select(
    store: &Store,
    names: &[String],
    labels: &[(String, String)],
) -> Result<Vec<RunRecord>, ReportError> {
    let mut out: Vec<RunRecord> = Vec::new();
    let mut seen = BTreeSet::new();
    let mut push = |r: RunRecord, out: &mut Vec<RunRecord>| {
        let m = r.meta();
        if seen.insert((m.run_uri.clone(), m.phase.clone(), m.stage_index)) {
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
        // One run per stage (a `bench` is a load and a run under one
        // URI), merged over its client processes.
        let mut stages = store.list(&filter)?;
        stages.sort_by_key(|s| s.meta.started_at);
        let mut picked = BTreeSet::new();
        for s in stages {
            let m = &s.meta;
            if picked.insert((m.run_uri.clone(), m.phase.clone(), m.stage_index)) {
                push(
                    store.load_merged_with(m.id.as_str(), IntervalDetail::Histograms)?,
                    &mut out,
                );
            }
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
    // A step run on agents is one run per agent: each step once, merged.
    let mut seen = BTreeSet::new();
    let mut steps = store
        .list(&filter)?
        .into_iter()
        .filter(|s| {
            seen.insert((
                s.meta.run_uri.clone(),
                s.meta.phase.clone(),
                s.meta.stage_index,
            ))
        })
        .map(|s| store.load_merged_with(s.meta.id.as_str(), IntervalDetail::Histograms))
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
