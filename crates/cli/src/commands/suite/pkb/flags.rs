//! PKB's flags as the mapping reads them: which it uses and which it
//! refuses, typed access whose errors name where each flag was set, the
//! thread staircase, and the workload files they name.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::Result;
use sojourn_session::share::WorkloadFile;

use crate::commands::suite::folder::{Flag, FlagOrigin, Flags};
use crate::workloads;

/// The flags sojourn reads (see docs/suites.md for what each becomes).
pub const USED: &[&str] = &[
    "ycsb_workload_files",
    "ycsb_record_count",
    "ycsb_operation_count",
    "ycsb_field_count",
    "ycsb_field_length",
    "ycsb_requestdistribution",
    "ycsb_readproportion",
    "ycsb_updateproportion",
    "ycsb_scanproportion",
    "ycsb_run_parameters",
    "ycsb_load_parameters",
    "ycsb_target_qps",
    "ycsb_threads_per_client",
    "ycsb_preload_threads",
    "ycsb_timelimit",
    "ycsb_skip_load_stage",
    "ycsb_skip_run_stage",
    "ycsb_reload_database",
    "ycsb_max_error_rate",
    "ycsb_fail_on_incomplete_loading",
    "ycsb_measurement_type",
    "ycsb_measurement_interval",
    "ycsb_sleep_after_load_in_sec",
    "num_vms",
    "ycsb_client_vms",
    "metadata",
    "sojourn_db",
    "sojourn_parameters",
];

/// PKB modes that change what runs; refused when switched on, with what
/// to use instead.
pub(super) const UNSUPPORTED: &[(&str, &str)] = &[
    (
        "ycsb_dynamic_load",
        "`sojourn capacity` searches for the highest sustained rate",
    ),
    // A rate profile in the run parameters expresses both within one
    // stage, its segments summarised on their own (docs/rates.md).
    (
        "ycsb_burst_load",
        "a rate profile in ycsb_run_parameters, e.g. rate=hold 1000 for 60s; hold 5000 for 30s \
         (segments joined by ';' there, where commas part the parameters; docs/rates.md), or a \
         second config with the higher target",
    ),
    (
        "ycsb_incremental_load",
        "a staircase in ycsb_run_parameters, e.g. rate=stairs 500..8000 by 500 every 30s \
         (each step summarised on its own; docs/rates.md), or `threads:qps` entries of \
         ycsb_threads_per_client",
    ),
    (
        "ycsb_cpu_optimization",
        "`sojourn capacity` with a response-time SLO",
    ),
    (
        "ycsb_lowest_latency_load",
        "`sojourn capacity` with a response-time SLO",
    ),
];

/// The workload files PKB runs when `ycsb_workload_files` is not set.
pub(super) const DEFAULT_WORKLOADS: &str = "workloada,workloadb";

/// Most client processes a stage may start on one machine.
pub(super) const MAX_CLIENTS: u64 = 256;

/// Typed access to the flags, with errors naming the flag's origin.
pub(super) struct Reader<'a> {
    pub(super) flags: &'a Flags,
}

impl<'a> Reader<'a> {
    pub(super) fn get(&self, name: &str) -> Option<&'a Flag> {
        self.flags.get(name)
    }

    /// A set, non-empty value.
    pub(super) fn value(&self, name: &str) -> Option<&'a str> {
        self.get(name)
            .map(|f| f.value.trim())
            .filter(|v| !v.is_empty())
    }

    pub(super) fn origin(&self, name: &str) -> String {
        match self.get(name) {
            Some(f) => format!("{} ({name})", f.origin),
            None => format!("default ({name})"),
        }
    }

    pub(super) fn invalid(&self, name: &str, accepted: &str) -> anyhow::Error {
        let f = self.get(name);
        anyhow::anyhow!(
            "{}: {name} = {:?}; accepted: {accepted}",
            f.map_or_else(|| "default".to_string(), |f| f.origin.to_string()),
            f.map_or("", |f| f.value.as_str())
        )
    }

    pub(super) fn u64(&self, name: &str, max: u64) -> Result<Option<u64>> {
        let Some(v) = self.value(name) else {
            return Ok(None);
        };
        match v.replace('_', "").parse::<u64>() {
            Ok(n) if n <= max => Ok(Some(n)),
            _ => Err(self.invalid(name, &format!("a whole number from 0 to {max}"))),
        }
    }

    pub(super) fn f64(&self, name: &str, lo: f64, hi: f64) -> Result<Option<f64>> {
        let Some(v) = self.value(name) else {
            return Ok(None);
        };
        match v.parse::<f64>() {
            Ok(x) if x.is_finite() && x >= lo && x <= hi => Ok(Some(x)),
            _ => Err(self.invalid(name, &format!("a number from {lo} to {hi}"))),
        }
    }

    pub(super) fn bool(&self, name: &str, default: bool) -> Result<bool> {
        let Some(v) = self.value(name) else {
            return Ok(default);
        };
        match v.to_ascii_lowercase().as_str() {
            "true" | "yes" | "1" => Ok(true),
            "false" | "no" | "0" => Ok(false),
            _ => Err(self.invalid(name, "true or false")),
        }
    }

    /// A comma list, empty entries dropped.
    pub(super) fn list(&self, name: &str) -> Vec<&'a str> {
        self.value(name)
            .map(|v| {
                v.split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The flag the client count comes from (`num_vms` wins).
    pub(super) fn vm_flag(&self) -> &'static str {
        if self.value("num_vms").is_some() {
            "num_vms"
        } else {
            "ycsb_client_vms"
        }
    }

    /// A `k=v` comma list (ycsb_run_parameters and friends).
    pub(super) fn params(&self, name: &str) -> Result<Vec<(&'a str, &'a str)>> {
        self.list(name)
            .into_iter()
            .map(|kv| match kv.split_once('=') {
                Some((k, v)) if !k.trim().is_empty() => Ok((k.trim(), v.trim())),
                _ => Err(self.invalid(
                    name,
                    "a comma-separated list of key=value pairs, e.g. target=3000,readallfields=false",
                )),
            })
            .collect()
    }
}

