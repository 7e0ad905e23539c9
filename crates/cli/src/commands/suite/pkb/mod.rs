//! PerfKitBenchmarker's flags, mapped onto sojourn: one benchmark's merged
//! flags become a [`BenchPlan`] (the database, the client count, a load
//! stage and the run stages, the failure thresholds and the labels every
//! result carries), each stage holding one property [`Recipe`] per client
//! process. The mapping follows PKB's `linux_packages/ycsb.py`:
//!
//! - load: the first workload file, `ycsb_preload_threads` threads per
//!   client (PKB's default 32), `ycsb_load_parameters` last; the records
//!   split over the clients with `insertstart`/`insertcount` as PKB does;
//! - run: every workload file (`workload_index`), and for each every entry
//!   of the `ycsb_threads_per_client` staircase (`threads` or
//!   `threads:qps_per_vm`); `ycsb_run_parameters` last, so a `target` or
//!   `threads` there is per client, as it is per VM in PKB.
//!
//! Flags sojourn does not use are kept as labels and listed (never
//! dropped); flags that would change what PKB runs in ways sojourn cannot
//! follow (dynamic or burst load, ...) are refused when they are on.

//!
//! `flags.rs` reads the flags (typed, each error naming where the flag was
//! set); `stages.rs` builds the load and the run stages from them.

mod flags;
mod stages;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use anyhow::{bail, Result};
use sojourn_core::plan::Plan;
use sojourn_core::workload::Phase;
pub use sojourn_session::share::{Recipe, WorkloadFile};

use super::folder::{FlagOrigin, Flags};
pub use flags::{suggestion, USED};
use flags::{Reader, DEFAULT_WORKLOADS, MAX_CLIENTS, UNSUPPORTED};
use stages::Stages;

/// One stage: the load, or one run of the staircase.
#[derive(Clone, Debug)]
pub struct StagePlan {
    pub phase: Phase,
    pub workload_name: String,
    pub workload_index: usize,
    pub threads_per_client: u64,
    /// Offered ops/s over all clients; `None` is closed loop.
    pub target_total: Option<f64>,
    /// One per client process.
    pub clients: Vec<Recipe>,
    /// PKB's per-stage metadata (`stage`, `workload_name`, ...).
    pub labels: BTreeMap<String, String>,
    /// The first client's plan: the workload and the tables that setting
    /// up the database needs, and how the summary is printed.
    pub plan: Plan,
}

/// One benchmark of a config, ready to run.
#[derive(Clone, Debug)]
pub struct BenchPlan {
    pub file: String,
    pub benchmark: String,
    /// The database URL as given (may hold a password: redact before
    /// printing).
    pub db_url: String,
    /// `google_bigtable_instance_name`: configs on one instance never run
    /// at once in unordered mode.
    pub instance: Option<String>,
    pub load: Option<StagePlan>,
    pub runs: Vec<StagePlan>,
    /// false: skip the load when the table already holds data.
    pub reload_database: bool,
    pub sleep_after_load: Duration,
    /// A stage whose operations fail more often than this fails.
    pub max_error_rate: f64,
    /// A load with any failed insert fails.
    pub fail_on_incomplete_loading: bool,
    /// What every result of this benchmark is labelled with: `metadata`,
    /// the benchmark name, and every flag sojourn does not use.
    pub labels: BTreeMap<String, String>,
    /// Flags sojourn does not use (kept as labels), with where they were set.
    pub unused: Vec<(String, FlagOrigin)>,
    /// Property names no one reads (from -p style parameters), for warnings.
    pub unknown_properties: Vec<String>,
}

/// What a benchmark is mapped with besides its flags.
pub struct MapContext<'a> {
    /// The suite folder: workload files are looked up here first.
    pub dir: &'a Path,
    pub suite: &'a str,
    pub file: &'a str,
    pub benchmark: &'a str,
    /// `--db`, which wins over `sojourn_db`.
    pub db: Option<&'a str>,
    /// Seed for stages whose parameters give none.
    pub seed: &'a mut dyn FnMut() -> u64,
}

/// Map one benchmark's merged flags.
pub fn map(flags: &Flags, ctx: &mut MapContext<'_>) -> Result<BenchPlan> {
    let r = Reader { flags };
    refuse_unsupported(&r)?;
    let db_url = database(&r, ctx)?;
    let vm_count = client_count(&r, &db_url)?;
    let max_error_rate = r.f64("ycsb_max_error_rate", 0.0, 1.0)?.unwrap_or(1.0);
    let fail_on_incomplete_loading = r.bool("ycsb_fail_on_incomplete_loading", false)?;
    let skip_load = r.bool("ycsb_skip_load_stage", false)?;
    let skip_run = r.bool("ycsb_skip_run_stage", false)?;
    let reload_database = r.bool("ycsb_reload_database", true)?;
    let sleep_after_load =
        Duration::from_secs(r.u64("ycsb_sleep_after_load_in_sec", 86_400)?.unwrap_or(0));
    check_choices(&r)?;
    let (labels, unused) = labels(&r, ctx, vm_count)?;
    let workload_names = match r.list("ycsb_workload_files") {
        v if v.is_empty() => DEFAULT_WORKLOADS.split(',').collect(),
        v => v,
    };
    let workloads: Vec<WorkloadFile> = workload_names
        .iter()
        .map(|w| flags::resolve_workload(ctx.dir, w, &r))
        .collect::<Result<_>>()?;
    let mut stages = Stages::new(&r, vm_count)?;
    let load = match skip_load {
        true => None,
        false => Some(stages.load(&workloads[0], ctx)?),
    };
    let runs = match skip_run {
        true => Vec::new(),
        false => stages.runs(&workloads, ctx)?,
    };
    Ok(BenchPlan {
        file: ctx.file.to_string(),
        benchmark: ctx.benchmark.to_string(),
        db_url,
        instance: r.value("google_bigtable_instance_name").map(str::to_string),
        load,
        runs,
        reload_database,
        sleep_after_load,
        max_error_rate,
        fail_on_incomplete_loading,
        labels,
        unused,
        unknown_properties: stages.unknown.into_iter().collect(),
    })
}

