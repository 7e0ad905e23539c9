//! One client's share of a phase run by several clients at once, whatever
//! carries it there: a suite's client processes on this machine (their
//! spec on stdin) or agents on other machines (their spec in the results
//! store). A [`ShareSpec`] is everything a client needs and nothing
//! secret; [`run_share`] runs it as every phase runs, recorded in the
//! store the whole is merged from, starting at the instant its gate gives.
//!
//! The shares of one phase are cut as PerfKitBenchmarker cuts a benchmark
//! over its client VMs ([`split`], [`split_rate`]): key ranges that never
//! overlap, rates and counts that add up to the totals, a seed each.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use sojourn_backends::AnyBackend;
use sojourn_core::executor::{RunOutcome, StopHandle};
use sojourn_core::output::Warning;
use sojourn_core::plan::Plan;
use sojourn_core::properties::{Origin, Properties};
use sojourn_core::workload::{pgio, Phase};
use sojourn_store::{RunId, RunRecord};

use crate::{open_backend, PhaseSpec, RunStore, RunTags, Session, Show};

/// One workload file of a recipe.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WorkloadFile {
    /// As it was named (`workloada`, `pgio.conf`).
    pub name: String,
    /// Where it is, or was read from: what its settings' origins name.
    pub path: Option<PathBuf>,
    /// Its text, carried to a machine that does not have the file (and
    /// for a workload shipped in the binary); read instead of `path`.
    #[serde(default)]
    pub contents: Option<String>,
}

impl WorkloadFile {
    /// The file's properties: its contents, else the file at its path.
    pub fn properties(&self) -> Result<Properties> {
        let origin = self
            .path
            .clone()
            .unwrap_or_else(|| Path::new("workloads").join(&self.name));
        Ok(match (&self.contents, &self.path) {
            (Some(text), _) => Properties::read_str(text, &origin)?,
            (None, Some(path)) => Properties::read_file(path)?,
            (None, None) => bail!(
                "workload file {} has neither a path nor its contents",
                self.name
            ),
        })
    }
}

/// One property set by a flag, with where it was set for messages.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Setting {
    pub key: String,
    pub value: String,
    /// E.g. `latency.yaml:37 (ycsb_record_count)`.
    pub origin: String,
}

/// How to build one client's properties: the workload files, then the
/// settings in order, each winning over the files (as `-p` does) and over
/// earlier settings. Sent as is to a client, which builds the same
/// properties the sender validated.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Recipe {
    pub files: Vec<WorkloadFile>,
    pub settings: Vec<Setting>,
}

impl Recipe {
    pub fn properties(&self) -> Result<Properties> {
        let mut props = Properties::new();
        for f in &self.files {
            pgio::merge_file(&mut props, f.properties()?)?;
        }
        for s in &self.settings {
            props.set(&s.key, &s.value, Origin::Flag(intern(&s.origin)));
        }
        Ok(props)
    }

    pub fn set(&mut self, key: &str, value: impl Into<String>, origin: &str) {
        self.settings.push(Setting {
            key: key.to_string(),
            value: value.into(),
            origin: origin.to_string(),
        });
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        self.settings
            .iter()
            .rev()
            .find(|s| s.key == key)
            .map(|s| s.value.as_str())
    }
}

/// Property origins are `&'static str`; a process sees a bounded number of
/// distinct setting origins, each leaked once.
fn intern(s: &str) -> &'static str {
    static SEEN: Mutex<BTreeSet<&'static str>> = Mutex::new(BTreeSet::new());
    let mut seen = SEEN.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(&known) = seen.get(s) {
        return known;
    }
    let leaked: &'static str = Box::leak(s.to_string().into_boxed_str());
    seen.insert(leaked);
    leaked
}

/// PKB's split of a whole number over `n` parts: the first `total % n`
/// get one more.
pub fn split(total: u64, n: u64) -> Vec<u64> {
    let n = n.max(1);
    (0..n)
        .map(|i| total / n + u64::from(i < total % n))
        .collect()
}

/// Split a total rate over clients: whole numbers as PKB does, otherwise
/// in equal shares.
pub fn split_rate(total: f64, n: u64) -> Vec<f64> {
    if total.fract() == 0.0 && total < 1e15 {
        split(total as u64, n)
            .into_iter()
            .map(|x| x as f64)
            .collect()
    } else {
        vec![total / n.max(1) as f64; n.max(1) as usize]
    }
}

/// Everything one client needs to run its share of a phase.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ShareSpec {
    /// `load` or `run`.
    pub phase: String,
    pub recipe: Recipe,
    /// The database URL. For a suite's own client processes it may hold a
    /// password (it travels on stdin); for agents it never does (they take
    /// passwords from their environment).
    pub db_url: String,
    /// Where `sqlite` without a path points.
    pub default_sqlite: PathBuf,
    /// The results store.
    pub results: String,
    pub labels: BTreeMap<String, String>,
    /// Shared by a benchmark's stages, as PKB's run URI is; with the
    /// stage index, by the clients of one stage, so their runs merge.
    pub run_uri: String,
    /// The stage's place in its benchmark: 0 for the load, runs from 1.
    #[serde(default)]
    pub stage_index: u32,
    pub client_index: u32,
    pub client_count: u32,
    /// The command line that asked for it, redacted.
    pub command_line: String,
    /// Workload names for the stored run (`workloada`); the recipe's file
    /// names when empty.
    #[serde(default)]
    pub workloads: Vec<String>,
    /// Where a run the store cannot take at its end is spooled.
    #[serde(default)]
    pub spool_dirs: Vec<PathBuf>,
}