/// One step of the staircase: threads per client and, optionally, the
/// per-VM rate PKB writes as `threads:qps`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Step {
    pub(super) threads: u64,
    pub(super) qps_per_vm: Option<u64>,
}

pub(super) fn staircase(r: &Reader<'_>) -> Result<Vec<Step>> {
    let name = "ycsb_threads_per_client";
    let entries = r.list(name);
    if entries.is_empty() {
        return Ok(vec![Step {
            threads: 32,
            qps_per_vm: None,
        }]);
    }
    let accepted = "a comma list of `threads` or `threads:qps_per_vm` entries, threads from 1 to \
                    100000, e.g. 1,8,32 or 32:1000,32:2000";
    entries
        .into_iter()
        .map(|e| {
            let (t, q) = match e.split_once(':') {
                Some((t, q)) => (t, Some(q)),
                None => (e, None),
            };
            let threads = t
                .trim()
                .parse::<u64>()
                .ok()
                .filter(|n| (1..=100_000).contains(n))
                .ok_or_else(|| r.invalid(name, accepted))?;
            let qps_per_vm = match q {
                None => None,
                Some(q) => {
                    let q = q
                        .trim()
                        .parse::<u64>()
                        .map_err(|_| r.invalid(name, accepted))?;
                    // PKB's 0 means "no target".
                    (q > 0).then_some(q)
                }
            };
            Ok(Step {
                threads,
                qps_per_vm,
            })
        })
        .collect()
}

/// Where a workload named in `ycsb_workload_files` is: a file in the suite
/// folder, a path, or a workload shipped with sojourn.
pub(super) fn resolve_workload(dir: &Path, name: &str, r: &Reader<'_>) -> Result<WorkloadFile> {
    let p = Path::new(name);
    let in_dir = dir.join(p);
    if in_dir.is_file() {
        return Ok(WorkloadFile {
            name: name.to_string(),
            path: Some(in_dir),
            contents: None,
        });
    }
    if p.is_absolute() && p.is_file() {
        return Ok(WorkloadFile {
            name: name.to_string(),
            path: Some(p.to_path_buf()),
            contents: None,
        });
    }
    let base = p
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    if let Some((_, text)) = workloads::SHIPPED.iter().find(|(n, _)| *n == base) {
        return Ok(WorkloadFile {
            name: base,
            path: None,
            contents: Some(text.to_string()),
        });
    }
    let shipped: Vec<&str> = workloads::SHIPPED.iter().map(|(n, _)| *n).collect();
    Err(r
        .invalid(
            "ycsb_workload_files",
            &format!(
                "workload files in {} or absolute paths, or the shipped workloads {}",
                dir.display(),
                shipped.join(", ")
            ),
        )
        .context(format!("workload file {name} not found")))
}

/// A `sqlite:` path written in a file of the folder is relative to the
/// folder, as workload files are; on the command line, to the working
/// directory.
pub(super) fn relative_to_folder(url: &str, origin: &FlagOrigin, dir: &Path) -> String {
    if let (FlagOrigin::File { .. }, Some((scheme, path))) = (origin, url.split_once(':')) {
        if scheme.eq_ignore_ascii_case("sqlite")
            && !path.is_empty()
            && Path::new(path).is_relative()
        {
            return format!("{scheme}:{}", dir.join(path).display());
        }
    }
    url.to_string()
}

/// `metadata`: `key:value` pairs separated by commas.
pub(super) fn metadata(r: &Reader<'_>) -> Result<BTreeMap<String, String>> {
    let mut out = BTreeMap::new();
    for kv in r.list("metadata") {
        match kv.split_once(':') {
            Some((k, v)) if !k.trim().is_empty() => {
                out.insert(k.trim().to_string(), v.trim().to_string());
            }
            _ => {
                return Err(r.invalid(
                    "metadata",
                    "key:value pairs separated by commas, e.g. experiment:latency_test",
                ))
            }
        }
    }
    Ok(out)
}

/// Flags whose names are close to one sojourn reads: likely typos.
pub fn suggestion(name: &str) -> Option<&'static str> {
    USED.iter()
        .copied()
        .map(|u| (u, strsim::normalized_damerau_levenshtein(name, u)))
        .filter(|(_, s)| *s >= 0.8)
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(u, _)| u)
}
