//! What a recorded run is called and tagged with before it starts: its
//! labels, run URI, this process's share of a multi-process run, the
//! command line and workload names, and the one function that turns a plan
//! into the [`RunMeta`] the store keeps, with every secret removed.

use std::collections::BTreeMap;

use anyhow::{bail, Result};
use sojourn_core::executor::RunConfig;
use sojourn_core::plan::Plan;
use sojourn_core::properties::Properties;
use sojourn_core::redact;
use sojourn_store::RunMeta;

/// How a command's runs are named and tagged.
#[derive(Clone, Debug, PartialEq)]
pub struct RunTags {
    /// `--label KEY=VALUE` and PKB `metadata` pairs.
    pub labels: BTreeMap<String, String>,
    /// Shared by the client processes of one run, so their results merge,
    /// and by a benchmark's stages, as PKB's is.
    pub run_uri: String,
    /// Which stage of the run URI this is (0: the load, or a lone run).
    pub stage_index: u32,
    /// This process's share: `client_index` of `client_count`.
    pub client_index: u32,
    pub client_count: u32,
    /// The command line, secrets removed argument by argument when it was
    /// captured ([`redact::command_line`]).
    pub command_line: String,
    /// Workload file names as given (`workloada`), or the workload's name.
    pub workloads: Vec<String>,
}

impl RunTags {
    /// One process, a new run URI, this process's command line.
    pub fn new(workloads: Vec<String>) -> RunTags {
        RunTags {
            labels: BTreeMap::new(),
            run_uri: sojourn_store::new_run_uri(),
            stage_index: 0,
            client_index: 0,
            client_count: 1,
            command_line: redact::command_line(std::env::args()),
            workloads,
        }
    }

    /// Refuse a share that cannot be (`--client-index 3 --client-count 2`).
    pub fn check_share(&self) -> Result<()> {
        if self.client_count == 0 || self.client_index >= self.client_count {
            bail!(
                "--client-index {} --client-count {}: the index must be below the count (0..{})",
                self.client_index,
                self.client_count,
                self.client_count
            );
        }
        Ok(())
    }

    /// What the store keeps about a phase of `plan`, driven as `run` says
    /// (the plan's own, or a capacity step's), against `backend` before it
    /// runs, with every secret removed ([`RunMeta::redacted`]).
    pub fn meta(&self, plan: &Plan, run: &RunConfig, props: &Properties, backend: &str) -> RunMeta {
        let mut m = RunMeta::new(plan.phase.name());
        m.run_uri = self.run_uri.clone();
        m.stage_index = self.stage_index;
        m.workloads = self.workloads.clone();
        m.properties = props
            .iter()
            .map(|(k, e)| (k.to_string(), e.value.clone()))
            .collect();
        m.backend = backend.to_string();
        m.threads = run.workers() as u64;
        m.target = run.target();
        m.labels = self.labels.clone();
        m.client_index = self.client_index;
        m.client_count = self.client_count;
        m.command_line = self.command_line.clone();
        m.measurement_interval = plan.measurement_interval.name().to_string();
        m.percentiles = plan.percentiles.clone();
        m.warmup = run.warmup;
        m.seed = run.seed;
        m.redacted()
    }
}

/// `--label KEY=VALUE`.
pub fn parse_label(l: &str) -> Result<(String, String)> {
    match l.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_string(), v.to_string())),
        _ => bail!(
            "--label {l:?}: expected KEY=VALUE with a non-empty KEY, e.g. experiment=latency_test"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sojourn_core::properties::Origin;
    use sojourn_core::workload::Phase;

    #[test]
    fn labels_parse_or_say_what_is_expected() {
        assert_eq!(
            parse_label(" experiment =a=b").unwrap(),
            ("experiment".to_string(), "a=b".to_string())
        );
        let e = parse_label("=x").unwrap_err().to_string();
        assert!(e.contains("KEY=VALUE"), "{e}");
    }

    #[test]
    fn stored_metadata_carries_no_secret() {
        let mut p = Properties::new();
        p.set("db.passwd", "hunter2", Origin::Flag("-p"));
        p.set("db.url", "postgres://u:hunter2@h/db", Origin::Flag("-p"));
        p.set("operationcount", "10", Origin::Flag("-p"));
        p.set("recordcount", "10", Origin::Flag("-p"));
        let plan = Plan::from_properties(&p, Phase::Run, &["db."]).unwrap();
        let mut tags = RunTags::new(vec!["workloada".into()]);
        tags.command_line = redact::command_line(
            [
                "sojourn",
                "run",
                "--db",
                "postgres://u:hunter2@h/db",
                "-p",
                "db.passwd=hunter2",
            ]
            .map(String::from),
        );
        tags.labels = [
            ("password", "hunter2"),
            ("dsn", "postgres://u:hunter2@h/x"),
            ("api.key", "hunter2"),
            ("some_cloud_flag", "see host=h password=hunter2 dbname=d"),
            ("experiment", "e1"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let m = tags.meta(&plan, &plan.run, &p, "postgres://u:hunter2@h/db");
        let all = format!("{m:?}");
        assert!(!all.contains("hunter2"), "{all}");
        assert_eq!(m.properties["operationcount"], "10");
        assert_eq!(m.labels["experiment"], "e1");
        assert_eq!(m.labels["dsn"], "postgres://u:***@h/x");
        assert_eq!((m.threads, m.target), (1, None));
    }
}