/// PKB's modes that change what runs, refused when switched on.
fn refuse_unsupported(r: &Reader<'_>) -> Result<()> {
    for (name, instead) in UNSUPPORTED {
        let on = match r.value(name) {
            None => false,
            Some(v) => !matches!(v.to_ascii_lowercase().as_str(), "false" | "0" | "no"),
        };
        if on {
            bail!(
                "{}: {name} is not supported by sojourn suites; instead: {instead}",
                r.origin(name)
            );
        }
    }
    Ok(())
}

/// The database URL: `--db`, else `sojourn_db` (a path relative to the
/// file that set it), else the embedded SQLite.
fn database(r: &Reader<'_>, ctx: &MapContext<'_>) -> Result<String> {
    Ok(match (ctx.db, r.get("sojourn_db")) {
        (Some(db), _) => db.to_string(),
        (None, Some(f)) if f.value.trim().is_empty() => {
            return Err(r.invalid(
                "sojourn_db",
                "a database URL such as sqlite:PATH or \"null:\" (quoted in YAML: a bare null is no value)",
            ))
        }
        (None, Some(f)) => flags::relative_to_folder(f.value.trim(), &f.origin, ctx.dir),
        (None, None) => "sqlite".to_string(),
    })
}

/// How many client processes (PKB's client VMs) each stage starts.
fn client_count(r: &Reader<'_>, db_url: &str) -> Result<u64> {
    let vm_count = match r.u64("num_vms", MAX_CLIENTS)? {
        Some(n) => n,
        None => r.u64("ycsb_client_vms", MAX_CLIENTS)?.unwrap_or(1),
    };
    if vm_count == 0 {
        return Err(r.invalid(
            r.vm_flag(),
            &format!("a whole number from 1 to {MAX_CLIENTS}"),
        ));
    }
    if vm_count > 1 && db_url.trim().to_ascii_lowercase().starts_with("memory") {
        bail!(
            "{}: {vm_count} client processes cannot share the in-process memory: database; use a \
             database the processes share (sqlite:PATH, null:, a server), or num_vms=1",
            r.origin("num_vms")
        );
    }
    Ok(vm_count)
}

/// The flags whose values are one of a few words.
fn check_choices(r: &Reader<'_>) -> Result<()> {
    if let Some(t) = r.value("ycsb_measurement_type") {
        if !["hdrhistogram", "histogram", "timeseries"].contains(&t.to_ascii_lowercase().as_str()) {
            return Err(r.invalid(
                "ycsb_measurement_type",
                "hdrhistogram, histogram or timeseries (sojourn always keeps HDR histograms)",
            ));
        }
    }
    if let Some(m) = r.value("ycsb_measurement_interval") {
        if !["op", "intended", "both"].contains(&m) {
            return Err(r.invalid("ycsb_measurement_interval", "op, intended or both"));
        }
    }
    if let Some(d) = r.value("ycsb_requestdistribution") {
        if !["uniform", "zipfian", "latest"].contains(&d) {
            return Err(r.invalid("ycsb_requestdistribution", "uniform, zipfian or latest"));
        }
    }
    Ok(())
}

/// What every result of the benchmark is labelled with (`metadata`, the
/// names, every flag sojourn does not use), and those unused flags.
#[allow(clippy::type_complexity)]
fn labels(
    r: &Reader<'_>,
    ctx: &MapContext<'_>,
    vm_count: u64,
) -> Result<(BTreeMap<String, String>, Vec<(String, FlagOrigin)>)> {
    let mut labels = flags::metadata(r)?;
    let mut unused = Vec::new();
    for (name, flag) in r.flags {
        let known = USED.contains(&name.as_str()) || UNSUPPORTED.iter().any(|(n, _)| n == name);
        if !known {
            unused.push((name.clone(), flag.origin.clone()));
            labels
                .entry(name.clone())
                .or_insert_with(|| flag.value.clone());
        }
    }
    labels.insert("benchmark".into(), ctx.benchmark.to_string());
    labels.insert("suite".into(), ctx.suite.to_string());
    labels.insert("suite_config".into(), ctx.file.to_string());
    labels.insert("vm_count".into(), vm_count.to_string());
    labels.insert("num_vms".into(), vm_count.to_string());
    Ok((labels, unused))
}