impl ShareSpec {
    pub fn phase(&self) -> Result<Phase> {
        match self.phase.as_str() {
            "load" => Ok(Phase::Load),
            "run" => Ok(Phase::Run),
            other => bail!("unknown phase {other:?} in a share's spec; accepted: load, run"),
        }
    }

    /// The share's plan, validated as the sender validated it.
    pub fn plan(&self) -> Result<(Properties, Plan)> {
        let props = self.recipe.properties()?;
        let plan =
            Plan::from_properties(&props, self.phase()?, sojourn_backends::property_prefixes())?;
        Ok((props, plan))
    }

    /// The database the spec names, opened for its plan (nothing is
    /// contacted yet).
    pub fn open_backend(&self, props: &Properties, plan: &Plan) -> Result<AnyBackend> {
        open_backend(
            &self.db_url,
            props,
            &self.default_sqlite,
            plan.run.workers(),
        )
    }

    fn tags(&self) -> RunTags {
        RunTags {
            labels: self.labels.clone(),
            run_uri: self.run_uri.clone(),
            stage_index: self.stage_index,
            client_index: self.client_index,
            client_count: self.client_count,
            command_line: self.command_line.clone(),
            workloads: if self.workloads.is_empty() {
                self.recipe.files.iter().map(|f| f.name.clone()).collect()
            } else {
                self.workloads.clone()
            },
        }
    }
}

/// What one client measured.
pub struct Share {
    /// `None` when it is kept in a spool file only ([`Share::spooled`]).
    pub run_id: Option<RunId>,
    /// As every format reads it.
    pub record: RunRecord,
    pub outcome: RunOutcome,
    pub warnings: Vec<Warning>,
    /// The spool file holding the run, when the store could not take it
    /// at its end (only where the store was not required).
    pub spooled: Option<PathBuf>,
}

/// Called once every connection is open: returns the instant the run
/// starts at (`None`: at once). Clients of one stage wait here for each
/// other.
pub type Gate<'a> = dyn FnMut() -> Result<Option<SystemTime>> + 'a;

/// How a share is run.
pub struct ShareRun<'a> {
    /// The database, or the one the spec names when `None`.
    pub backend: Option<Arc<AnyBackend>>,
    /// Where the run is recorded: the store the whole is merged from.
    pub records: &'a RunStore,
    /// The run must reach the store (a suite's client processes, whose
    /// caller merges at once); otherwise a run the store cannot take goes
    /// to a spool file, and [`Share::spooled`] says where.
    pub store_required: bool,
    pub stop: &'a StopHandle,
    pub show: &'a dyn Show,
}

/// Run one client's share.
pub fn run_share(spec: &ShareSpec, how: ShareRun<'_>, gate: &mut Gate<'_>) -> Result<Share> {
    let (props, plan) = spec.plan()?;
    let backend = match how.backend {
        Some(b) => b,
        None => Arc::new(spec.open_backend(&props, &plan)?),
    };
    let mut session = Session::new(
        Some(how.records),
        spec.tags(),
        &props,
        how.stop.clone(),
        how.show,
    );
    if how.store_required {
        session = session.store_required();
    }
    let db = session.database(backend)?;
    let describe = db.describe().to_string();
    db.connect(&plan, |conns| {
        // The steps are built before the gate: the key-value workload's
        // search for the keys already written is setup, not the stage's run.
        let spec = PhaseSpec {
            gate: Some(gate),
            ..PhaseSpec::default()
        };
        let measured = conns.run(&plan, spec)?;
        let record = measured.record();
        let done = measured.finish(&BTreeMap::new())?;
        if done.run_id.is_none() && done.spooled.is_none() {
            bail!("the client's run was not recorded");
        }
        Ok(Share {
            run_id: done.store.and(done.run_id),
            record,
            outcome: done.outcome,
            warnings: done.warnings,
            spooled: done.spooled,
        })
    })
    .with_context(|| format!("connecting to {describe}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_add_up_as_pkb_cuts_them() {
        assert_eq!(split(10, 3), [4, 3, 3]);
        assert_eq!(split(2, 4), [1, 1, 0, 0]);
        assert_eq!(split_rate(1000.0, 3), [334.0, 333.0, 333.0]);
        assert_eq!(split_rate(10.5, 2), [5.25, 5.25]);
    }

    #[test]
    fn a_recipe_carries_its_files_contents() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mine");
        std::fs::write(&path, "recordcount=77\nreadproportion=1\n").unwrap();
        let mut r = Recipe {
            files: vec![WorkloadFile {
                name: "mine".into(),
                path: Some(path.clone()),
                contents: Some("recordcount=55\n".into()),
            }],
            settings: Vec::new(),
        };
        r.set("operationcount", "9", "--agents share 1");
        let p = r.properties().unwrap();
        // The contents, not the file now on disk; origins name the path.
        assert_eq!(p.get("recordcount"), Some("55"));
        assert!(p
            .describe("recordcount")
            .contains(&path.display().to_string()));
        assert_eq!(p.get("operationcount"), Some("9"));
        let json = serde_json::to_string(&r).unwrap();
        let back: Recipe = serde_json::from_str(&json).unwrap();
        assert_eq!(back, r);
    }
}
